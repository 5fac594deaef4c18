/**
 * `UpstashStore`: the canonical store on Upstash Redis, over REST, one Lua script per transition.
 * The class alone: its options are checked in `options.ts`, the scripts are `scripts.ts`, their
 * replies are read in `replies.ts`, and begins and completes share requests in `batch.ts`.
 *
 * @module
 */
import type { ErrorCode } from "../core/errors.ts";
import { checkFailure } from "../core/failure.ts";
import { isSafeRunId, isSafeToolCallId } from "../core/ids.ts";
import { applyOutcome, isValidOutcome, summarizeCall } from "../core/lifecycle.ts";
import {
  checkBeginRequest,
  checkCompleteRequest,
  checkEndRunRequest,
  checkEpochMs,
  checkListRunsRequest,
  checkReadFactsRequest,
  checkStartRunRequest,
  MAX_TIMER_MS,
  setOwnBudget,
} from "../core/limits.ts";
import { projectingRecord } from "../core/records.ts";
import { pageOf } from "../core/runs_page.ts";
import { checkRecordProof } from "../core/ledger.ts";
import type {
  BeginReply,
  BeginRequest,
  BegunCall,
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
} from "../core/store.ts";
import type { EvidenceStatus, RecordStatus } from "../core/types.ts";
import { ScriptBatcher, sendOne, type UpstashPipeline } from "./batch.ts";
import { TimeLimit } from "./time_limit.ts";
import { RedisStoreError, storeUnavailable } from "./errors.ts";
import {
  checkStoreOptions,
  type UpstashDurability,
  type UpstashRedisClient,
  type UpstashStoreOptions,
} from "./options.ts";
import {
  BEGIN_CODES,
  COMPLETE_CODES,
  costOf,
  decodeReply,
  END_RUN_CODES,
  int,
  proofOf,
  refusalOf,
  refuse,
  type Reply,
  replyStatus,
  START_RUN_CODES,
  text,
  toBegunCall,
  toRecord,
  toRun,
  unreadable,
} from "./replies.ts";
import {
  BEGIN,
  capArg,
  COMPLETE,
  COMPLETE_FIELDS,
  END_RUN,
  FACT_FIELDS,
  GET,
  GET_RUN,
  INDEX_RUN,
  intArg,
  LIST_RUNS,
  LOOKUP_CALL,
  type LuaScript,
  READ_CALLS,
  READ_FACTS,
  READ_RECORDS,
  RECORD_FIELDS,
  scriptsFor,
  SEAL_RUN,
  sentScriptsNow,
  START_RUN,
  SUMMARY_FIELDS,
} from "./scripts.ts";

