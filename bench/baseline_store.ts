/**
 * The baseline for figure 1: the `Store` a competent user would write on ordinary
 * `@upstash/redis` commands, without Lua scripts, keeping the same checks as `UpstashStore`.
 *
 * What `BaselineStore` does per operation (each `await` is one REST round trip; nothing is
 * pipelined by hand, and since every step waits for the one before, the client's
 * auto-pipelining never batches two of them):
 *
 * - `begin`: `HGETALL` the run hash (exists, ACTIVE, before its deadline); `SET record NX PX`
 *   (duplicate check, record and TTL in one command); `HINCRBY` the tool counter and `HINCRBY`
 *   the run counter, each rolled back (`HINCRBY -1`, `DEL`) when it went over its budget.
 *   4 round trips.
 * - `complete`: read-check-write: `GET` the record (absent: RECORD_EXPIRED; same attempt and
 *   PROJECTING), `SET record XX KEEPTTL`, `RPUSH` the progress list (on the first push, `PTTL`
 *   of the run and `PEXPIRE` of the list, once per run). 3 round trips.
 * - `endRun`: `HGETALL`, `HSET` status ENDED (first time), `LRANGE`. `readFacts`: one `MGET`.
 *
 * `PipelinedBaselineStore` makes the same checks with one pipeline per phase (begin 1 round
 * trip, complete 2), as a user who batches by hand would: the fairer comparison over a network.
 *
 * Records are JSON strings (`SET` with an object, as the client encourages). Left out, because
 * a straightforward version would not have them and each only makes the baseline faster: the
 * atomicity of each transition (there are windows between the commands), the rule that a
 * tool call ID stays used after its record expired, telling a conflict from a duplicate, and
 * the optional capabilities (it is a `Store` of the required core alone).
 *
 * @module
 */
import type { Redis } from "@upstash/redis";
import type { ErrorCode } from "../src/core/errors.ts";
import type {
  BeginReply,
  BeginRequest,
  CompleteReply,
  CompleteRequest,
  EndRunReply,
  EndRunRequest,
  FactRow,
  ReadFactsRequest,
  RunState,
  StartRunReply,
  StartRunRequest,
  Store,
  StoredRecord,
  StoreRefusal,
} from "../src/core/store.ts";
import { factRowOf, projectingRecord } from "../src/core/records.ts";

const refuse = <C extends ErrorCode>(code: C): StoreRefusal<C> => ({ ok: false, code });

/** A `Store` on plain Redis commands: several round trips per transition, no scripts. */
export class BaselineStore implements Store {
  /** The client. */
  protected readonly redis: Redis;
  readonly #prefix: string;

  /** @param redis The client. @param prefix Key prefix. */
  constructor(redis: Redis, prefix = "baseline") {
    this.redis = redis;
    this.#prefix = prefix;
  }

  /** The run hash's key. */
  protected runKey(runId: string): string {
    return `${this.#prefix}:{${runId}}:run`;
  }
  /** The progress list's key. */
  protected progressKey(runId: string): string {
    return `${this.#prefix}:{${runId}}:progress`;
  }
  /** A record's key. */
  protected recordKey(runId: string, toolCallId: string): string {
    return `${this.#prefix}:{${runId}}:call:${toolCallId}`;
  }

  /** {@inheritDoc Store.startRun} */
  async startRun(
    request: StartRunRequest,
  ): Promise<StartRunReply> {
    const key = this.runKey(request.runId);
    const existing = await this.redis.hgetall<Record<string, unknown>>(key);
    if (existing !== null) {
      return String(existing.attemptId) === request.attemptId
        ? { ok: true, run: toRun(existing) }
        : refuse("RUN_ALREADY_EXISTS");
    }
    const hash: Record<string, string | number> = {
      runId: request.runId,
      status: "ACTIVE",
      deadline: request.deadline,
      startedAt: request.now,
      calls: request.budget.calls,
      used: 0,
      attemptId: request.attemptId,
    };
    for (const [tool, limit] of Object.entries(request.budget.perTool)) hash[`b:${tool}`] = limit;
    await this.redis.hset(key, hash);
    await this.redis.pexpire(key, request.ttlMs);
    return { ok: true, run: toRun(hash) };
  }

