/**
 * `ToolBoundary`: the fail-closed boundary around every tool call. The class is a facade: each
 * method hands its work to one named operation, the call path to the steps of `./steps/`
 * (`invoke` and `recall`), the run-level operations to `./run/` (one file per method).
 *
 * @module
 */
import type { Limits } from "./limits.ts";
import type { InvokeOptions, StartRunOptions, ToolBoundaryOptions } from "./options.ts";
import { createSetup, type Setup } from "./setup.ts";
import type { CallSummary, ListRunsRequest, RunsPage, Store } from "./store.ts";
import { type AnyToolDefinition, describeTool, type ToolDescription } from "./tool.ts";
import type {
  BoundaryResult,
  CanonicalRecord,
  Citation,
  ObservedFact,
  RunContext,
  RunEnd,
  RunRef,
  ToolCallEnvelope,
} from "./types.ts";
import { checkCitations } from "./run/check_citations.ts";
import { endRun } from "./run/end_run.ts";
import { exportRun } from "./run/export_run.ts";
import type { RunBundle } from "./ledger.ts";
import { getRun } from "./run/get_run.ts";
import { inspect } from "./run/inspect.ts";
import { listCalls } from "./run/list_calls.ts";
import { listRuns } from "./run/list_runs.ts";
import { startRun } from "./run/start_run.ts";
import { invoke } from "./steps/invoke.ts";
import { recall } from "./steps/recall.ts";

/**
 * The boundary. Preflight, one atomic begin, the tool, byte limits, the projector, one atomic
 * complete; the agent only ever gets a bounded result or a safe error code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 *
 * const lookup = defineTool({
 *   name: "lookup",
 *   readOnly: true,
 *   execute: (input) => ({ found: input.key === "a", secret: "raw stays harness-only" }),
 *   project: (raw) => ({
 *     evidence: raw.found ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
 *     scope: "the lookup table",
 *     content: { found: raw.found },
 *   }),
 * });
 * const boundary = new ToolBoundary({ tools: [lookup] });
 * const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
 * const result = await boundary.invoke(run, {
 *   toolCallId: "call_1", runId: run.runId, toolName: "lookup", input: '{"key":"a"}',
 * });
 * assert.deepEqual(result, {
 *   status: "READY", toolCallId: "call_1", evidence: "EVIDENCE_FOUND", scope: "the lookup table",
 *   content: { found: true },
 * });
 * const facts = await boundary.endRun(run);
 * assert.equal(facts.length, 1);
 * ```
 */
export class ToolBoundary {
  /** The store, for harness code that needs it directly. */
  readonly store: Store;
  /** The limits in force. */
  readonly limits: Readonly<Limits>;
  /** What every operation reads. */
  readonly #setup: Setup;
  /**
   * The tool list of `describeTools`, as JSON text, once asked for: each call gets its own copy.
   * Not made up front: a cold Worker's first call would pay for every tool's JSON Schema.
   */
  #described: string | undefined;

  /**
   * Creates a boundary over a store and a fixed set of tools.
   *
   * @param options Store, tools, limits, TTLs, authorization, observer and clock.
   * @throws {TypeError} When `tools` is missing, has duplicates or a name that is empty or holds a
   *   lone surrogate, `store` is not a store (a required method missing, or a capability only in
   *   part), `ledgerKey` comes with a store that has no `RunSeal`, or `onDuplicate` is neither
   *   "refuse" nor "replay".
   * @throws {RangeError} When a limit is not a positive integer, a TTL is not an integer from 1
   *   to `MAX_TTL_MS`, or `storeRetryMs` not an integer from 0 to `MAX_TIMER_MS`.
   */
  constructor(options: ToolBoundaryOptions) {
    this.#setup = createSetup(options);
    this.store = this.#setup.store;
    this.limits = this.#setup.limits;
  }

  /** The tools, by name. */
  get tools(): ReadonlyMap<string, AnyToolDefinition> {
    return this.#setup.tools;
  }

