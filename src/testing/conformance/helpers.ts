/**
 * Steps and assertions the conformance cases share.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { ErrorCode } from "../../core/errors.ts";
import type { BeginRequest, CompleteOutcome, FactRow, Store } from "../../core/store.ts";
import type { BoundaryResult, RecordProof } from "../../core/types.ts";
import { CANARY_SECRET } from "../fakes.ts";
import { type BoundaryContext, type StoreContext, SUITE_LIMITS, uniqueId } from "./context.ts";

/** The READY branch of {@linkcode CompleteOutcome}. */
export type ReadyOutcome = Extract<CompleteOutcome, { status: "READY" }>;

/** A READY outcome with evidence. */
export const READY: ReadyOutcome = {
  status: "READY",
  evidence: "EVIDENCE_FOUND",
  rawJson: '{"hits":["a"]}',
  agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"fake","content":["a"]}',
};

/** A proof of the right shape (a store checks the shape only, never the signature). */
export function sampleProof(mark: string, keyId = "key-1"): RecordProof {
  const hash = (mark + "h".repeat(43)).slice(0, 43);
  const sig = (mark + "s".repeat(86)).slice(0, 86);
  return { hash, sig, keyId };
}

/** A READY outcome without evidence. */
export const NO_EVIDENCE: ReadyOutcome = {
  status: "READY",
  evidence: "NO_EVIDENCE",
  rawJson: '{"hits":[]}',
  agentResultJson: '{"evidence":"NO_EVIDENCE","scope":"fake, query q","content":[]}',
};

/** An ERROR outcome. */
export const FAILED: CompleteOutcome = {
  status: "ERROR",
  errorCode: "EXECUTION_FAILED",
  rawJson: null,
};

/** Starts a run directly on the store (10 minutes) and returns its ID. */
export async function storeRun(
  store: Store,
  clock: () => number,
  budget: { calls: number; perTool: Record<string, number>; cost?: number } = {
    calls: 100,
    perTool: {},
  },
): Promise<string> {
  const runId = uniqueId("run");
  const started = await store.startRun({
    runId,
    deadline: clock() + 600_000,
    budget,
    ttlMs: 1_200_000,
    attemptId: uniqueId("start"),
    now: clock(),
  });
  assert.equal(started.ok, true);
  return runId;
}

/**
 * The `requestDigest` of `fake_success` with `{"query":"disk"}`, the request of
 * {@linkcode beginRequest}.
 */
export const DISK_DIGEST = "LUR5fCJZ0OPLNvrVGSJP44YP3vPatmC45YTK-ArTHB8";

/** A `requestDigest` of some other request. */
export const OTHER_DIGEST = "other-request-digest";

/** A begin of `fake_success` with a fresh attempt ID and a one-minute TTL, unless told. */
export function beginRequest(
  runId: string,
  toolCallId: string,
  clock: () => number,
  over: Partial<BeginRequest> = {},
): BeginRequest {
  return {
    runId,
    toolCallId,
    toolName: "fake_success",
    requestJson: '{"query":"disk"}',
    requestDigest: DISK_DIGEST,
    attemptId: uniqueId("attempt"),
    ttlMs: 60_000,
    now: clock(),
    ...over,
  };
}

/** Begins a record, completes it with `outcome` unless `null`, and returns its attempt ID. */
export async function beginAndComplete(
  ctx: StoreContext,
  runId: string,
  toolCallId: string,
  outcome: CompleteOutcome | null,
  ttlMs = 60_000,
): Promise<string> {
  const request = beginRequest(runId, toolCallId, ctx.clock, { ttlMs });
  const begun = await ctx.store.begin(request);
  assert.equal(begun.ok, true, `begin ${toolCallId}`);
  if (outcome !== null) {
    const done = await ctx.store.complete({
      runId,
      toolCallId,
      attemptId: request.attemptId,
      outcome,
      now: ctx.clock(),
    });
    assert.equal(done.ok, true, `complete ${toolCallId}`);
  }
  return request.attemptId;
}

/** Ends the run on the store and returns its progress index. */
export async function endRunIndex(
  ctx: StoreContext,
  runId: string,
): Promise<{ toolCallIds: string[] }> {
  const ended = await ctx.store.endRun({ runId, now: ctx.clock() });
  assert.ok(ended.ok);
  return { toolCallIds: ended.toolCallIds };
}

/**
 * Two runs with one record in every state an indexed identity can be in: READY, PROJECTING,
 * ERROR, expired (after the clock moved past its TTL), in the other run, and missing.
 *
 * @returns The run ID and the identities, in the order they were created.
 */
