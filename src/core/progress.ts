/**
 * The run progress projector's last step: turning fact rows read from a store into bounded
 * observed facts, re-checking every rule the store was asked to apply.
 *
 * @module
 */
import { snapshotJson, type SnapshotProblem } from "./json.ts";
import type { FactRow } from "./store.ts";
import type { ObservedFact, Projection } from "./types.ts";
import { utf8ByteLength } from "./utf8.ts";

/** Caps on what `endRun` returns. */
export interface FactCaps {
  /** Facts at most. */
  maxFacts: number;
  /** Agent-result bytes at most, summed over the facts. */
  maxBytes: number;
}

/**
 * Turns rows into facts, in order. A row is accepted only when it is READY, owned by `runId`,
 * has evidence EVIDENCE_FOUND or NO_EVIDENCE, and its agent result parses to a valid projection
 * with the same evidence; anything else is dropped, whatever the store said. Stops at the caps.
 *
 * @param runId The run being ended.
 * @param rows Rows from `Store.readFacts`, in execution order.
 * @param caps Count and byte caps.
 * @returns The facts and how many valid rows the caps left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rowsToFacts } from "./progress.ts";
 * const { facts } = rowsToFacts("run-1", [{
 *   runId: "run-1", toolCallId: "call_1", toolName: "search", status: "READY",
 *   evidence: "NO_EVIDENCE", updatedAt: 0,
 *   agentResultJson: '{"evidence":"NO_EVIDENCE","scope":"logs of api, last 24h","content":[]}',
 * }], { maxFacts: 10, maxBytes: 1024 });
 * assert.equal(facts.length, 1);
 * assert.equal(facts[0]?.kind, "NEGATIVE_OBSERVATION");
 * assert.equal(facts[0]?.scope, "logs of api, last 24h");
 * ```
 */
export function rowsToFacts(
  runId: string,
  rows: readonly FactRow[],
  caps: FactCaps,
): { facts: ObservedFact[]; omitted: number } {
  const facts: ObservedFact[] = [];
  let bytes = 0;
  let omitted = 0;
  for (const row of rows) {
    if (row.runId !== runId || row.status !== "READY") continue;
    if (row.evidence !== "EVIDENCE_FOUND" && row.evidence !== "NO_EVIDENCE") continue;
    const projection = parseProjection(row.agentResultJson);
    if (projection === null || projection.evidence !== row.evidence) continue;
    const size = utf8ByteLength(row.agentResultJson);
    if (facts.length >= caps.maxFacts || bytes + size > caps.maxBytes) {
      omitted++;
      continue;
    }
    bytes += size;
    facts.push({
      toolCallId: row.toolCallId,
      toolName: row.toolName,
      kind: projection.evidence === "EVIDENCE_FOUND" ? "EVIDENCE" : "NEGATIVE_OBSERVATION",
      evidence: projection.evidence,
      scope: projection.scope,
      content: projection.content,
      observedAt: row.updatedAt,
    });
  }
  return { facts, omitted };
}

/**
 * Checks a projector's return value: exactly `{ evidence, scope, content }`, evidence
 * EVIDENCE_FOUND or NO_EVIDENCE, a non-empty scope, and plain JSON content. The value is read
 * once, by the rules of `snapshotJson`, and the checks run on that copy.
 *
 * @param value What the projector returned.
 * @param maxDepth The deepest nesting accepted in `content`.
 * @returns A fresh copy of the projection, or `null` when it is not valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateProjection } from "./progress.ts";
 * assert.equal(validateProjection({ evidence: "ERROR", scope: "x", content: 1 }, 64), null);
 * const ok = { evidence: "NO_EVIDENCE", scope: "logs, last hour", content: [] };
 * assert.deepEqual(validateProjection(ok, 64), ok);
 * ```
 */
export function validateProjection(value: unknown, maxDepth: number): Projection | null {
  const snapshot = snapshotProjection(value, maxDepth);
  return "problem" in snapshot ? null : snapshot.projection;
}

/**
 * Reads a projection once and checks it (as {@linkcode validateProjection}); also returns its
 * JSON text, with the keys in the order `evidence, scope, content`. Internal to the boundary.
 *
 * @param value What the projector returned.
 * @param maxDepth The deepest nesting accepted in `content`.
 * @param maxLength The longest JSON text accepted, in UTF-16 units (see `snapshotJson`).
 * @returns The checked copy and its text, or why it was refused (`INVALID` for a bad shape).
 */
export function snapshotProjection(
  value: unknown,
  maxDepth: number,
  maxLength?: number,
):
  | { projection: Projection; json: string }
  | { problem: SnapshotProblem | "INVALID"; error?: unknown } {
  const snapshot = snapshotJson(value, maxDepth + 1, maxLength);
  if ("problem" in snapshot) return snapshot;
  const copy = snapshot.value;
  if (typeof copy !== "object" || copy === null || Array.isArray(copy)) return INVALID;
  const keys = Object.keys(copy);
  if (
    keys.length !== 3 || !keys.includes("evidence") || !keys.includes("scope") ||
    !keys.includes("content")
  ) return INVALID;
  const { evidence, scope, content } = copy;
  if (evidence !== "EVIDENCE_FOUND" && evidence !== "NO_EVIDENCE") return INVALID;
  if (typeof scope !== "string" || scope.trim().length === 0) return INVALID;
  const projection = { evidence, scope, content } as Projection;
  const inOrder = keys[0] === "evidence" && keys[1] === "scope";
  return { projection, json: inOrder ? snapshot.json : JSON.stringify(projection) };
}

const INVALID = { problem: "INVALID" } as const;

function parseProjection(text: string): Projection | null {
  try {
    return validateProjection(JSON.parse(text), Number.POSITIVE_INFINITY);
  } catch {
    return null;
  }
}