/**
 * A {@linkcode Store} on Upstash Redis (or any Redis behind an Upstash-compatible REST API),
 * with the same semantics as `MemoryStore`, checked by the same conformance suite.
 *
 * - Every transition (start run, begin, complete, end run) is one Lua script, so it is atomic
 *   and costs one REST round trip (`EVALSHA`; `EVAL` once more when Redis answers `NOSCRIPT`).
 *   Reads (`get`, `getRun`, `lookupCall`) are one round trip too and never touch a TTL;
 *   `listCalls` is two (the run, then its records). A run read (`getRun`, `endRun`) reads a fixed
 *   field list and the budgets of the tools the run names, never the per-call fields. Ending a run
 *   costs two round trips whatever the number of calls: `endRun` returns a page of the READY
 *   calls in the progress index (and counts the rest from the index's marks), then `readFacts`
 *   resolves the page in one script that reads only the fact fields of each record hash, so no
 *   request or raw payload leaves Redis, and stops reading once the fact caps are filled (then
 *   an `endRun` of `limit: 0` counts the rest from the marks: a third round trip); another page
 *   only while the fact caps are not filled.
 * - All keys of a run share the hash tag `{<runId>}`: the scripts are Redis Cluster-safe, and
 *   fit Upstash's key locking (`keyLocking: true`, for Upstash itself only).
 * - The client's retries are safe: a begin or complete resent with the same `attemptId` is
 *   recognised as the same operation, never a duplicate and never a second use of a budget.
 * - Every failure of the client or of Redis is thrown as `BoundaryError("STORE_UNAVAILABLE")`
 *   with a redacted `cause` (the client's own message repeats the whole command).
 * - Records expire `ttlMs` after creation on Redis's clock (`PEXPIRE`, set once); the
 *   `expiresAt` a record reports is the caller's `now + ttlMs`.
 * - Cost budgets: begin reserves a call's cost in the writes that count the call, complete settles
 *   it in its progress entry (one `HINCRBY` more only when the call spent other than it
 *   reserved), and a run read sums the settled reservations from the progress list, so a call
 *   without a cost bills as before (docs/upstash.md, "Cost budgets").
 *
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { Redis } from "@upstash/redis";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { UpstashStore } from "@tool-boundary/core/upstash";
 *
 * // Reads UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN.
 * const redis = Redis.fromEnv({ enableAutoPipelining: false });
 * const store = new UpstashStore({ redis, prefix: "my-app" });
 * const boundary = new ToolBoundary({ store, tools: [] });
 * assert.equal(boundary.store, store);
 * ```
 */
export class UpstashStore implements Store, CallIndex, RunIndex, RunSeal {
  readonly #redis: UpstashRedisClient;
  readonly #prefix: string;
  /** The time limit of every call (`timeoutMs`); none past the longest timer. */
  readonly #limit: TimeLimit | undefined;
  readonly #keyLocking: boolean;
  readonly #durability: UpstashDurability | undefined;
  readonly #batcher: ScriptBatcher | undefined;

