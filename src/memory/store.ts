/** `MemoryStore`, the class: the default store of a `ToolBoundary` (`./mod.ts` is the entry). */
import { isSafeRunId, isSafeToolCallId } from "../core/ids.ts";
import { completeTransition, summarizeCall } from "../core/lifecycle.ts";
import { PendingBeginRequest, takeDigestsLater } from "../core/begin_request.ts";
import {
  checkBeginRequest,
  checkBeginRequestButDigest,
  checkCompleteRequest,
  checkEndRunRequest,
  checkEpochMs,
  checkListRunsRequest,
  checkReadFactsRequest,
  checkStartRunRequest,
  fitsCostBudget,
  MIN_FACT_BYTES,
  ownBudget,
  setOwnBudget,
} from "../core/limits.ts";
import { factRowOf, projectingRecord } from "../core/records.ts";
import { listedBefore, pageOf, type RunsCursor } from "../core/runs_page.ts";
import type {
  BeginReply,
  BeginRequest,
  BegunRun,
  CallIndex,
  CallSummary,
  CompleteReply,
  CompleteRequest,
  EndRunPageState,
  EndRunReply,
  EndRunRequest,
  ExportRunReply,
  FactRow,
  ListRunsRequest,
  LookupCallReply,
  ReadFactsReply,
  ReadFactsRequest,
  RunIndex,
  RunSeal,
  RunsPage,
  RunState,
  RunSummary,
  SealRunReply,
  SealRunRequest,
  SealState,
  StartRunReply,
  StartRunRequest,
  Store,
  StoredRecord,
  StoreRefusal,
} from "../core/store.ts";
import { utf8ByteLength } from "../core/utf8.ts";
import { IdTable } from "./id_table.ts";
import { digestOf, exposeState, type RunEntry } from "./state.ts";

/** Options of {@linkcode MemoryStore}. */
export interface MemoryStoreOptions {
  /** Epoch ms clock that drives expiry; share it with the boundary in tests. @default Date.now */
  clock?: () => number;
  /**
   * Live records kept at most; past it, begin fails (the boundary reports STORE_UNAVAILABLE).
   * Expired records never count against it: each write first drops those that have expired.
   * @default 100000
   */
  maxRecords?: number;
}

/** A record's or (`toolCallId` null) a run's expiry, in the store's expiry queue. */
interface Expiry {
  at: number;
  runId: string;
  toolCallId: string | null;
}

/**
 * A binary min-heap of expiries by time: push and pop are O(log n), a look at the next one O(1).
 * Every record and run is pushed once (its TTL is set once), so draining it costs each of them
 * one pop, whatever the number held.
 */
class ExpiryQueue {
  readonly #heap: Expiry[] = [];

  get length(): number {
    return this.#heap.length;
  }

  /** The earliest expiry queued, or Infinity. */
  get next(): number {
    return this.#heap[0]?.at ?? Number.POSITIVE_INFINITY;
  }