  /** {@inheritDoc Store.getRun} */
  async getRun(runId: string): Promise<RunState | null> {
    const hash = await this.redis.hgetall<Record<string, unknown>>(this.runKey(runId));
    return hash === null ? null : toRun(hash);
  }

  /** {@inheritDoc Store.begin} */
  async begin(request: BeginRequest): Promise<BeginReply> {
    const runKey = this.runKey(request.runId);
    const recordKey = this.recordKey(request.runId, request.toolCallId);
    const run = await this.redis.hgetall<Record<string, unknown>>(runKey);
    if (run === null) return refuse("RUN_NOT_FOUND");
    const state = toRun(run);
    if (request.startedAt !== undefined && state.startedAt !== request.startedAt) {
      return refuse("RUN_NOT_FOUND");
    }
    const begunRun = { deadline: state.deadline, startedAt: state.startedAt };
    if (run.status !== "ACTIVE") return refuse("RUN_INACTIVE");
    if (request.now >= Number(run.deadline)) return refuse("DEADLINE_EXCEEDED");
    // What a user would write keeps no position in the run.
    const record = projectingRecord(request, request.now + request.ttlMs, 0);
    const created = await this.redis.set(recordKey, record, { nx: true, px: request.ttlMs });
    if (created === null) {
      const existing = await this.redis.get<StoredRecord>(recordKey);
      if (existing?.attemptId === request.attemptId) {
        return { ok: true, record: existing, run: begunRun };
      }
      return refuse("DUPLICATE_TOOL_CALL");
    }
    const toolLimit = run[`b:${request.toolName}`];
    if (toolLimit !== undefined) {
      const used = await this.redis.hincrby(runKey, `u:${request.toolName}`, 1);
      if (used > Number(toolLimit)) {
        await this.redis.hincrby(runKey, `u:${request.toolName}`, -1);
        await this.redis.del(recordKey);
        return refuse("TOOL_BUDGET_EXHAUSTED");
      }
    }
    const used = await this.redis.hincrby(runKey, "used", 1);
    if (used > Number(run.calls)) {
      await this.redis.hincrby(runKey, "used", -1);
      if (toolLimit !== undefined) await this.redis.hincrby(runKey, `u:${request.toolName}`, -1);
      await this.redis.del(recordKey);
      return refuse("RUN_BUDGET_EXHAUSTED");
    }
    return { ok: true, record, run: begunRun };
  }

  /** {@inheritDoc Store.complete} */
  async complete(
    request: CompleteRequest,
  ): Promise<CompleteReply> {
    const recordKey = this.recordKey(request.runId, request.toolCallId);
    const record = await this.redis.get<StoredRecord>(recordKey);
    if (record === null) return refuse("RECORD_EXPIRED");
    if (record.attemptId !== request.attemptId || record.status !== "PROJECTING") {
      return refuse("ILLEGAL_TRANSITION");
    }
    const next = completedRecord(record, request);
    const written = await this.redis.set(recordKey, next, { xx: true, keepTtl: true });
    if (written === null) return refuse("RECORD_EXPIRED");
    const progressKey = this.progressKey(request.runId);
    if (await this.redis.rpush(progressKey, request.toolCallId) === 1) {
      const ttl = await this.redis.pttl(this.runKey(request.runId));
      if (ttl > 0) await this.redis.pexpire(progressKey, ttl);
    }
    return { ok: true, record: next };
  }

  /** {@inheritDoc Store.get} */
  get(runId: string, toolCallId: string): Promise<StoredRecord | null> {
    return this.redis.get<StoredRecord>(this.recordKey(runId, toolCallId));
  }