  /**
   * Creates a store over an `@upstash/redis` client.
   *
   * @param options The client, a key prefix, the per-operation time bound, key locking,
   *   durability and batching.
   * @throws {TypeError} When `redis` lacks `eval`/`evalsha` or `prefix` is not allowed.
   * @throws {RangeError} When `timeoutMs` is not a positive number.
   * @throws {TypeError} When `keyLocking` is given and not a boolean.
   * @throws {RangeError} When `durability` is not `{ replicas, timeoutMs }` of positive integers
   *   with `durability.timeoutMs` below `timeoutMs`.
   * @throws {TypeError} When `durability` is given and `redis` lacks `exec`.
   * @throws {RangeError} When `batch` is not `false` or `{ maxBytes }` of a positive integer.
   * @throws {TypeError} When `batch` options are given and `redis` lacks `pipeline`.
   */
  constructor(options: UpstashStoreOptions) {
    const { redis, prefix, timeoutMs, keyLocking, durability, batchBytes } = checkStoreOptions(
      options,
    );
    this.#batcher = batchBytes === undefined ? undefined : new ScriptBatcher(
      redis as UpstashRedisClient & { pipeline(): UpstashPipeline },
      batchBytes,
    );
    this.#redis = redis;
    this.#prefix = prefix;
    this.#limit = timeoutMs > MAX_TIMER_MS ? undefined : new TimeLimit(timeoutMs);
    this.#keyLocking = keyLocking;
    this.#durability = durability;
  }

  /** The key prefix in use. */
  get prefix(): string {
    return this.#prefix;
  }

  /**
   * The Redis keys of a run, for operators and tests. All share the run's hash tag.
   *
   * @param runId A valid run ID.
   * @param toolCallId A valid tool call ID, for the record key.
   * @returns The run hash (which also keeps the run's begun keys), the progress list and (with
   *   `toolCallId`) the record hash keys.
   * @throws {TypeError} When an ID is not valid.
   */
  keys(runId: string, toolCallId?: string): { run: string; progress: string; record?: string } {
    if (!isSafeRunId(runId)) throw new TypeError("Invalid run ID");
    const keys = { run: this.#runKey(runId), progress: this.#progressKey(runId) };
    if (toolCallId === undefined) return keys;
    if (!isSafeToolCallId(toolCallId)) throw new TypeError("Invalid tool call ID");
    return { ...keys, record: this.#recordKey(runId, toolCallId) };
  }

  /** {@inheritDoc Store.startRun} */
  async startRun(
    request: StartRunRequest,
  ): Promise<StartRunReply> {
    const invalid = checkStartRunRequest(request);
    if (invalid !== null) return refuse(invalid);
    const args = [
      request.runId,
      request.attemptId,
      intArg(request.deadline),
      intArg(request.budget.calls),
      intArg(request.ttlMs),
      intArg(request.now),
      request.budget.cost === undefined ? "" : intArg(request.budget.cost),
    ];
    const perTool = Object.entries(request.budget.perTool);
    for (const [tool, limit] of perTool) args.push(tool, intArg(limit));
    const { runId } = request;
    // Issued together, so a batching store sends both in one pipeline request: the run indexes
    // have a hash tag of their own, which the startRun script may not touch.
    const indexed = this.#call(INDEX_RUN, this.#runsKeys(), [
      runId,
      intArg(request.now),
      intArg(request.ttlMs),
    ]);
    indexed.catch(() => {}); // awaited below; a start that fails first is not left unhandled
    const reply = await this.#call(
      START_RUN,
      [this.#runKey(runId), this.#progressKey(runId)],
      args,
    );
    // A run that is not listed is not started: the caller's retry of the attempt indexes it.
    await indexed;
    const status = replyStatus(reply);
    if (status !== "OK") return refusalOf(status, START_RUN_CODES);
    if (reply.length > 1) return { ok: true, run: this.#parse(() => toRun(reply.slice(1))) };
    // Created: every field is the request's.
    const budget: Record<string, number> = {};
    for (const [tool, limit] of perTool) setOwnBudget(budget, tool, limit);
    const run: RunState = {
      runId,
      status: "ACTIVE",
      deadline: request.deadline,
      startedAt: request.now,
      endedAt: null,
      budget: { calls: request.budget.calls, perTool: budget },
      used: { calls: 0, perTool: {} },
    };
    if (request.budget.cost !== undefined) {
      run.budget.cost = request.budget.cost;
      run.cost = { reserved: 0, spent: 0 };
    }
    return { ok: true, run };
  }

  /** {@inheritDoc Store.getRun} */
  async getRun(runId: string): Promise<RunState | null> {
    if (!isSafeRunId(runId)) return null;
    const reply = await this.#call(GET_RUN, this.#runReadKeys(runId), ["0"]);
    if (reply.length === 0) return null;
    return this.#parse(() => toRun(reply.slice(1)));
  }

  /** {@inheritDoc Store.begin} */
  async begin(request: BeginRequest): Promise<BeginReply> {
    const invalid = checkBeginRequest(request);
    if (invalid !== null) return refuse(invalid);
    const expiresAt = request.now + request.ttlMs;
    const replay = request.replay === true;
    const { startedAt } = request;
    const reply = await this.#call(
      BEGIN,
      [
        this.#runKey(request.runId),
        this.#recordKey(request.runId, request.toolCallId),
        this.#begunKey(request.runId),
      ],
      [
        request.runId,
        request.toolCallId,
        request.toolName,
        request.requestJson,
        request.attemptId,
        intArg(request.ttlMs),
        intArg(request.now),
        intArg(expiresAt),
        request.requestDigest,
        replay ? "1" : "0",
        startedAt === undefined ? "" : intArg(startedAt),
        request.cost === undefined ? "" : intArg(request.cost),
      ],
      // Before the tool may run, the replicas hold the record (a refusal wrote nothing).
      this.#durability === undefined
        ? undefined
        : (reply) => (replyStatus(reply) === "OK" ? this.#confirmReplicas() : undefined),
    );
    const status = replyStatus(reply);
    if (status !== "OK") {
      const refusal = refusalOf(status, BEGIN_CODES);
      if (refusal.code !== "DUPLICATE_TOOL_CALL" || !replay || reply[1] !== "REPLAY") {
        return refusal;
      }
      // Another attempt began the key with this digest: its record, or null once it expired.
      const record = reply.length > 2 ? this.#parse(() => toRecord(reply.slice(1))) : null;
      return { ok: false, code: "DUPLICATE_TOOL_CALL", record };
    }
    return this.#parse(() => {
      // The run's deadline and start, then (for a repeat of an attempt that already ran) the
      // record as stored.
      const run = { deadline: int(reply[1]), startedAt: int(reply[2]) };
      if (reply.length === 4) {
        // Created: every record field but its position is the request's.
        return { ok: true, run, record: projectingRecord(request, expiresAt, int(reply[3])) };
      }
      return { ok: true, run, record: toRecord(reply.slice(2)) };
    });
  }

  /** {@inheritDoc Store.complete} */
  async complete(
    request: CompleteRequest,
  ): Promise<CompleteReply> {
    const invalid = checkCompleteRequest(request);
    if (invalid !== null) return refuse(invalid);
    const { outcome } = request;
    const valid = isValidOutcome(outcome);
    const ready = valid && outcome.status === "READY";
    const rawJson = valid ? outcome.rawJson : null;
    const agentResultJson = ready ? outcome.agentResultJson : null;
    const { runId, toolCallId } = request;
    const proof = request.proof === undefined ? undefined : checkRecordProof(request.proof);
    const keys = [
      this.#recordKey(runId, toolCallId),
      this.#runKey(runId),
      this.#progressKey(runId),
    ];
    const reply = await this.#call(COMPLETE, keys, [
      request.toolCallId,
      request.attemptId,
      valid ? "1" : "0",
      valid ? outcome.status : "",
      ready ? outcome.evidence : "",
      valid && outcome.status === "ERROR" ? outcome.errorCode : "",
      rawJson === null ? "0" : "1",
      rawJson ?? "",
      agentResultJson === null ? "0" : "1",
      agentResultJson ?? "",
      intArg(request.now),
      proof === undefined ? "" : JSON.stringify(proof),
      proof?.hash ?? "",
      valid && outcome.status === "ERROR" && outcome.failure !== undefined
        ? JSON.stringify(checkFailure(outcome.failure))
        : "",
      request.spent === undefined ? "" : intArg(request.spent),
    ]);
    const status = replyStatus(reply);
    if (status !== "OK") return refusalOf(status, COMPLETE_CODES);
    // The reply carries only the fields the request does not: the script checked that the
    // attempt, the status, the evidence, the error code and the payloads stored are the ones sent.
    const record = this.#parse((): StoredRecord => {
      const [, toolName, requestJson, createdAt, expiresAt, seq, reserved, updatedAt, storedProof] =
        reply;
      const width = COMPLETE_FIELDS.length + 1;
      if (!valid || (reply.length !== width && reply.length !== width + 2)) throw unreadable();
      const begun: StoredRecord = {
        runId,
        toolCallId,
        toolName: text(toolName),
        status: "PROJECTING",
        evidence: null,
        requestJson: text(requestJson),
        rawJson: null,
        agentResultJson: null,
        errorCode: null,
        attemptId: request.attemptId,
        seq: int(seq),
        createdAt: int(createdAt),
        updatedAt: int(createdAt),
        expiresAt: int(expiresAt),
        ...costOf(reserved, null),
      };
      // The script checked that a repeat names what was spent first.
      const done = applyOutcome(
        begun,
        outcome,
        updatedAt === undefined ? request.now : int(updatedAt),
        request.spent,
      );
      // A repeat answers the proof stored first; a fresh complete stored the one sent.
      const kept = updatedAt === undefined ? (proof && { proof }) : proofOf(storedProof);
      return kept === undefined ? done : { ...done, ...kept };
    });
    return { ok: true, record };
  }

  /** {@inheritDoc Store.get} */
  async get(runId: string, toolCallId: string): Promise<StoredRecord | null> {
    if (!isSafeRunId(runId) || !isSafeToolCallId(toolCallId)) return null;
    const reply = await this.#call(GET, [this.#recordKey(runId, toolCallId)], []);
    if (reply.length === 0) return null;
    return this.#parse(() => toRecord(reply));
  }

  /** {@inheritDoc Store.endRun} */
  async endRun(request: EndRunRequest): Promise<EndRunReply> {
    const invalid = checkEndRunRequest(request);
    if (invalid !== null) return refuse(invalid);
    const keys = [this.#runKey(request.runId), this.#progressKey(request.runId)];
    const sealing = request.seal === true;
    const { page } = request;
    const reply = await this.#call(END_RUN, keys, [
      intArg(request.now),
      sealing ? "1" : "0",
      page === undefined ? "" : intArg(page.from),
      page === undefined ? "" : intArg(page.limit),
    ]);
    const status = replyStatus(reply);
    if (status !== "OK") return refusalOf(status, END_RUN_CODES);
    return this.#parse(() => {
      const items = int(reply[1]);
      const run = toRun(reply.slice(2, 2 + items));
      let at = 2 + items;
      let paged: EndRunPageState | undefined;
      if (page !== undefined) {
        const next = reply[at] ?? null;
        paged = { next: next === null ? null : int(next), left: int(reply[at + 1]) };
        at += 2;
      }
      const pageOf = paged === undefined ? {} : { page: paged };
      if (!sealing) {
        return { ok: true as const, run, toolCallIds: reply.slice(at).map(text), ...pageOf };
      }
      const count = int(reply[at]);
      const toolCallIds = reply.slice(at + 1, at + 1 + count).map(text);
      at += 1 + count;
      let completed: string[] | undefined;
      if (page !== undefined) {
        const done = int(reply[at]);
        completed = reply.slice(at + 1, at + 1 + done).map(text);
        at += 1 + done;
      }
      const sealJson = reply[at] ?? null;
      const begun: (BegunCall & { hash: string | null })[] = [];
      for (let i = at + 1; i + 2 < reply.length; i += 3) {
        const toolCallId = text(reply[i]);
        begun.push({ ...toBegunCall(toolCallId, reply[i + 1]), hash: reply[i + 2] ?? null });
      }
      begun.sort((a, b) => a.seq - b.seq);
      const calls = begun.map(({ toolCallId, hash }) => ({ toolCallId, hash }));
      const seal: SealState = completed === undefined
        ? { sealJson, calls }
        : { sealJson, calls, completed };
      return { ok: true as const, run, toolCallIds, seal, ...pageOf };
    });
  }

  /** {@inheritDoc RunSeal.sealRun} */
  async sealRun(request: SealRunRequest): Promise<SealRunReply> {
    if (typeof request?.sealJson !== "string") {
      throw new TypeError("Invalid sealJson: expected a string");
    }
    if (!isSafeRunId(request.runId)) return refuse("RUN_NOT_FOUND");
    const reply = await this.#call(SEAL_RUN, [this.#runKey(request.runId)], [request.sealJson]);
    const status = replyStatus(reply);
    if (status !== "OK") return refusalOf(status, END_RUN_CODES);
    return { ok: true, sealJson: this.#parse(() => text(reply[1])) };
  }

  /** {@inheritDoc RunSeal.exportRun} */
  async exportRun(runId: string): Promise<ExportRunReply> {
    if (!isSafeRunId(runId)) return null;
    const runReply = await this.#call(GET_RUN, this.#runReadKeys(runId), ["1"]);
    if (runReply.length === 0) return null;
    const begun: BegunCall[] = [];
    const items = runReply.slice(1);
    const run = this.#parse(() => toRun(items, begun));
    let sealJson: string | null = null;
    for (let i = 0; i + 1 < items.length; i += 2) if (items[i] === "seal") sealJson = items[i + 1]!;
    if (begun.length === 0) return { run, calls: [], sealJson };
    begun.sort((a, b) => a.seq - b.seq);
    // Second round trip: the record keys are known only now, and a script must declare them.
    const keys = begun.map((call) => this.#recordKey(runId, call.toolCallId));
    const reply = await this.#call(READ_RECORDS, keys, []);
    const width = RECORD_FIELDS.length;
    if (replyStatus(reply) !== "OK" || reply.length !== 1 + width * begun.length) {
      throw storeUnavailable(unreadable());
    }
    const calls = this.#parse(() =>
      begun.map(({ toolCallId }, i) => {
        const fields = reply.slice(i * width, (i + 1) * width + 1);
        // toRecord reads fields from position 1, as in a reply; absent once it expired.
        const absent = fields[RECORD_FIELDS.indexOf("attemptId") + 1] == null;
        return { toolCallId, record: absent ? null : toRecord(fields) };
      })
    );
    return { run, calls, sealJson };
  }

  /** {@inheritDoc RunIndex.listRuns} */
  async listRuns(request: ListRunsRequest): Promise<RunsPage> {
    const { limit, after } = checkListRunsRequest(request);
    const listed: RunSummary[] = [];
    let position = after;
    let gone: string[] = [];
    // Runs found gone (expired between the index and the read) are dropped by the next round.
    for (;;) {
      const want = limit + 1 - listed.length;
      const reply = await this.#call(LIST_RUNS, this.#runsKeys(), [
        "",
        String(want),
        position === null ? "" : intArg(position.startedAt),
        position?.runId ?? "",
        ...gone,
      ]);
      if (replyStatus(reply) !== "OK" || reply.length % 2 !== 1) {
        throw storeUnavailable(unreadable());
      }
      const ids: string[] = [];
      for (let i = 1; i < reply.length; i += 2) ids.push(text(reply[i]));
      const runs = await Promise.all(ids.map((runId) => this.#runSummary(runId)));
      gone = [];
      runs.forEach((run, i) => run === null ? gone.push(ids[i]!) : listed.push(run));
      if (ids.length < want || listed.length > limit) break;
      position = this.#parse(() => ({ runId: ids.at(-1)!, startedAt: int(reply.at(-1)) }));
    }
    return pageOf(listed, limit, false);
  }

  /** A run's line in listRuns, from its hash (GET_RUN, batched with the others of the page). */
  async #runSummary(runId: string): Promise<RunSummary | null> {
    if (!isSafeRunId(runId)) return null;
    const reply = await this.#call(GET_RUN, this.#runReadKeys(runId), ["0"], undefined, true);
    if (reply.length === 0) return null;
    return this.#parse(() => {
      const items = reply.slice(1);
      const run = toRun(items);
      let errors = 0;
      for (let i = 0; i + 1 < items.length; i += 2) {
        if (items[i] === "errors") errors = int(items[i + 1]);
      }
      return {
        runId: run.runId,
        status: run.status,
        startedAt: run.startedAt,
        endedAt: run.endedAt,
        calls: run.used.calls,
        errors,
        ...(run.cost === undefined ? {} : { cost: run.cost }),
      };
    });
  }

  /** {@inheritDoc Store.readFacts} */
  async readFacts(request: ReadFactsRequest): Promise<ReadFactsReply> {
    checkReadFactsRequest(request);
    const { runId, identities } = request;
    if (!isSafeRunId(runId)) return { rows: [], omitted: 0, unread: 0 };
    const recordKeys: string[] = [];
    // Where each key's identity is in the request, to tell the identities left unread.
    const positions: number[] = [];
    for (let i = 0; i < identities.length; i++) {
      const identity = identities[i]!;
      // Other runs' identities are excluded; an unsafe ID cannot name a stored record.
      if (identity.runId !== runId || !isSafeToolCallId(identity.toolCallId)) continue;
      recordKeys.push(this.#recordKey(runId, identity.toolCallId));
      positions.push(i);
    }
    if (recordKeys.length === 0) return { rows: [], omitted: 0, unread: 0 };
    const reply = await this.#call(READ_FACTS, recordKeys, [
      runId,
      capArg(request.maxFacts),
      capArg(request.maxBytes),
    ]);
    if (replyStatus(reply) !== "OK") throw storeUnavailable(unreadable());
    return this.#parse(() => {
      const rows: FactRow[] = [];
      const width = FACT_FIELDS.length;
      const unreadKeys = int(reply[2]);
      if (unreadKeys > recordKeys.length) throw new TypeError("More keys unread than sent");
      const unread = unreadKeys === 0
        ? 0
        : identities.length - positions[recordKeys.length - unreadKeys]!;
      for (let i = 3; i + width <= reply.length; i += width) {
        rows.push({
          runId,
          toolCallId: text(reply[i]),
          toolName: text(reply[i + 1]),
          status: "READY",
          evidence: text(reply[i + 2]) as EvidenceStatus,
          agentResultJson: text(reply[i + 3]),
          updatedAt: int(reply[i + 4]),
        });
      }
      return { rows, omitted: int(reply[1]), unread };
    });
  }

  /** {@inheritDoc CallIndex.lookupCall} */
  async lookupCall(
    runId: string,
    toolCallId: string,
    startedAt?: number,
  ): Promise<LookupCallReply> {
    const instance = startedAt === undefined ? "" : intArg(checkEpochMs("startedAt", startedAt));
    if (!isSafeRunId(runId)) return null;
    // Such an ID was never begun; only whether the run (the instance) exists is left to tell.
    if (!isSafeToolCallId(toolCallId)) {
      const run = await this.getRun(runId);
      return run === null || (startedAt !== undefined && run.startedAt !== startedAt)
        ? null
        : { call: null, record: null };
    }
    const keys = [this.#runKey(runId), this.#recordKey(runId, toolCallId)];
    const reply = await this.#call(LOOKUP_CALL, keys, [toolCallId, instance]);
    if (reply.length === 0) return null;
    if (replyStatus(reply) !== "OK") throw storeUnavailable(unreadable());
    if (reply.length === 1) return { call: null, record: null };
    return this.#parse(() => {
      const call = toBegunCall(toolCallId, reply[1]);
      const fields = reply.slice(1);
      // The record's attemptId is absent once it expired.
      const record = fields[RECORD_FIELDS.indexOf("attemptId") + 1] == null
        ? null
        : toRecord(fields);
      return { call, record };
    });
  }

  /** {@inheritDoc CallIndex.listCalls} */
  async listCalls(runId: string): Promise<{ run: RunState; calls: CallSummary[] } | null> {
    if (!isSafeRunId(runId)) return null;
    const runReply = await this.#call(GET_RUN, this.#runReadKeys(runId), ["1"]);
    if (runReply.length === 0) return null;
    const begun: BegunCall[] = [];
    const run = this.#parse(() => toRun(runReply.slice(1), begun));
    if (begun.length === 0) return { run, calls: [] };
    begun.sort((a, b) => a.seq - b.seq);
    // Second round trip: the record keys are known only now, and a script must declare them.
    const keys = begun.map((call) => this.#recordKey(runId, call.toolCallId));
    const reply = await this.#call(READ_CALLS, keys, []);
    const width = SUMMARY_FIELDS.length;
    if (replyStatus(reply) !== "OK" || reply.length !== 1 + width * begun.length) {
      throw storeUnavailable(unreadable());
    }
    const calls = this.#parse(() =>
      begun.map(({ toolCallId }, i) => {
        const [status, toolName, evidence, errorCode, createdAt, updatedAt] = reply.slice(
          1 + i * width,
          1 + (i + 1) * width,
        );
        return summarizeCall(
          toolCallId,
          status == null ? null : {
            status: text(status) as RecordStatus,
            toolName: text(toolName),
            evidence: (evidence ?? null) as EvidenceStatus | null,
            errorCode: (errorCode ?? null) as ErrorCode | null,
            createdAt: int(createdAt),
            updatedAt: int(updatedAt),
          },
        );
      })
    );
    return { run, calls };
  }

  /** The run indexes of listRuns: by startedAt, and by expiry. One hash tag, the store's own. */
  #runsKeys(): string[] {
    return [`${this.#prefix}:{runs}:started`, `${this.#prefix}:{runs}:expires`];
  }

  /** What a run read declares: the run hash, and its progress list (for its cost). */
  #runReadKeys(runId: string): string[] {
    return [this.#runKey(runId), this.#progressKey(runId)];
  }

  #runKey(runId: string): string {
    return `${this.#prefix}:{${runId}}:run`;
  }

  /** The set of begun tool call IDs of a run started before the run hash kept them. */
  #begunKey(runId: string): string {
    return `${this.#prefix}:{${runId}}:begun`;
  }

  #progressKey(runId: string): string {
    return `${this.#prefix}:{${runId}}:progress`;
  }

  #recordKey(runId: string, toolCallId: string): string {
    return `${this.#prefix}:{${runId}}:call:${toolCallId}`;
  }

  /** Runs a decoding step; a malformed reply is a store failure, not a crash. */
  #parse<T>(decode: () => T): T {
    try {
      return decode();
    } catch (error) {
      throw storeUnavailable(error);
    }
  }

  /**
   * `WAIT replicas timeoutMs` (the durability option): throws when fewer replicas confirmed.
   * On Upstash `WAIT` covers every write made before it, from any connection, so it covers the
   * begin that came in a request of its own.
   */
  async #confirmReplicas(): Promise<void> {
    const { replicas, timeoutMs } = this.#durability!;
    const answer = await this.#redis.exec!(["WAIT", String(replicas), String(timeoutMs)]);
    const confirmed = typeof answer === "string" ? Number(answer) : answer;
    if (typeof confirmed !== "number" || !Number.isSafeInteger(confirmed)) throw unreadable();
    if (confirmed < replicas) {
      throw new RedisStoreError(
        "DurabilityError",
        `${confirmed} of ${replicas} replicas confirmed the begin within ${timeoutMs} ms`,
      );
    }
  }

  /**
   * One script, one round trip: EVALSHA, then EVAL only when Redis lost the script; begins and
   * completes through the batcher (`batch`), which may share the round trip with others. `then`
   * runs on the decoded reply within the same time bound.
   */
  async #call(
    script: LuaScript,
    keys: string[],
    args: string[],
    then?: (reply: Reply) => Promise<void> | undefined,
    batch = false,
  ): Promise<Reply> {
    const attempt = async (): Promise<Reply> => {
      // Once computed, the scripts are read without an await (a turn of the event loop).
      const sent = (sentScriptsNow.get(this.#keyLocking) ?? await scriptsFor(this.#keyLocking))
        .get(script)!;
      const batched = this.#batcher !== undefined &&
        (batch || script === BEGIN || script === COMPLETE || script === START_RUN ||
          script === INDEX_RUN);
      const reply = batched
        ? await this.#batcher!.send(sent, keys, args)
        : await sendOne(this.#redis, sent, keys, args);
      const decoded = decodeReply(reply);
      await then?.(decoded);
      return decoded;
    };
    try {
      return await (this.#limit === undefined ? attempt() : this.#limit.within(attempt()));
    } catch (error) {
      throw storeUnavailable(error);
    }
  }
}
