/**
 * Deterministic tools for the model-based and fault tests: one per outcome a call can have,
 * each fast (timeouts of a few ms), each counting its executor and projector calls per canonical
 * key, each carrying the canary secret in its raw data or its exception.
 *
 * @module
 */
import * as v from "valibot";
import { type AnyToolDefinition, defineTool, type ErrorCode } from "../../src/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";

/** What a tool does, as the model knows it. */
export type ToolBehaviour =
  | { kind: "READY"; evidence: "EVIDENCE_FOUND" | "NO_EVIDENCE" }
  | { kind: "ERROR"; code: ErrorCode; rawKept: boolean }
  | { kind: "NOT_READ_ONLY" }
  | { kind: "CLOCK" }
  | { kind: "COSTED"; cost: number; spent: number }
  | { kind: "BAD_COST" };

/** What `t_cost` reserves and settles. */
export const T_COST = { cost: 3, spent: 2 } as const;

/** The model tools by name, with what each must do. */
export const MODEL_TOOLS: Readonly<Record<string, ToolBehaviour>> = {
  t_found: { kind: "READY", evidence: "EVIDENCE_FOUND" },
  t_none: { kind: "READY", evidence: "NO_EVIDENCE" },
  t_schema: { kind: "READY", evidence: "EVIDENCE_FOUND" },
  t_budget: { kind: "READY", evidence: "NO_EVIDENCE" },
  t_throw: { kind: "ERROR", code: "EXECUTION_FAILED", rawKept: false },
  t_timeout: { kind: "ERROR", code: "TOOL_TIMEOUT", rawKept: false },
  t_not_json: { kind: "ERROR", code: "SERIALIZATION_FAILED", rawKept: false },
  t_raw_big: { kind: "ERROR", code: "RESULT_TOO_LARGE", rawKept: false },
  t_proj_throw: { kind: "ERROR", code: "PROJECTION_FAILED", rawKept: true },
  t_proj_invalid: { kind: "ERROR", code: "INVALID_PROJECTION", rawKept: true },
  t_proj_big: { kind: "ERROR", code: "RESULT_TOO_LARGE", rawKept: true },
  t_proj_timeout: { kind: "ERROR", code: "TOOL_TIMEOUT", rawKept: true },
  t_writable: { kind: "NOT_READ_ONLY" },
  // Moves the fake clock forward by input.ms while it runs, then finds evidence.
  t_clock: { kind: "CLOCK" },
  // Reserves T_COST.cost of the run's cost budget and settles T_COST.spent.
  t_cost: { kind: "COSTED", ...T_COST },
  // Its cost function throws: INVALID_COST.
  t_cost_bad: { kind: "BAD_COST" },
};

/** The per-tool budget `t_budget` declares. */
export const T_BUDGET = 2;

/** Limits for model systems: small, so the size cases stay cheap. */
export const MODEL_LIMITS = {
  requestBytes: 512,
  rawBytes: 2048,
  recordBytes: 8192,
  agentResultBytes: 512,
  factCount: 4,
  factBytes: 1_000_000,
  inputDepth: 16,
} as const;

/** Executor and projector calls per canonical key `runId/toolCallId`. */
export interface ToolCounters {
  execute: Map<string, number>;
  project: Map<string, number>;
}

/**
 * Makes the model tools.
 *
 * @param counters Where calls are counted.
 * @param advanceClock Moves the fake clock (for `t_clock`); a real-time system sleeps instead.
 * @returns The tools.
 */
export function modelTools(
  counters: ToolCounters,
  advanceClock: (ms: number) => void | Promise<void>,
): AnyToolDefinition[] {
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  const raw = (input: Record<string, unknown>, hits: string[]) => ({
    q: typeof input.q === "string" ? input.q : "",
    hits,
    credential: CANARY_SECRET,
  });
  const never = (signal: AbortSignal) =>
    new Promise<never>((_resolve, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  const tool = (
    name: string,
    execute: (input: Record<string, unknown>, signal: AbortSignal) => unknown,
    project: (raw: unknown) => unknown,
    extra: Partial<AnyToolDefinition> = {},
  ): AnyToolDefinition =>
    defineTool({
      name,
      readOnly: true,
      ...extra,
      execute: (input, ctx) => {
        bump(counters.execute, `${ctx.run.runId}/${ctx.toolCallId}`);
        if (name === "t_cost") ctx.settle(T_COST.spent);
        return execute(input, ctx.signal);
      },
      project: (value, ctx) => {
        bump(counters.project, `${ctx.run.runId}/${ctx.toolCallId}`);
        return project(value) as never;
      },
    });
  const found = (value: unknown) => {
    const r = value as { q: string; hits: string[] };
    return {
      evidence: r.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
      scope: `model index, query "${r.q}"`,
      content: r.hits,
    };
  };
  return [
    tool("t_found", (i) => raw(i, ["hit"]), found),
    tool("t_none", (i) => raw(i, []), found),
    tool("t_schema", (i) => raw(i, ["typed hit"]), found, {
      input: v.object({ q: v.string() }),
    }),
    tool("t_budget", (i) => raw(i, []), found, { budget: T_BUDGET }),
    tool("t_throw", () => {
      throw new Error(`backend said ${CANARY_SECRET}`);
    }, found),
    tool("t_timeout", (_i, signal) => never(signal), found, { timeoutMs: 5 }),
    tool("t_not_json", () => ({ at: new Date(0), credential: CANARY_SECRET }), found),
    tool("t_raw_big", () => ({ blob: "r".repeat(4096), credential: CANARY_SECRET }), found),
    tool("t_proj_throw", (i) => raw(i, ["x"]), () => {
      throw new Error(`projector saw ${CANARY_SECRET}`);
    }),
    tool("t_proj_invalid", (i) => raw(i, ["x"]), () => ({
      evidence: "ERROR",
      scope: "model",
      content: CANARY_SECRET,
    })),
    tool("t_proj_big", (i) => raw(i, ["x"]), () => ({
      evidence: "EVIDENCE_FOUND",
      scope: "model",
      content: "p".repeat(1024),
    })),
    tool("t_proj_timeout", (i) => raw(i, ["x"]), () => new Promise(() => {}), { timeoutMs: 5 }),
    tool("t_writable", (i) => raw(i, ["w"]), found, { readOnly: false }),
    tool("t_cost", (i) => raw(i, ["priced"]), found, { cost: T_COST.cost }),
    tool("t_cost_bad", (i) => raw(i, ["unpriced"]), found, {
      cost: () => {
        throw new Error(`no price for ${CANARY_SECRET}`);
      },
    }),
    tool("t_clock", async (i) => {
      await advanceClock(typeof i.ms === "number" ? i.ms : 0);
      return raw(i, ["clock"]);
    }, found),
  ];
}