  /**
   * Lists every tool of the boundary, writable ones included, as a model's tool list needs them:
   * name, description, read-only flag and the JSON Schema of the input. Computed once, on the
   * first call; each call returns a fresh copy.
   *
   * @returns One entry per tool, in the order the tools were given.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import * as v from "valibot";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   *
   * const search = defineTool({
   *   name: "search_logs",
   *   description: "Searches the service logs.",
   *   readOnly: true,
   *   input: v.object({ query: v.string() }),
   *   execute: ({ query }) => ({ query }),
   *   project: (raw) => ({ evidence: "NO_EVIDENCE", scope: raw.query, content: [] }),
   * });
   * const restart = defineTool({
   *   name: "restart",
   *   readOnly: false,
   *   execute: () => ({}),
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "restart", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [search, restart] });
   * assert.deepEqual(boundary.describeTools(), [
   *   {
   *     name: "search_logs",
   *     description: "Searches the service logs.",
   *     readOnly: true,
   *     inputSchema: {
   *       type: "object",
   *       properties: { query: { type: "string" } },
   *       required: ["query"],
   *     },
   *   },
   *   { name: "restart", readOnly: false, inputSchema: { type: "object" } },
   * ]);
   * ```
   */
  describeTools(): ToolDescription[] {
    this.#described ??= JSON.stringify([...this.#setup.tools.values()].map(describeTool));
    return JSON.parse(this.#described);
  }

  /**
   * Starts a run: validates the run ID (or generates one), fixes the deadline and budgets, and
   * creates the run's state in the store. A start the store failed (it threw) is tried again with
   * the same attempt for up to `storeRetryMs`; with an `idempotencyKey`, a start the caller sends
   * again (its answer lost) is the same start too, and returns the same run.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ToolBoundary } from "@tool-boundary/core";
   *
   * const boundary = new ToolBoundary({ tools: [] });
   * const key = crypto.randomUUID();
   * const run = await boundary.startRun({ ttlMs: 60_000, idempotencyKey: key });
   * // Sent again (say its answer was lost): the same run, not RUN_ALREADY_EXISTS.
   * assert.deepEqual(await boundary.startRun({ ttlMs: 60_000, idempotencyKey: key }), run);
   * // The key with other options is another start of the run ID the key names.
   * await assert.rejects(
   *   () => boundary.startRun({ ttlMs: 30_000, idempotencyKey: key }),
   *   { code: "RUN_ALREADY_EXISTS" },
   * );
   * ```
   *
   * @param options Run ID, deadline or TTL, budget, idempotency key.
   * @returns The immutable run context to pass to every call.
   * @throws {BoundaryError} INVALID_RUN_ID, RUN_ALREADY_EXISTS, DEADLINE_EXCEEDED (a deadline
   *   not in the future) or STORE_UNAVAILABLE.
   * @throws {RangeError} When the deadline is not an integer epoch ms up to `MAX_EPOCH_MS`,
   *   `ttlMs` not an integer from 1 to `MAX_TTL_MS`, `budget.calls` not an integer from 1 to
   *   `MAX_BUDGET`, a `budget.perTool` key not well-formed Unicode or its value not an integer
   *   from 0 to `MAX_BUDGET` (see `./limits.ts`), or `idempotencyKey` not 1 to 255 visible ASCII
   *   characters.
   * @throws {TypeError} When the `ledgerKey` is not a key pair (`d` not the private key of `x`,
   *   or WebCrypto refused it): no run is created.
   */
  startRun(options: StartRunOptions = {}): Promise<RunContext> {
    return startRun(this.#setup, options);
  }

  /**
   * Loads the context of an existing run, for example in another instance. A caller that only
   * makes calls needs none: `invoke` and `recall` take a {@linkcode RunRef}, and the store's
   * begin answers the context, without this read.
   *
   * @param runId The run ID.
   * @returns The context, or `null` when the run is unknown, expired or the ID is unsafe.
   * @throws {BoundaryError} STORE_UNAVAILABLE.
   */
  getRun(runId: string): Promise<RunContext | null> {
    return getRun(this.#setup, runId);
  }

  /**
   * Runs one tool call through the boundary. Never throws, and never rejects, for anything the
   * agent, the envelope, a tool or its projector does: every value they supply is read once,
   * into a plain copy, and what is recorded is that copy, which is also what the next step gets.
   *
   * The steps, each in its own file of `./steps/` and run in this order by `./steps/invoke.ts`:
   * preflight, authorize, begin (the record is created), execute, check, project, complete (the
   * record ends READY or ERROR), result.
   *
   * The run is its context (from `startRun` or `getRun`), or a {@linkcode RunRef}: its ID and,
   * optionally, the `startedAt` of the instance. Either way the store's one begin checks the run,
   * and that it is the instance named (a context always names its own): a run ID started again
   * after its state was gone is another run, and a call for the earlier one is RUN_NOT_FOUND.
   * Given a reference, nothing is read first (but for the `authorize` hook, which is asked with
   * the run's context): the tool gets the run instance begin answered (`ctx.run`), and the
   * deadline checks are the store's.
   *
   * A complete the store failed (it threw) is tried again with the same attempt, with backoff,
   * for up to `storeRetryMs`, so that an outcome a tool produced is kept when the store comes
   * back within it; the agent gets STORE_UNAVAILABLE only after that.
   *
   * @param run The run context from `startRun`, or a run reference.
   * @param envelope The call as the agent framework produced it.
   * @param options The caller's `signal` (see {@linkcode InvokeOptions}).
   * @returns The bounded READY result, or an ERROR with a safe code. Never raw data.
   * @throws {TypeError} When `run` is neither a run context nor a run reference,
   *   `options.signal` not an AbortSignal, or the `ledgerKey` not a key pair (`d` not the private
   *   key of `x`): programming errors, and nothing is recorded.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   *
   * const slow = defineTool({
   *   name: "slow_search",
   *   readOnly: true,
   *   execute: (_input, { signal }) =>
   *     new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "never reached", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [slow] });
   * const run = await boundary.startRun();
   * const controller = new AbortController();
   * const pending = boundary.invoke(run, {
   *   toolCallId: "call_1", runId: run.runId, toolName: "slow_search", input: {},
   * }, { signal: controller.signal });
   * setTimeout(() => controller.abort(new Error("the user pressed stop")), 10);
   * const result = await pending;
   * assert.equal(result.status === "ERROR" && result.code, "CANCELLED");
   * assert.equal((await boundary.inspect(run.runId, "call_1"))?.errorCode, "CANCELLED");
   * ```
   */
  invoke(
    run: RunContext | RunRef,
    envelope: ToolCallEnvelope,
    options?: InvokeOptions,
  ): Promise<BoundaryResult> {
    return invoke(this.#setup, run, envelope, options);
  }

  /**
   * Gives back the recorded result of a call, for a harness resuming after a crash: never runs
   * anything, never writes, uses no budget, and works after the run ended too. The envelope is
   * checked as `invoke` checks it (ID, run, tool, input read into the request that would be
   * recorded); then the run's begun call under that ID decides:
   * READY or ERROR record of the same request -> the result exactly as first returned, plus
   * `replayed: true`; another request (or another tool) -> ERROR TOOL_CALL_CONFLICT; still
   * PROJECTING -> ERROR OUTCOME_UNKNOWN; never begun -> ERROR RECORD_NOT_FOUND; begun but its
   * record expired -> ERROR RECORD_EXPIRED; the run gone (or another instance than the one
   * `run` names) -> ERROR RUN_NOT_FOUND. Never throws for what the envelope holds; tells the
   * observer nothing.
   *
   * @param run The run context (from `startRun` or `getRun`), or a {@linkcode RunRef}.
   * @param envelope The call as the agent framework produced it.
   * @returns The recorded result, or an ERROR with a safe code.
   * @throws {TypeError} When `run` is neither a run context nor a run reference (a programming
   *   error), or the store has no `CallIndex`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   * let executed = 0;
   * const lookup = defineTool({
   *   name: "lookup",
   *   readOnly: true,
   *   execute: (input) => (executed++, { key: input.key }),
   *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "the table", content: raw.key }),
   * });
   * const boundary = new ToolBoundary({ tools: [lookup] });
   * const run = await boundary.startRun();
   * const envelope = { toolCallId: "call_1", runId: run.runId, toolName: "lookup", input: { key: "a" } };
   * const first = await boundary.invoke(run, envelope);
   * assert.deepEqual(await boundary.recall(run, envelope), { ...first, replayed: true });
   * const other = await boundary.recall(run, { ...envelope, input: { key: "b" } });
   * assert.equal(other.status === "ERROR" && other.code, "TOOL_CALL_CONFLICT");
   * assert.equal(executed, 1);
   * ```
   */
  recall(run: RunContext | RunRef, envelope: ToolCallEnvelope): Promise<BoundaryResult> {
    return recall(this.#setup, run, envelope);
  }

  /**
   * Every call the run began, in begin order, without payloads: each with its record's status
   * (EXPIRED once the record is gone), tool, evidence, error code and times. Refused calls were
   * never begun and are not listed. Never touches TTLs.
   *
   * @param runId The run ID.
   * @returns One summary per begun call.
   * @throws {BoundaryError} INVALID_RUN_ID (an ID outside the allow-list), RUN_NOT_FOUND (absent
   *   or expired) or STORE_UNAVAILABLE.
   * @throws {TypeError} When the store has no `CallIndex`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   * const ping = defineTool({
   *   name: "ping",
   *   readOnly: true,
   *   execute: () => ({}),
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "ping", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [ping] });
   * const run = await boundary.startRun();
   * await boundary.invoke(run, { toolCallId: "call_1", runId: run.runId, toolName: "ping", input: {} });
   * const [call] = await boundary.listCalls(run.runId);
   * assert.equal(call?.toolCallId, "call_1");
   * assert.equal(call?.status, "READY");
   * assert.equal(call?.evidence, "NO_EVIDENCE");
   * ```
   */
  listCalls(runId: string): Promise<CallSummary[]> {
    return listCalls(this.#setup, runId);
  }

  /**
   * The store's live runs, newest first, `limit` per page (harness-only; the run console's
   * list): each with its status, times, calls begun and ERROR records. Pass a page's `next` as
   * `cursor` for the page after it; `next` is `null` on the last page. A cursor is a position in
   * the list (`<startedAt>.<runId>` of a page's last run), taken whether or not a page gave it.
   *
   * @param request `limit` (1 to `MAX_LIST_RUNS`) and the `cursor`.
   * @returns The page.
   * @throws {RangeError} For a bad `limit` or `cursor`.
   * @throws {BoundaryError} STORE_UNAVAILABLE.
   * @throws {TypeError} When the store has no `RunIndex`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ToolBoundary } from "@tool-boundary/core";
   * const boundary = new ToolBoundary({ tools: [] });
   * const older = await boundary.startRun();
   * const newer = await boundary.startRun();
   * const first = await boundary.listRuns({ limit: 1 });
   * assert.equal(first.runs.length, 1);
   * const second = await boundary.listRuns({ limit: 1, cursor: first.next });
   * const listed = [...first.runs, ...second.runs].map((run) => run.runId);
   * assert.deepEqual(listed.toSorted(), [older.runId, newer.runId].toSorted());
   * assert.equal(second.next, null);
   * ```
   */
  listRuns(request: ListRunsRequest): Promise<RunsPage> {
    return listRuns(this.#setup, request);
  }

  /**
   * Tells, for each tool call ID a final answer cites, whether the run's records back it: one
   * store read over all of them. EVIDENCE: READY with EVIDENCE_FOUND, of this run;
   * NEGATIVE_OBSERVATION: READY with NO_EVIDENCE, with its scope; NOT_EVIDENCE: anything else
   * (never begun, expired, another run's, PROJECTING, ERROR, an ID outside the allow-list).
   *
   * @param run The run context, or its ID.
   * @param toolCallIds The cited IDs, at most {@linkcode MAX_CITATIONS}.
   * @returns One verdict per ID, in the order given (a repeated ID gets the same verdict again).
   * @throws {BoundaryError} INVALID_RUN_ID or STORE_UNAVAILABLE.
   * @throws {TypeError} When `toolCallIds` is not an array of strings.
   * @throws {RangeError} When it holds more than {@linkcode MAX_CITATIONS} IDs.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, ToolBoundary } from "@tool-boundary/core";
   * const search = defineTool({
   *   name: "search",
   *   readOnly: true,
   *   execute: (input) => ({ hits: input.query === "disk" ? ["rotate logs"] : [] }),
   *   project: (raw) => ({
   *     evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
   *     scope: "the runbook",
   *     content: raw.hits,
   *   }),
   * });
   * const boundary = new ToolBoundary({ tools: [search] });
   * const run = await boundary.startRun();
   * const call = (toolCallId: string, query: string) =>
   *   boundary.invoke(run, { toolCallId, runId: run.runId, toolName: "search", input: { query } });
   * await call("call_1", "disk");
   * await call("call_2", "cpu");
   * assert.deepEqual(await boundary.checkCitations(run, ["call_1", "call_2", "call_3"]), [
   *   { toolCallId: "call_1", verdict: "EVIDENCE" },
   *   { toolCallId: "call_2", verdict: "NEGATIVE_OBSERVATION", scope: "the runbook" },
   *   { toolCallId: "call_3", verdict: "NOT_EVIDENCE" },
   * ]);
   * ```
   */
  checkCitations(
    run: RunContext | string,
    toolCallIds: readonly string[],
  ): Promise<Citation[]> {
    return checkCitations(this.#setup, run, toolCallIds);
  }

  /**
   * Reads a canonical record (harness-only: it includes the raw response). Never touches its TTL.
   *
   * @param runId The run ID.
   * @param toolCallId The tool call ID.
   * @returns The record, or `null` when absent, expired, or an ID is unsafe.
   * @throws {BoundaryError} STORE_UNAVAILABLE.
   */
  inspect(runId: string, toolCallId: string): Promise<CanonicalRecord | null> {
    return inspect(this.#setup, runId, toolCallId);
  }

  /**
   * Ends a run and returns its observed facts: only READY records owned by the run, in
   * execution order, within `limits.factCount` and `limits.factBytes`. Ending twice is allowed
   * and returns the same facts while the records live.
   *
   * @param run The run context, or its ID.
   * @returns The facts.
   * @throws {BoundaryError} RUN_NOT_FOUND, INVALID_RUN_ID or STORE_UNAVAILABLE.
   */
  async endRun(run: RunContext | string): Promise<ObservedFact[]> {
    return (await this.endRunReport(run)).facts;
  }

  /**
   * Like {@linkcode ToolBoundary.endRun}, and also says how many READY records the caps left out.
   *
   * @param run The run context, or its ID.
   * @returns The facts and the number omitted.
   * @throws {BoundaryError} RUN_NOT_FOUND, INVALID_RUN_ID or STORE_UNAVAILABLE.
   */
  endRunReport(run: RunContext | string): Promise<RunEnd> {
    return endRun(this.#setup, run);
  }

  /**
   * Exports a run for a third party to verify with `verifyRun` from `@tool-boundary/core/verify`
   * (harness-only: records include raw responses): the run, every live record of its begun calls
   * in begin order (each as `inspect()` returns it, with its `proof`), and once the run is sealed
   * (ended by a boundary with a `ledgerKey`) the facts that `endRun` returned and the receipt;
   * both are `null` before. See docs/proof.md.
   *
   * @param runId The run ID.
   * @returns The bundle.
   * @throws {BoundaryError} INVALID_RUN_ID, RUN_NOT_FOUND or STORE_UNAVAILABLE.
   * @throws {TypeError} When the store has no `RunSeal`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, generateLedgerKeys, ToolBoundary } from "@tool-boundary/core";
   * import { verifyRun } from "@tool-boundary/core/verify";
   * const ping = defineTool({
   *   name: "ping",
   *   readOnly: true,
   *   execute: () => ({ pong: true }),
   *   project: () => ({ evidence: "EVIDENCE_FOUND", scope: "ping", content: "pong" }),
   * });
   * const keys = await generateLedgerKeys();
   * const boundary = new ToolBoundary({ tools: [ping], ledgerKey: keys.privateKey });
   * const run = await boundary.startRun();
   * await boundary.invoke(run, { toolCallId: "call_1", runId: run.runId, toolName: "ping", input: {} });
   * await boundary.endRun(run);
   * const bundle = await boundary.exportRun(run.runId);
   * assert.equal(bundle.records[0]?.proof?.hash.length, 43);
   * assert.deepEqual(await verifyRun(bundle, keys.publicKey), { ok: true, sealed: true, calls: 1 });
   * bundle.records[0]!.raw = { pong: false };
   * assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
   *   ok: false, toolCallId: "call_1", reason: "ALTERED",
   * });
   * ```
   */
  exportRun(runId: string): Promise<RunBundle> {
    return exportRun(this.#setup, runId);
  }

  /**
   * The public half of the ledger key and its key ID, for auditors (`GET /v1/ledger-key`).
   *
   * @returns `{ keyId, publicKey }`, or `null` without a `ledgerKey`.
   * @throws {TypeError} When WebCrypto refused the ledger key.
   */
  async ledgerPublicKey(): Promise<{ keyId: string; publicKey: JsonWebKey } | null> {
    if (this.#setup.ledger === undefined) return null;
    const { keyId, publicKey } = await this.#setup.ledger.ready;
    return { keyId, publicKey: { ...publicKey } };
  }
}
