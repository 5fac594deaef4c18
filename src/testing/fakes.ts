/**
 * Fake tools and projectors that cover every outcome of a call, for the conformance suite and
 * for tests of your own harness.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "../core/json.ts";
import { defineTool, type ProjectContext, type ToolDefinition } from "../core/tool.ts";
import type { Projection } from "../core/types.ts";

/**
 * A canary secret the fakes put into raw data and exception messages. No agent-facing output
 * may ever contain it.
 */
export const CANARY_SECRET = "canary-sk-7f3c9e1d-never-shown-to-agents";

/** A raw search response as the fake search tools return it. */
export interface FakeSearchRaw {
  /** Any other field. */
  [key: string]: JsonValue;
  /** The query searched. */
  query: string;
  /** Matching lines. */
  hits: string[];
  /** A credential that must stay harness-only. */
  credential: string;
}

/**
 * Fake projectors, exported so harness tests can reuse them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fakeProjectors } from "@tool-boundary/core/testing";
 * const p = fakeProjectors.search({ query: "q", hits: [], credential: "x" });
 * assert.deepEqual(p, { evidence: "NO_EVIDENCE", scope: 'fake index, query "q"', content: [] });
 * ```
 */
export const fakeProjectors: {
  /** EVIDENCE_FOUND with the hits, or NO_EVIDENCE scoped to the query. */
  search(raw: FakeSearchRaw): Projection;
  /** Throws an error whose message carries {@linkcode CANARY_SECRET}. */
  throwing(raw: unknown): Projection;
  /** Claims evidence ERROR, which no projector may return. */
  invalidEvidence(raw: unknown): Projection;
  /** Returns a content of `input.bytes` ASCII bytes (default 64 KiB). */
  oversized(raw: unknown, ctx: ProjectContext): Projection;
} = {
  /** EVIDENCE_FOUND with the hits, or NO_EVIDENCE scoped to the query. */
  search(raw: FakeSearchRaw): Projection {
    return {
      evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
      scope: `fake index, query "${raw.query}"`,
      content: raw.hits,
    };
  },
  /** Throws an error whose message carries {@linkcode CANARY_SECRET}. */
  throwing(_raw: unknown): Projection {
    throw new Error(`projector crashed near ${CANARY_SECRET}`);
  },
  /** Claims evidence ERROR, which no projector may return. */
  invalidEvidence(_raw: unknown): Projection {
    return { evidence: "ERROR", scope: "fake", content: [] } as unknown as Projection;
  },
  /** Returns a content of `bytes` ASCII bytes: too large for any small agent limit. */
  oversized(_raw: unknown, ctx: ProjectContext): Projection {
    const bytes = typeof ctx.input.bytes === "number" ? ctx.input.bytes : 64 * 1024;
    return { evidence: "EVIDENCE_FOUND", scope: "fake", content: "x".repeat(bytes) };
  },
};

/** Per-tool counters of executor and projector calls. */
export interface FakeCounts {
  /** Executor calls by tool name. */
  execute: Record<string, number>;
  /** Projector calls by tool name. */
  project: Record<string, number>;
}

/** The fake tools, by role, and their call counters. */
export interface FakeToolkit {
  /** Every fake tool, for `new ToolBoundary({ tools })`. */
  tools: ToolDefinition<JsonObject, JsonValue>[];
  /** Executor and projector calls so far. */
  counts: FakeCounts;
  /** Name of each fake tool by role. */
  names: {
    success: string;
    noEvidence: string;
    throwing: string;
    slow: string;
    oversized: string;
    invalidEvidence: string;
    secretError: string;
    oversizedProjection: string;
    notJson: string;
    writable: string;
  };
}

