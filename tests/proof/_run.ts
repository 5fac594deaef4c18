/**
 * A sealed run on a store, for the ledger tests: three calls (READY with evidence, ERROR with a
 * raw response, READY without evidence) through a boundary with a ledger key, then the end.
 *
 * @module
 */
import {
  defineTool,
  generateLedgerKeys,
  type RunArchive,
  type Store,
  ToolBoundary,
  toolError,
} from "../../src/mod.ts";
import { uniqueId } from "../support/stores.ts";

/** The tools of the run: `lookup` finds `key` "a", fails on "boom". */
export const lookup = defineTool({
  name: "lookup",
  readOnly: true,
  execute: (input: { key?: unknown }) =>
    input.key === "boom"
      ? toolError({ failed: true, note: 'ünïcode \u2028 "quoted"' })
      : { found: input.key === "a", key: input.key, nested: { n: 1.5e-7, list: [1, -0, 2e21] } },
  project: (raw: { found: boolean; key: unknown }) => ({
    evidence: raw.found ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
    scope: `the table, key ${String(raw.key)}`,
    content: { found: raw.found },
  }),
});

/** The calls, in begin order. */
export const CALLS = [
  { toolCallId: "call_a", key: "a" },
  { toolCallId: "call_boom", key: "boom" },
  { toolCallId: "call_b", key: "b" },
] as const;

/** Keys shared by every test of a file (generating is cheap, but one pair is enough). */
export const keys = await generateLedgerKeys();
/** Another key pair: an attacker's. */
export const otherKeys = await generateLedgerKeys();

/**
 * Runs the calls on `store` and, unless `end` is false, ends the run (stamped by `timestamp`,
 * written to `archive`).
 */
export async function sealedRun(
  store: Store,
  options: {
    end?: boolean;
    ledgerKey?: JsonWebKey;
    timestamp?: (digest: Uint8Array) => Promise<Uint8Array>;
    archive?: RunArchive;
  } = {},
): Promise<{ boundary: ToolBoundary; runId: string }> {
  const boundary = new ToolBoundary({
    store,
    tools: [lookup],
    ledgerKey: options.ledgerKey ?? keys.privateKey,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
    ...(options.archive ? { archive: options.archive } : {}),
  });
  const run = await boundary.startRun({ runId: uniqueId("run") });
  for (const { toolCallId, key } of CALLS) {
    await boundary.invoke(run, {
      toolCallId,
      runId: run.runId,
      toolName: "lookup",
      input: { key },
    });
  }
  if (options.end !== false) await boundary.endRun(run);
  return { boundary, runId: run.runId };
}

/** A value that differs from `value`, of the same JSON type where one exists. */
export function changed(value: unknown): unknown {
  if (typeof value === "string") return value + "x";
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (value === null) return "x";
  if (Array.isArray(value)) return [...value, 1];
  return { ...(value as object), extra: 1 };
}