export async function seedIdentities(
  ctx: StoreContext,
): Promise<{ runId: string; identities: { runId: string; toolCallId: string }[] }> {
  const { store, clock } = ctx;
  const runId = await storeRun(store, clock);
  const otherRun = await storeRun(store, clock);
  await beginAndComplete(ctx, runId, "call_ready", READY);
  await beginAndComplete(ctx, runId, "call_projecting", null);
  await beginAndComplete(ctx, runId, "call_error", FAILED);
  await beginAndComplete(ctx, runId, "call_expiring", NO_EVIDENCE, ctx.ttlMs);
  await beginAndComplete(ctx, otherRun, "call_foreign", READY);
  await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
  const identities = [
    { runId, toolCallId: "call_missing" },
    { runId, toolCallId: "call_expiring" },
    { runId: otherRun, toolCallId: "call_foreign" },
    { runId, toolCallId: "call_projecting" },
    { runId, toolCallId: "call_error" },
    { runId, toolCallId: "call_ready" },
  ];
  return { runId, identities };
}

/** Reads the fact rows of the given calls of one run, with caps no case reaches. */
export async function readRows(
  ctx: StoreContext,
  runId: string,
  toolCallIds: readonly string[],
): Promise<FactRow[]> {
  const identities = toolCallIds.map((toolCallId) => ({ runId, toolCallId }));
  const { rows } = await ctx.store.readFacts({
    runId,
    identities,
    maxFacts: 10,
    maxBytes: 100_000,
  });
  return rows;
}

/** A fact row is the record's own agent result, with nothing of its raw response or request. */
export async function assertRowOfRecord(ctx: StoreContext, row: FactRow): Promise<void> {
  assert.ok(!JSON.stringify(row).includes(CANARY_SECRET), "no raw response in a fact row");
  assert.equal("rawJson" in row || "requestJson" in row, false);
  const record = await ctx.store.get(row.runId, row.toolCallId);
  assert.equal(row.agentResultJson, record?.agentResultJson, "facts resolve the record itself");
  assert.equal(row.updatedAt, record?.updatedAt);
}

/** Asserts an ERROR result with exactly `code`. */
export function assertError(result: BoundaryResult, code: ErrorCode, message = ""): void {
  assert.equal(
    result.status,
    "ERROR",
    `${message} expected ${code}, got ${JSON.stringify(result)}`,
  );
  if (result.status === "ERROR") assert.equal(result.code, code, message);
}

/** Nothing agent-facing may carry the canary, raw fields, or exception text. */
export function assertSafe(value: unknown): void {
  const text = JSON.stringify(value);
  assert.ok(!text.includes(CANARY_SECRET), `leaked the canary: ${text.slice(0, 200)}`);
  assert.ok(!text.includes("credential"), "leaked a raw field");
  assert.ok(!/Error:|\n\s+at /.test(text), "leaked exception text");
}

/** Asserts the store holds no record for the key. */
export async function assertAbsent(
  ctx: StoreContext,
  runId: string,
  toolCallId: string,
): Promise<void> {
  assert.equal(await ctx.store.get(runId, toolCallId), null, `record ${toolCallId} must not exist`);
}

/** How often the fake tool `name` has run. */
export function executed(ctx: BoundaryContext, name: string): number {
  return ctx.kit.counts.execute[name] ?? 0;
}

/** How often the fake tools have run, all of them. */
export function executedInAll(ctx: BoundaryContext): number {
  return Object.values(ctx.kit.counts.execute).reduce((a, b) => a + b, 0);
}

/**
 * A boundary with one tool, `wide_raw`, whose raw response is under the suite's raw limit in
 * UTF-16 units and over it in UTF-8 bytes.
 */
export function wideRawBoundary(
  ctx: BoundaryContext,
): { boundary: ToolBoundary; projected: () => number } {
  let projected = 0;
  const rawLimit = SUITE_LIMITS.rawBytes!;
  // Each "é" is one UTF-16 unit but two UTF-8 bytes: under the limit by length, over by bytes.
  const text = "é".repeat(Math.floor(rawLimit / 2) + 10);
  const boundary = new ToolBoundary({
    store: ctx.store,
    clock: ctx.clock,
    limits: SUITE_LIMITS,
    tools: [{
      name: "wide_raw",
      readOnly: true,
      execute: () => text,
      project: () => {
        projected++;
        return { evidence: "EVIDENCE_FOUND", scope: "wide", content: null };
      },
    }],
  });
  return { boundary, projected: () => projected };
}

/** Wraps a store so the named operations throw an error carrying the canary. */
export function failingStore(store: Store, failing: ReadonlySet<keyof Store>): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (failing.has(property as keyof Store)) {
        return () => Promise.reject(new Error(`connection to redis://:${CANARY_SECRET}@db failed`));
      }
      return value.bind(target);
    },
  });
}