  push(entry: Expiry): void {
    const heap = this.#heap;
    let i = heap.push(entry) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  /** Removes and returns the earliest expiry (the queue must not be empty). */
  pop(): Expiry {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    const length = heap.length;
    if (length === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= length) break;
      if (child + 1 < length && heap[child + 1]!.at < heap[child]!.at) child++;
      if (heap[child]!.at >= last.at) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}

/**
 * An in-memory {@linkcode Store} with the same semantics as the Redis one: lifecycle, evidence
 * rules, TTL set once (driven by an injectable clock), duplicates and budgets. Every operation
 * runs synchronously between its checks and its writes, so concurrent async callers see each
 * operation as atomic. Values are copied in and out, so callers cannot change what is stored.
 *
 * Timestamps in records come from the caller's `now`; expiry is decided by this store's clock.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 * let now = 0;
 * const store = new MemoryStore({ clock: () => now });
 * await store.startRun({
 *   runId: "r1", deadline: 60_000, budget: { calls: 2, perTool: {} }, ttlMs: 120_000,
 *   attemptId: "a0", now,
 * });
 * const begun = await store.begin({
 *   runId: "r1", toolCallId: "call_1", toolName: "t", requestJson: "{}", requestDigest: "d1",
 *   attemptId: "a1", ttlMs: 1_000, now,
 * });
 * assert.equal(begun.ok, true);
 * assert.equal((await store.get("r1", "call_1"))?.status, "PROJECTING");
 * now = 1_000;
 * assert.equal(await store.get("r1", "call_1"), null); // expired
 * ```
 */
export class MemoryStore implements Store, CallIndex, RunIndex, RunSeal {
  readonly #clock: () => number;
  readonly #maxRecords: number;
  readonly #runs = new Map<string, RunEntry>();
  /**
   * Records by run ID, then tool call ID: lookups hash the IDs the caller already holds, where a
   * concatenated key was a new string to build and hash on every lookup. Tables keyed by tool
   * call ID are `IdTable`s, which hash a new ID without V8's string table (see `./id_table.ts`).
   */
  readonly #records = new Map<string, IdTable<StoredRecord>>();
  #recordCount = 0;
  /**
   * Every live run by start, oldest first (each newer by `listedBefore`), for `listRuns`: a run
   * leaves it when it expires.
   */
  readonly #started: RunsCursor[] = [];
  /**
   * Every record and run held, by expiry: each write drops what has expired since, so expired
   * records never take the room of live ones, and a sweep costs each record one pop.
   */
  readonly #expiries = new ExpiryQueue();
  static {
    // Tests that play an operator with write access edit the records through this, and only
    // they import it (it is no entry point's export).
    exposeState((store) => ({
      records: (store as MemoryStore).#records,
      runs: (store as MemoryStore).#runs,
    }));
    // The boundary may hand this begin a request whose digest is hashed when first read.
    takeDigestsLater(MemoryStore.prototype.begin);
  }

  /**
   * Creates an empty store.
   *
   * @param options Clock and capacity.
   */
  constructor(options: MemoryStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#maxRecords = options.maxRecords ?? 100_000;
    if (!Number.isSafeInteger(this.#maxRecords) || this.#maxRecords < 1) {
      throw new RangeError("Invalid maxRecords: expected a positive integer");
    }
  }

  /** Live records held now (expired ones are swept first): never more than `maxRecords`. */
  get size(): number {
    this.#sweep();
    return this.#recordCount;
  }

  /** {@inheritDoc Store.startRun} */
  startRun(request: StartRunRequest): Promise<StartRunReply> {
    const refused = refusedBy(checkStartRunRequest, request);
    if (refused !== null) return refused;
    const now = this.#clock();
    const existing = this.#liveRun(request.runId, now);
    if (existing !== undefined) {
      if (existing.attemptId === request.attemptId) {
        return Promise.resolve({ ok: true, run: copyRun(existing.state) });
      }
      return refuse("RUN_ALREADY_EXISTS");
    }
    const state: RunState = {
      runId: request.runId,
      status: "ACTIVE",
      deadline: request.deadline,
      startedAt: request.now,
      endedAt: null,
      // Spread copies own properties as own properties, `__proto__` included.
      budget: { calls: request.budget.calls, perTool: { ...request.budget.perTool } },
      used: { calls: 0, perTool: {} },
    };
    if (request.budget.cost !== undefined) {
      state.budget.cost = request.budget.cost;
      state.cost = { reserved: 0, spent: 0 };
    }
    const expiresAt = now + request.ttlMs;
    this.#runs.set(request.runId, {
      state,
      begunRun: begunRunOf(state),
      attemptId: request.attemptId,
      expiresAt,
      progress: [],
      ended: null,
      ready: [],
      endedReady: null,
      endedExpiry: Number.POSITIVE_INFINITY,
      begun: new IdTable(),
      hashes: new IdTable(),
      sealJson: null,
      errors: 0,
    });
    const started = { startedAt: state.startedAt, runId: state.runId };
    this.#started.splice(this.#olderThan(started), 0, started);
    this.#expiries.push({ at: expiresAt, runId: request.runId, toolCallId: null });
    this.#sweep();
    return Promise.resolve({ ok: true, run: copyRun(state) });
  }

  /** {@inheritDoc Store.getRun} */
  getRun(runId: string): Promise<RunState | null> {
    const entry = this.#liveRun(runId, this.#clock());
    return Promise.resolve(entry === undefined ? null : copyRun(entry.state));
  }

  /** {@inheritDoc Store.begin} */
  begin(request: BeginRequest): Promise<BeginReply> {
    // The boundary's request carries a digest valid by construction, hashed only if compared.
    const pending = PendingBeginRequest.digestOf(request);
    const refused = refusedBy(
      pending === undefined ? checkBeginRequest : checkBeginRequestButDigest,
      request,
    );
    if (refused !== null) return refused;
    // One clock read per operation: every expiry check and the new record's expiry use it.
    const now = this.#clock();
    const run = this.#liveRun(request.runId, now);
    // Another instance of the run ID is not the run asked for: that one is gone.
    if (run === undefined || !isInstance(run, request.startedAt)) return refuse("RUN_NOT_FOUND");
    const begun = run.begun.get(request.toolCallId);
    if (begun !== undefined && begun.attemptId === request.attemptId) {
      const existing = this.#liveRecord(request.runId, request.toolCallId, now);
      if (existing !== undefined) {
        return Promise.resolve({ ok: true, record: { ...existing }, run: run.begunRun });
      }
    }
    const { state } = run;
    if (state.status !== "ACTIVE") return refuse("RUN_INACTIVE");
    if (request.now >= state.deadline) return refuse("DEADLINE_EXCEEDED");
    if (begun !== undefined) {
      if (digestOf(begun) !== request.requestDigest) return refuse("TOOL_CALL_CONFLICT");
      if (request.replay !== true) return refuse("DUPLICATE_TOOL_CALL");
      const record = this.#liveRecord(request.runId, request.toolCallId, now);
      return Promise.resolve({
        ok: false,
        code: "DUPLICATE_TOOL_CALL",
        record: record === undefined ? null : { ...record },
      });
    }
    const toolLimit = ownBudget(state.budget.perTool, request.toolName);
    const toolUsed = ownBudget(state.used.perTool, request.toolName) ?? 0;
    if (toolLimit !== undefined && toolUsed >= toolLimit) return refuse("TOOL_BUDGET_EXHAUSTED");
    if (state.used.calls >= state.budget.calls) return refuse("RUN_BUDGET_EXHAUSTED");
    const { cost } = request;
    if (cost !== undefined && !fitsCostBudget(state, cost)) return refuse("BUDGET_EXHAUSTED");
    this.#sweep(now);
    if (this.#recordCount >= this.#maxRecords) {
      return Promise.reject(new Error("MemoryStore is full: maxRecords reached"));
    }
    const record = projectingRecord(request, now + request.ttlMs, state.used.calls + 1);
    let inRun = this.#records.get(request.runId);
    if (inRun === undefined) this.#records.set(request.runId, inRun = new IdTable());
    inRun.set(request.toolCallId, record);
    this.#recordCount++;
    this.#expiries.push({
      at: record.expiresAt,
      runId: request.runId,
      toolCallId: request.toolCallId,
    });
    state.used.calls++;
    run.begun.set(request.toolCallId, {
      toolCallId: request.toolCallId,
      digest: pending ?? request.requestDigest,
      attemptId: request.attemptId,
      seq: record.seq,
    });
    setOwnBudget(state.used.perTool, request.toolName, toolUsed + 1);
    if (cost !== undefined) (state.cost ??= { reserved: 0, spent: 0 }).reserved += cost;
    return Promise.resolve({ ok: true, record: { ...record }, run: run.begunRun });
  }

  /** {@inheritDoc Store.complete} */
  complete(
    request: CompleteRequest,
  ): Promise<CompleteReply> {
    const refused = refusedBy(checkCompleteRequest, request);
    if (refused !== null) return refused;
    const now = this.#clock();
    const done = completeTransition(
      this.#liveRecord(request.runId, request.toolCallId, now),
      request,
    );
    if (!done.ok) return Promise.resolve(done);
    if (done.changed) {
      // #liveRecord just found the record, so its run's map exists.
      this.#records.get(request.runId)!.set(request.toolCallId, done.record);
      const run = this.#liveRun(request.runId, now);
      run?.progress.push(request.toolCallId);
      if (run !== undefined && done.record.status === "ERROR") run.errors++;
      const cost = done.record.cost;
      if (run?.state.cost !== undefined && cost !== undefined) {
        run.state.cost.reserved -= cost.reserved;
        run.state.cost.spent += cost.spent!;
      }
      if (done.record.status === "READY") {
        run?.ready.push({ toolCallId: request.toolCallId, expiresAt: done.record.expiresAt });
      }
      if (done.record.proof !== undefined) {
        run?.hashes.set(request.toolCallId, done.record.proof.hash);
      }
      this.#sweep(now);
    }
    return Promise.resolve({ ok: true, record: { ...done.record } });
  }

  /** {@inheritDoc Store.get} */
  get(runId: string, toolCallId: string): Promise<StoredRecord | null> {
    const record = this.#liveRecord(runId, toolCallId, this.#clock());
    return Promise.resolve(record === undefined ? null : { ...record });
  }

  /** {@inheritDoc Store.endRun} */
  endRun(request: EndRunRequest): Promise<EndRunReply> {
    const refused = refusedBy(checkEndRunRequest, request);
    if (refused !== null) return refused;
    const now = this.#clock();
    const run = this.#liveRun(request.runId, now);
    if (run === undefined) return refuse("RUN_NOT_FOUND");
    if (run.state.status === "ACTIVE") {
      run.state.status = "ENDED";
      run.state.endedAt = request.now;
      run.ended = run.progress.length;
      run.endedReady = run.ready.length;
      // Once, here: until this expiry passes, no READY record of the prefix has expired.
      for (const { expiresAt } of run.ready) {
        if (expiresAt < run.endedExpiry) run.endedExpiry = expiresAt;
      }
    }
    // The first endRun fixes the facts: a call completed after it is recorded, not listed.
    const ended = run.ended ?? run.progress.length;
    const { page } = request;
    let toolCallIds: string[];
    let paged: { page: EndRunPageState } | undefined;
    if (page === undefined) {
      toolCallIds = run.progress.slice(0, ended);
    } else {
      // The page's IDs only; the READY completes after it are counted, not copied (by expiry
      // only once the soonest of them has passed).
      const ready = run.ready;
      const end = run.endedReady ?? ready.length;
      const last = Math.min(end, page.from + page.limit);
      toolCallIds = [];
      for (let i = page.from; i < last; i++) toolCallIds.push(ready[i]!.toolCallId);
      let left = end - last;
      if (run.endedExpiry <= now) {
        left = 0;
        for (let i = last; i < end; i++) if (ready[i]!.expiresAt > now) left++;
      }
      paged = { page: { next: last < end ? last : null, left } };
    }
    if (request.seal !== true) {
      return Promise.resolve({ ok: true, run: copyRun(run.state), toolCallIds, ...paged });
    }
    const calls = run.sealJson !== null ? [] : [...run.begun.keys()].map((toolCallId) => ({
      toolCallId,
      hash: run.hashes.get(toolCallId) ?? null,
    }));
    const seal: SealState = { sealJson: run.sealJson, calls };
    if (page !== undefined) {
      seal.completed = run.sealJson !== null ? [] : run.progress.slice(0, ended);
    }
    return Promise.resolve({ ok: true, run: copyRun(run.state), toolCallIds, seal, ...paged });
  }

  /** {@inheritDoc RunSeal.sealRun} */
  sealRun(request: SealRunRequest): Promise<SealRunReply> {
    if (typeof request?.sealJson !== "string") {
      return Promise.reject(new TypeError("Invalid sealJson: expected a string"));
    }
    const run = isSafeRunId(request.runId)
      ? this.#liveRun(request.runId, this.#clock())
      : undefined;
    if (run === undefined) return refuse("RUN_NOT_FOUND");
    run.sealJson ??= request.sealJson;
    return Promise.resolve({ ok: true, sealJson: run.sealJson });
  }

  /** {@inheritDoc RunSeal.exportRun} */
  exportRun(runId: string): Promise<ExportRunReply> {
    const now = this.#clock();
    const run = isSafeRunId(runId) ? this.#liveRun(runId, now) : undefined;
    if (run === undefined) return Promise.resolve(null);
    const calls = [...run.begun.keys()].map((toolCallId) => {
      const record = this.#liveRecord(runId, toolCallId, now);
      return { toolCallId, record: record === undefined ? null : { ...record } };
    });
    return Promise.resolve({ run: copyRun(run.state), calls, sealJson: run.sealJson });
  }

  /** {@inheritDoc RunIndex.listRuns} */
  listRuns(request: ListRunsRequest): Promise<RunsPage> {
    let checked;
    try {
      checked = checkListRunsRequest(request);
    } catch (error) {
      return Promise.reject(error);
    }
    const { limit, after } = checked;
    const now = this.#clock();
    const listed: RunSummary[] = [];
    const started = this.#started;
    let i = (after === null ? started.length : this.#olderThan(after)) - 1;
    // One more than the page, to tell whether there is a next one.
    for (; i >= 0 && listed.length <= limit; i--) {
      const run = this.#liveRun(started[i]!.runId, now);
      // #liveRun drops an expired run from the index; what is left below `i` is unchanged.
      if (run === undefined) continue;
      const { state } = run;
      listed.push({
        runId: state.runId,
        status: state.status,
        startedAt: state.startedAt,
        endedAt: state.endedAt,
        calls: state.used.calls,
        errors: run.errors,
        ...(state.cost === undefined ? {} : { cost: { ...state.cost } }),
      });
    }
    return Promise.resolve(pageOf(listed, limit, false));
  }

  /** {@inheritDoc Store.readFacts} */
  readFacts(request: ReadFactsRequest): Promise<ReadFactsReply> {
    try {
      checkReadFactsRequest(request);
    } catch (error) {
      return Promise.reject(error);
    }
    const rows: FactRow[] = [];
    let bytes = 0;
    let omitted = 0;
    const now = this.#clock();
    const { identities, maxFacts, maxBytes } = request;
    for (let i = 0; i < identities.length; i++) {
      if (rows.length >= maxFacts || maxBytes - bytes < MIN_FACT_BYTES) {
        return Promise.resolve({ rows, omitted, unread: identities.length - i });
      }
      const identity = identities[i]!;
      if (identity.runId !== request.runId) continue;
      const row = factRowOf(this.#liveRecord(identity.runId, identity.toolCallId, now));
      if (row === null) continue;
      const size = utf8ByteLength(row.agentResultJson);
      if (bytes + size > maxBytes) {
        omitted++;
        continue;
      }
      bytes += size;
      rows.push(row);
    }
    return Promise.resolve({ rows, omitted, unread: 0 });
  }

  /** {@inheritDoc CallIndex.lookupCall} */
  lookupCall(runId: string, toolCallId: string, startedAt?: number): Promise<LookupCallReply> {
    if (startedAt !== undefined) {
      try {
        checkEpochMs("startedAt", startedAt);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const now = this.#clock();
    const run = isSafeRunId(runId) ? this.#liveRun(runId, now) : undefined;
    if (run === undefined || !isInstance(run, startedAt)) return Promise.resolve(null);
    const call = isSafeToolCallId(toolCallId) ? run.begun.get(toolCallId) : undefined;
    if (call === undefined) return Promise.resolve({ call: null, record: null });
    const record = this.#liveRecord(runId, toolCallId, now);
    return Promise.resolve({
      call: {
        toolCallId: call.toolCallId,
        requestDigest: digestOf(call),
        attemptId: call.attemptId,
        seq: call.seq,
      },
      record: record === undefined ? null : { ...record },
    });
  }

  /** {@inheritDoc CallIndex.listCalls} */
  listCalls(runId: string): Promise<{ run: RunState; calls: CallSummary[] } | null> {
    const now = this.#clock();
    const run = isSafeRunId(runId) ? this.#liveRun(runId, now) : undefined;
    if (run === undefined) return Promise.resolve(null);
    const calls: CallSummary[] = [];
    // A Map iterates in insertion order: begin order.
    for (const toolCallId of run.begun.keys()) {
      calls.push(summarizeCall(toolCallId, this.#liveRecord(runId, toolCallId, now) ?? null));
    }
    return Promise.resolve({ run: copyRun(run.state), calls });
  }

  #liveRecord(runId: string, toolCallId: string, now: number): StoredRecord | undefined {
    const inRun = this.#records.get(runId);
    const record = inRun?.get(toolCallId);
    if (record !== undefined && record.expiresAt <= now) {
      this.#dropRecord(runId, inRun!, toolCallId);
      return undefined;
    }
    return record;
  }

  #dropRecord(runId: string, inRun: IdTable<StoredRecord>, toolCallId: string): void {
    inRun.delete(toolCallId);
    this.#recordCount--;
    if (inRun.size === 0) this.#records.delete(runId);
  }

  #liveRun(runId: string, now: number): RunEntry | undefined {
    const entry = this.#runs.get(runId);
    if (entry !== undefined && entry.expiresAt <= now) {
      this.#runs.delete(runId);
      const at = this.#olderThan(entry.state);
      if (this.#started[at]?.runId === runId) this.#started.splice(at, 1);
      return undefined;
    }
    return entry;
  }

  /**
   * How many runs of the start index are listed after `position` (a binary search): where a run
   * at `position` is, or goes.
   */
  #olderThan(position: RunsCursor): number {
    const started = this.#started;
    let lo = 0, hi = started.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (listedBefore(position, started[mid]!)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops every record and run that has expired by `now`, in expiry order. */
  #sweep(now = this.#clock()): void {
    const expiries = this.#expiries;
    while (expiries.next <= now) {
      const { runId, toolCallId } = expiries.pop();
      if (toolCallId === null) {
        this.#liveRun(runId, now);
        continue;
      }
      // #liveRecord drops it when it has expired; a record already dropped is gone.
      this.#liveRecord(runId, toolCallId, now);
    }
  }
}

function refuse<C extends StoreRefusal["code"]>(code: C): Promise<StoreRefusal<C>> {
  return Promise.resolve({ ok: false, code });
}

/**
 * Runs a request's checks: a refusal code, or the RangeError rejected as an async method's would
 * be; `null` when the request may go on. The check and its request are passed apart, so that no
 * closure is made per operation.
 */
function refusedBy<R, C extends StoreRefusal["code"]>(
  check: (request: R) => C | null,
  request: R,
): Promise<StoreRefusal<C>> | null {
  let code;
  try {
    code = check(request);
  } catch (error) {
    return Promise.reject(error);
  }
  return code === null ? null : refuse(code);
}

/** Whether the run is the instance asked for (any, when none is named). */
function isInstance(run: RunEntry, startedAt: number | undefined): boolean {
  return startedAt === undefined || run.state.startedAt === startedAt;
}

/** What every begin of the run answers of it: fixed at the start, so made once, frozen. */
function begunRunOf(state: RunState): BegunRun {
  return Object.freeze({ deadline: state.deadline, startedAt: state.startedAt });
}

function copyRun(state: RunState): RunState {
  const run: RunState = {
    ...state,
    budget: { calls: state.budget.calls, perTool: { ...state.budget.perTool } },
    used: { calls: state.used.calls, perTool: { ...state.used.perTool } },
  };
  if (state.budget.cost !== undefined) run.budget.cost = state.budget.cost;
  if (state.cost !== undefined) run.cost = { ...state.cost };
  return run;
}