  /** {@inheritDoc Store.endRun} */
  async endRun(
    request: EndRunRequest,
  ): Promise<EndRunReply> {
    const runKey = this.runKey(request.runId);
    const run = await this.redis.hgetall<Record<string, unknown>>(runKey);
    if (run === null) return refuse("RUN_NOT_FOUND");
    if (run.status === "ACTIVE") {
      await this.redis.hset(runKey, { status: "ENDED", endedAt: request.now });
      run.status = "ENDED";
      run.endedAt = request.now;
    }
    const ids = await this.redis.lrange<string>(this.progressKey(request.runId), 0, -1);
    return { ok: true, run: toRun(run), toolCallIds: ids.map(String) };
  }

  /** {@inheritDoc Store.readFacts} */
  async readFacts(request: ReadFactsRequest): Promise<{ rows: FactRow[]; omitted: number }> {
    const identities = request.identities.filter((id) => id.runId === request.runId);
    if (identities.length === 0) return { rows: [], omitted: 0 };
    const records = await this.redis.mget<(StoredRecord | null)[]>(
      identities.map((id) => this.recordKey(id.runId, id.toolCallId)),
    );
    const rows: FactRow[] = [];
    let bytes = 0;
    let omitted = 0;
    for (const record of records) {
      const row = factRowOf(record);
      if (row === null) continue;
      const size = new TextEncoder().encode(row.agentResultJson).length;
      if (rows.length >= request.maxFacts || bytes + size > request.maxBytes) {
        omitted++;
        continue;
      }
      bytes += size;
      rows.push(row);
    }
    return { rows, omitted };
  }
}

/**
 * The same checks as {@linkcode BaselineStore}, on the same keys, sent as a user who pipelines
 * them by hand would: one `@upstash/redis` pipeline (one REST request) per phase, the checks made
 * on its replies. Only what depends on an earlier reply waits for it.
 *
 * - `begin`, 1 round trip: `HGETALL` the run, `SET record NX PX`, `HINCRBY` the tool counter and
 *   `HINCRBY` the run counter in one pipeline, written before they are checked. The run's
 *   checks, the duplicate check and both budgets are then read from the replies, and a refusal
 *   undoes the writes in a second request (`DEL`, `HINCRBY -1`; the run hash itself when the
 *   counters created it). A resent begin reads the record: one more.
 * - `complete`, 2 round trips: `GET` the record (absent: RECORD_EXPIRED; same attempt and
 *   PROJECTING), since what is written depends on it; then `SET record XX KEEPTTL`, `RPUSH` the
 *   progress list and `PTTL` the run in one pipeline (`PEXPIRE` of the list after its first
 *   push, once per run; `LREM` undoes the push when the record expired in between).
 *
 * The other operations are `BaselineStore`'s (none of them is timed in the benchmarks).
 */
export class PipelinedBaselineStore extends BaselineStore {
  /** @param redis The client. @param prefix Key prefix. */
  constructor(redis: Redis, prefix = "pipelined") {
    super(redis, prefix);
  }