/**
 * Creates the fake tools with fresh counters:
 * - `fake_success`: finds evidence (raw carries {@linkcode CANARY_SECRET} as a credential);
 * - `fake_no_evidence`: finds nothing: a scoped NO_EVIDENCE;
 * - `fake_throwing`: the executor throws an error carrying the canary;
 * - `fake_slow`: waits `input.ms` (default 5000) unless aborted; timeout 100 ms;
 * - `fake_oversized`: returns `input.bytes` (default 2 MiB) of raw data;
 * - `fake_invalid_evidence`: the projector claims evidence ERROR;
 * - `fake_secret_error`: the projector throws an error carrying the canary;
 * - `fake_oversized_projection`: the projector returns `input.bytes` (default 64 KiB) of content;
 * - `fake_not_json`: returns a value JSON cannot carry (a Date inside);
 * - `fake_writable`: not read-only, so the boundary refuses it.
 *
 * @returns The toolkit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createFakeToolkit } from "@tool-boundary/core/testing";
 * import { ToolBoundary } from "@tool-boundary/core";
 * const kit = createFakeToolkit();
 * const boundary = new ToolBoundary({ tools: kit.tools });
 * const run = await boundary.startRun({ ttlMs: 10_000 });
 * const result = await boundary.invoke(run, {
 *   toolCallId: "call_1", runId: run.runId, toolName: kit.names.noEvidence, input: { query: "q" },
 * });
 * assert.equal(result.status, "READY");
 * assert.equal(kit.counts.execute[kit.names.noEvidence], 1);
 * ```
 */
export function createFakeToolkit(): FakeToolkit {
  const counts: FakeCounts = { execute: {}, project: {} };
  const executed = (name: string) => {
    counts.execute[name] = (counts.execute[name] ?? 0) + 1;
  };
  const projected = (name: string) => {
    counts.project[name] = (counts.project[name] ?? 0) + 1;
  };
  const make = (
    name: string,
    execute: (input: JsonObject, signal: AbortSignal) => unknown,
    project: (raw: never, ctx: ProjectContext) => Projection,
    extra: { readOnly?: boolean; timeoutMs?: number } = {},
  ): ToolDefinition<JsonObject, JsonValue> =>
    defineTool<JsonObject, JsonValue>({
      name,
      description: `Fake tool ${name}`,
      readOnly: extra.readOnly ?? true,
      ...(extra.timeoutMs === undefined ? {} : { timeoutMs: extra.timeoutMs }),
      execute: (input, ctx) => {
        executed(name);
        return execute(input, ctx.signal) as JsonValue;
      },
      project: (raw, ctx) => {
        projected(name);
        return project(raw as never, ctx);
      },
    });
  const search = (input: JsonObject, hits: string[]): FakeSearchRaw => ({
    query: typeof input.query === "string" ? input.query : "",
    hits,
    credential: CANARY_SECRET,
  });
  const names = {
    success: "fake_success",
    noEvidence: "fake_no_evidence",
    throwing: "fake_throwing",
    slow: "fake_slow",
    oversized: "fake_oversized",
    invalidEvidence: "fake_invalid_evidence",
    secretError: "fake_secret_error",
    oversizedProjection: "fake_oversized_projection",
    notJson: "fake_not_json",
    writable: "fake_writable",
  };
  const tools = [
    make(
      names.success,
      (i) => search(i, ["line 1: match", "line 2: match"]),
      fakeProjectors.search,
    ),
    make(names.noEvidence, (i) => search(i, []), fakeProjectors.search),
    make(names.throwing, () => {
      throw new Error(`backend refused credential ${CANARY_SECRET}`);
    }, fakeProjectors.search),
    make(
      names.slow,
      (input, signal) =>
        new Promise((resolve, reject) => {
          const ms = typeof input.ms === "number" ? input.ms : 5_000;
          const timer = setTimeout(() => resolve(search(input, ["slow match"])), ms);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(signal.reason);
          }, { once: true });
        }),
      fakeProjectors.search,
      { timeoutMs: 100 },
    ),
    make(names.oversized, (input) => ({
      credential: CANARY_SECRET,
      blob: "r".repeat(typeof input.bytes === "number" ? input.bytes : 2 * 1024 * 1024),
    }), fakeProjectors.search),
    make(names.invalidEvidence, (i) => search(i, ["x"]), fakeProjectors.invalidEvidence),
    make(names.secretError, (i) => search(i, ["x"]), fakeProjectors.throwing),
    make(names.oversizedProjection, (i) => search(i, ["x"]), fakeProjectors.oversized),
    make(
      names.notJson,
      () => ({ at: new Date(0), credential: CANARY_SECRET }),
      fakeProjectors.search,
    ),
    make(names.writable, (i) => search(i, ["written"]), fakeProjectors.search, { readOnly: false }),
  ];
  return { tools, counts, names };
}