  /** {@inheritDoc Store.begin} */
  override async begin(request: BeginRequest): Promise<BeginReply> {
    const runKey = this.runKey(request.runId);
    const recordKey = this.recordKey(request.runId, request.toolCallId);
    const toolField = `u:${request.toolName}`;
    const record = projectingRecord(request, request.now + request.ttlMs, 0);
    const [run, created, toolUsed, used] = await this.redis.pipeline()
      .hgetall<Record<string, unknown>>(runKey)
      .set(recordKey, record, { nx: true, px: request.ttlMs })
      .hincrby(runKey, toolField, 1)
      .hincrby(runKey, "used", 1)
      .exec<[Record<string, unknown> | null, "OK" | null, number, number]>();
    const undo = async (keepRecord: boolean) => {
      const pipeline = this.redis.pipeline();
      if (created !== null && !keepRecord) pipeline.del(recordKey);
      if (run === null) pipeline.del(runKey);
      else pipeline.hincrby(runKey, toolField, -1).hincrby(runKey, "used", -1);
      await pipeline.exec();
    };
    if (run === null) {
      await undo(false);
      return refuse("RUN_NOT_FOUND");
    }
    const state = toRun(run);
    const refusal: ErrorCode | null =
      request.startedAt !== undefined && state.startedAt !== request.startedAt
        ? "RUN_NOT_FOUND"
        : run.status !== "ACTIVE"
        ? "RUN_INACTIVE"
        : request.now >= Number(run.deadline)
        ? "DEADLINE_EXCEEDED"
        : null;
    if (refusal !== null) {
      await undo(false);
      return refuse(refusal);
    }
    const begunRun = { deadline: state.deadline, startedAt: state.startedAt };
    if (created === null) {
      await undo(true);
      const existing = await this.redis.get<StoredRecord>(recordKey);
      if (existing?.attemptId === request.attemptId) {
        return { ok: true, record: existing, run: begunRun };
      }
      return refuse("DUPLICATE_TOOL_CALL");
    }
    const toolLimit = run[`b:${request.toolName}`];
    if (toolLimit !== undefined && toolUsed > Number(toolLimit)) {
      await undo(false);
      return refuse("TOOL_BUDGET_EXHAUSTED");
    }
    if (used > Number(run.calls)) {
      await undo(false);
      return refuse("RUN_BUDGET_EXHAUSTED");
    }
    return { ok: true, record, run: begunRun };
  }

  /** {@inheritDoc Store.complete} */
  override async complete(request: CompleteRequest): Promise<CompleteReply> {
    const recordKey = this.recordKey(request.runId, request.toolCallId);
    const record = await this.redis.get<StoredRecord>(recordKey);
    if (record === null) return refuse("RECORD_EXPIRED");
    if (record.attemptId !== request.attemptId || record.status !== "PROJECTING") {
      return refuse("ILLEGAL_TRANSITION");
    }
    const next = completedRecord(record, request);
    const progressKey = this.progressKey(request.runId);
    const [written, pushed, ttl] = await this.redis.pipeline()
      .set(recordKey, next, { xx: true, keepTtl: true })
      .rpush(progressKey, request.toolCallId)
      .pttl(this.runKey(request.runId))
      .exec<["OK" | null, number, number]>();
    if (written === null) {
      await this.redis.lrem(progressKey, -1, request.toolCallId);
      return refuse("RECORD_EXPIRED");
    }
    if (pushed === 1 && ttl > 0) await this.redis.pexpire(progressKey, ttl);
    return { ok: true, record: next };
  }
}

/** The record after its complete: READY or ERROR, with what the outcome carries. */
function completedRecord(record: StoredRecord, request: CompleteRequest): StoredRecord {
  const { outcome } = request;
  return outcome.status === "READY"
    ? {
      ...record,
      status: "READY",
      evidence: outcome.evidence,
      rawJson: outcome.rawJson,
      agentResultJson: outcome.agentResultJson,
      updatedAt: request.now,
    }
    : {
      ...record,
      status: "ERROR",
      evidence: "ERROR",
      rawJson: outcome.rawJson,
      errorCode: outcome.errorCode,
      updatedAt: request.now,
    };
}

function toRun(hash: Record<string, unknown>): RunState {
  const budget: Record<string, number> = {};
  const used: Record<string, number> = {};
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith("b:")) budget[field.slice(2)] = Number(value);
    if (field.startsWith("u:")) used[field.slice(2)] = Number(value);
  }
  return {
    runId: String(hash.runId),
    status: hash.status === "ENDED" ? "ENDED" : "ACTIVE",
    deadline: Number(hash.deadline),
    startedAt: Number(hash.startedAt),
    endedAt: hash.endedAt === undefined ? null : Number(hash.endedAt),
    budget: { calls: Number(hash.calls), perTool: budget },
    used: { calls: Number(hash.used), perTool: used },
  };
}
