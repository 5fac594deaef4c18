/**
 * `UpstashStore`: the canonical store on Upstash Redis, over REST, one Lua script per transition.
 *
 * @module
 */
import { type ErrorCode, isErrorCode } from "../../core/errors.ts";
import { checkFailure } from "../../core/failure.ts";
import { isSafeRunId, isSafeToolCallId } from "../../core/ids.ts";
import { applyOutcome, isValidOutcome, summarizeCall } from "../../core/lifecycle.ts";
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
} from "../../core/limits.ts";
import { projectingRecord } from "../../core/records.ts";
import { pageOf } from "../../core/runs_page.ts";
import { checkRecordProof } from "../../core/ledger.ts";
import type { RecordProof } from "../../core/types.ts";
import type {
  BeginReply,
  BeginRequest,
  BegunCall,
  CallLookup,
  CallSummary,
  CompleteRefusal,
  CompleteRequest,
  EndRunPageState,
  EndRunRefusal,
  EndRunReply,
  EndRunRequest,
  FactRow,
  ListRunsRequest,
  ReadFactsReply,
  ReadFactsRequest,
  RunExport,
  RunsPage,
  RunState,
  RunSummary,
  SealRunRequest,
  SealState,
  StartRunRefusal,
  StartRunRequest,
  Store,
  StoredRecord,
  StoreRefusal,
} from "../../core/store.ts";
import type { EvidenceStatus, RecordStatus, ToolFailure } from "../../core/types.ts";
import { ScriptBatcher, sendOne, type SentScript, type UpstashPipeline } from "./batch.ts";
import { TimeLimit } from "./time_limit.ts";
import { RedisStoreError, storeUnavailable } from "./errors.ts";
import {
  BEGIN,
  COMPLETE,
  COMPLETE_FIELDS,
  END_RUN,
  FACT_FIELDS,
  GET,
  GET_RUN,
  INDEX_RUN,
  keyLockingSource,
  LIST_RUNS,
  LOOKUP_CALL,
  type LuaScript,
  READ_CALLS,
  READ_FACTS,
  READ_RECORDS,
  RECORD_FIELDS,
  SCRIPTS,
  SEAL_RUN,
  START_RUN,
  SUMMARY_FIELDS,
} from "./scripts.ts";

/**
 * The part of an `@upstash/redis` `Redis` client the store uses. A `Redis` from
 * `@upstash/redis`, `@upstash/redis/cloudflare` or `@upstash/redis/fastly` fits as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redis } from "@upstash/redis";
 * import type { UpstashRedisClient } from "@tool-boundary/core/upstash";
 *
 * const redis: UpstashRedisClient = new Redis({ url: "https://example.upstash.io", token: "t" });
 * assert.equal(typeof redis.evalsha, "function");
 * ```
 */
export interface UpstashRedisClient {
  /** `EVALSHA sha numkeys ...keys ...args`. */
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  /** `EVAL script numkeys ...keys ...args`. */
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  /**
   * Any command (`@upstash/redis` 1.34.4 and later); used only for `WAIT`, and only with the
   * store's `durability` option.
   */
  exec?(args: [string, ...string[]]): Promise<unknown>;
  /**
   * A pipeline (`POST /pipeline`): used to send the begins and completes issued together in one
   * request (the store's `batch` option). Without it the store sends every call alone.
   */
  pipeline?(): UpstashPipeline;
}

/**
 * `batch` of {@linkcode UpstashStoreOptions}: how begins and completes issued together are
 * packed into one pipeline request.
 */
export interface UpstashBatchOptions {
  /**
   * The largest JSON body of one pipeline request, in bytes (keys and arguments counted as the
   * client sends them, escapes included). A call that would take a batch past it opens the next
   * one; a call over it on its own is sent alone, as a single command. Keep it well under
   * Upstash's max request size (10 MB), which refuses an oversized request as a whole.
   * @default 1048576
   */
  maxBytes?: number;
}

/**
 * `durability` of {@linkcode UpstashStoreOptions}: how many replicas must hold a begun record
 * before the tool may run.
 */
export interface UpstashDurability {
  /** Replicas that must confirm the begin (`WAIT`'s first argument): a positive integer. */
  replicas: number;
  /**
   * How long to wait for them, in ms (`WAIT`'s second): a positive integer, less than the
   * store's `timeoutMs`.
   */
  timeoutMs: number;
}

/**
 * Options of {@linkcode UpstashStore}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redis } from "@upstash/redis";
 * import { type UpstashStoreOptions, UpstashStore } from "@tool-boundary/core/upstash";
 *
 * const options: UpstashStoreOptions = {
 *   redis: new Redis({ url: "https://example.upstash.io", token: "t" }),
 *   prefix: "my-app",
 *   timeoutMs: 5_000,
 * };
 * assert.equal(new UpstashStore(options).prefix, "my-app");
 * ```
 */
export interface UpstashStoreOptions {
  /**
   * The client, e.g. `Redis.fromEnv({ enableAutoPipelining: false })`. Only `eval` and `evalsha`
   * are used (and `exec`, for `durability`). Turn the client's auto-pipelining off: with it on
   * (its default) calls made in the same tick share one `/pipeline` request, and Upstash refuses
   * a request over its max request size (10 MB) as a whole, failing every call in it.
   */
  redis: UpstashRedisClient;
  /**
   * Prepended to every key: `<prefix>:{<runId>}:run`, `<prefix>:{<runId>}:call:<toolCallId>`,
   * `<prefix>:{<runId>}:progress`. 1 to 64 of `A-Z a-z 0-9 _ - . :` (no braces: the run ID is
   * the Redis Cluster hash tag).
   * @default "tb"
   */
  prefix?: string;
  /**
   * The longest one store operation may take, client retries included, in ms. Past it the
   * operation fails with STORE_UNAVAILABLE (the request may still reach Redis later; every
   * script is safe to run late or twice). `Infinity` turns the bound off, leaving only the
   * client's own: `@upstash/redis` sets no timeout on `fetch` by default.
   * @default 10000
   */
  timeoutMs?: number;
  /**
   * Starts every script with `#!lua flags=allow-key-locking` (`#!lua
   * flags=no-writes,allow-key-locking` for those that only read: `get`, `getRun`, `readFacts`,
   * `lookupCall`, `readCalls` of `listCalls` and `readRecords` of `exportRun`),
   * so that Upstash locks only the keys a script declares in KEYS (all of one run) instead of the
   * whole database while it runs, so scripts of different runs need not wait for each other.
   * Every script touches only its declared keys, as the flag requires.
   *
   * Off by default because stock redis-server (7.x) refuses the flag (`ERR Unexpected flag in
   * script shebang: allow-key-locking`, for `EVAL` and `SCRIPT LOAD` alike), and so do
   * Upstash-compatible proxies in front of it that pass scripts on unchanged: with it on there,
   * every operation fails with STORE_UNAVAILABLE. Turn it on when `redis` talks to Upstash
   * itself (or to an endpoint that drops the flag before passing the script on), typically when
   * many runs share one database and contend.
   * @default false
   */
  keyLocking?: boolean;
  /**
   * Makes a begin durable before the tool runs: after a begin that answered OK (the record was
   * created, or a resent begin of the same attempt found it), the store sends `WAIT replicas
   * timeoutMs`, and throws STORE_UNAVAILABLE when fewer replicas confirmed in time. Replication
   * is asynchronous on Upstash (and on Redis): without it, a failover right after a begin can
   * promote a replica that never got the record, and a retry of the same tool call then begins
   * again and the tool runs twice. With it, such a begin fails closed instead (the record stays
   * on the old primary, PROJECTING, and the tool does not run).
   *
   * Costs one more request per begin (a script cannot call `WAIT`, and `@upstash/redis` has no
   * way to put an arbitrary command in the begin's `/pipeline`), plus the replicas' round trip.
   * Needs `redis.exec` (`@upstash/redis` 1.34.4 or later).
   * @default undefined (no wait)
   */
  durability?: UpstashDurability;
  /**
   * Packs the begins and the completes issued together (by parallel calls of one step, within
   * a few microtask rounds of each other) into one REST request to the pipeline endpoint, each
   * still its own atomic script with its own answer: one call's refusal, script error or
   * NOSCRIPT never fails or repeats another. A failure of the whole request (an HTTP error, or
   * no response after the client's retries) fails each call in it as it would fail the call
   * sent alone; a resent begin or complete of the same attempt is recognised, as always. A call
   * alone in its batch is sent as the single command it always was. Needs `redis.pipeline`
   * (every `@upstash/redis` client has it); `false` sends every call alone.
   * @default { maxBytes: 1048576 } (on, when `redis.pipeline` exists)
   */
  batch?: false | UpstashBatchOptions;
}

const PREFIX_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
const DEFAULT_TIMEOUT_MS = 10_000;
/** 1 MiB: a tenth of Upstash's max request size, so JSON escapes cannot take a batch near it. */
const DEFAULT_BATCH_BYTES = 1024 * 1024;

type Reply = (string | null)[];

/**
 * A script's reply: one JSON array of strings and `false` (absent), see scripts.ts. The client
 * hands it over parsed (`automaticDeserialization` on, the default) or as the string.
 */
function decodeReply(reply: unknown): Reply {
  let items = reply;
  if (typeof reply === "string") {
    try {
      items = JSON.parse(reply);
    } catch {
      throw unreadable();
    }
  }
  if (!Array.isArray(items)) throw unreadable();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === false) items[i] = null;
    else if (typeof item !== "string") throw unreadable();
  }
  return items as Reply;
}

function unreadable(): RedisStoreError {
  return new RedisStoreError("ReplyError", "Unexpected reply from Redis");
}

/** The first element: "OK" or a refusal code. */
function replyStatus(reply: Reply): "OK" | ErrorCode {
  const status = reply[0];
  if (status === "OK" || isErrorCode(status)) return status;
  throw unreadable();
}

const START_RUN_CODES = ["RUN_ALREADY_EXISTS"] as const;
const BEGIN_CODES = [
  "RUN_NOT_FOUND",
  "RUN_INACTIVE",
  "DEADLINE_EXCEEDED",
  "DUPLICATE_TOOL_CALL",
  "TOOL_CALL_CONFLICT",
  "TOOL_BUDGET_EXHAUSTED",
  "RUN_BUDGET_EXHAUSTED",
] as const;
const COMPLETE_CODES = ["RECORD_EXPIRED", "ILLEGAL_TRANSITION"] as const;
const END_RUN_CODES = ["RUN_NOT_FOUND"] as const;

/** A script's refusal, which must be one its method can give; anything else is unreadable. */
function refusalOf<C extends ErrorCode>(code: ErrorCode, codes: readonly C[]): StoreRefusal<C> {
  if (!(codes as readonly ErrorCode[]).includes(code)) throw storeUnavailable(unreadable());
  return { ok: false, code: code as C };
}

/** A begun key as the run hash keeps it: `<seq>:<attemptId>:<requestDigest>`. */
function toBegunCall(toolCallId: string, value: string | null | undefined): BegunCall {
  // The digest holds no ':' (REQUEST_DIGEST_PATTERN); an attempt ID may.
  const match = /^(\d+):(.*):([^:]*)$/s.exec(text(value));
  if (match === null) throw unreadable();
  return { toolCallId, requestDigest: match[3]!, attemptId: match[2]!, seq: int(match[1]) };
}

function int(value: string | null | undefined): number {
  const n = Number(value);
  if (value === null || value === undefined || value === "" || !Number.isFinite(n)) {
    throw unreadable();
  }
  return n;
}

function text(value: string | null | undefined): string {
  if (typeof value !== "string") throw unreadable();
  return value;
}

/** Builds a record from reply elements laid out as `RECORD_FIELDS`. */
function toRecord(reply: Reply): StoredRecord {
  const at = (name: (typeof RECORD_FIELDS)[number]) => reply[RECORD_FIELDS.indexOf(name) + 1];
  return {
    runId: text(at("runId")),
    toolCallId: text(at("toolCallId")),
    toolName: text(at("toolName")),
    status: text(at("status")) as RecordStatus,
    evidence: (at("evidence") ?? null) as EvidenceStatus | null,
    requestJson: text(at("requestJson")),
    rawJson: at("rawJson") ?? null,
    agentResultJson: at("agentResultJson") ?? null,
    errorCode: (at("errorCode") ?? null) as ErrorCode | null,
    attemptId: text(at("attemptId")),
    createdAt: int(at("createdAt")),
    updatedAt: int(at("updatedAt")),
    expiresAt: int(at("expiresAt")),
    ...failureOf(at("failure")),
    ...proofOf(at("proof")),
  };
}

/** A record's `failure` field (JSON text), as the record's `failure` member. */
function failureOf(value: string | null | undefined): { failure?: ToolFailure } {
  if (value == null) return {};
  try {
    return { failure: checkFailure(JSON.parse(value)) };
  } catch {
    throw unreadable();
  }
}

/** A record's `proof` field (JSON text), as the record's `proof` member. */
function proofOf(value: string | null | undefined): { proof?: RecordProof } {
  if (value == null) return {};
  try {
    return { proof: checkRecordProof(JSON.parse(value)) };
  } catch {
    throw unreadable();
  }
}

/**
 * Builds a run from `field, value, ...` items of its hash; its begun keys (`c:` fields), when
 * the reply holds them, go to `calls`.
 */
function toRun(items: Reply, calls?: BegunCall[]): RunState {
  const hash = new Map<string, string>();
  const budget: Record<string, number> = {};
  const used: Record<string, number> = {};
  for (let i = 0; i + 1 < items.length; i += 2) {
    const field = text(items[i]);
    const value = text(items[i + 1]);
    if (field.startsWith("b:")) setOwnBudget(budget, field.slice(2), int(value));
    else if (field.startsWith("u:")) setOwnBudget(used, field.slice(2), int(value));
    else if (field.startsWith("c:")) calls?.push(toBegunCall(field.slice(2), value));
    else hash.set(field, value);
  }
  const status = hash.get("status");
  if (status !== "ACTIVE" && status !== "ENDED") throw unreadable();
  const endedAt = hash.get("endedAt");
  return {
    runId: text(hash.get("runId")),
    status,
    deadline: int(hash.get("deadline")),
    startedAt: int(hash.get("startedAt")),
    endedAt: endedAt === undefined ? null : int(endedAt),
    budget: { calls: int(hash.get("calls")), perTool: budget },
    used: { calls: int(hash.get("used")), perTool: used },
  };
}

/**
 * A number as a script's ARGV: a plain integer string. Upstash's Lua reads nothing else exactly:
 * its `tonumber` returns nil for "1e+21", "1e308" or "5e-7", which `String()` gives for numbers
 * the store never sends now, and a number past 2^53 would not be the one meant.
 */
function intArg(value: number): string {
  if (!Number.isSafeInteger(value) || Object.is(value, -0)) {
    throw new RangeError("Invalid number for Redis: expected a safe integer");
  }
  return String(value);
}

/** "No cap" as a plain integer: no count of facts or of their bytes can reach it. */
const NO_CAP = Number.MAX_SAFE_INTEGER;

function capArg(value: number): string {
  return intArg(value === Number.POSITIVE_INFINITY ? NO_CAP : value);
}

function refuse<C extends ErrorCode>(code: C): StoreRefusal<C> {
  return { ok: false, code };
}

/** Per `keyLocking` value: the scripts as sent; `sentScriptsNow` once they are computed. */
const sentScripts = new Map<boolean, Promise<Map<LuaScript, SentScript>>>();
const sentScriptsNow = new Map<boolean, Map<LuaScript, SentScript>>();

/**
 * Every script as sent, with or without the key-locking first line, and the SHA-1 of that exact
 * source: computed once per process and option value, with WebCrypto.
 */
function scriptsFor(keyLocking: boolean): Promise<Map<LuaScript, SentScript>> {
  let scripts = sentScripts.get(keyLocking);
  if (scripts === undefined) {
    scripts = Promise.all(SCRIPTS.map(async (script) => {
      const source = keyLocking ? keyLockingSource(script) : script.source;
      const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(source));
      const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"));
      return [script, { source, sha: hex.join("") }] as const;
    })).then((pairs) => {
      const computed = new Map(pairs);
      sentScriptsNow.set(keyLocking, computed);
      return computed;
    });
    sentScripts.set(keyLocking, scripts);
  }
  return scripts;
}

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
export class UpstashStore implements Store {
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
   * @param options The client, a key prefix, the per-operation time bound, key locking and
   *   durability.
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
    const redis = options?.redis;
    if (typeof redis?.evalsha !== "function" || typeof redis?.eval !== "function") {
      throw new TypeError(
        "Cannot create UpstashStore: options.redis must be an @upstash/redis client",
      );
    }
    const prefix = options.prefix ?? "tb";
    if (!PREFIX_PATTERN.test(prefix)) {
      throw new TypeError(
        "Cannot create UpstashStore: prefix must be 1 to 64 of A-Z a-z 0-9 _ - . :",
      );
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs) || timeoutMs <= 0) {
      throw new RangeError("Invalid timeoutMs: expected a positive number of milliseconds");
    }
    const keyLocking = options.keyLocking ?? false;
    if (typeof keyLocking !== "boolean") {
      throw new TypeError("Cannot create UpstashStore: keyLocking must be a boolean");
    }
    const durability = options.durability;
    if (durability !== undefined) {
      const { replicas, timeoutMs: waitMs } = (durability ?? {}) as Partial<UpstashDurability>;
      const positive = (n: unknown) => Number.isSafeInteger(n) && (n as number) > 0;
      if (!positive(replicas) || !positive(waitMs) || (waitMs as number) >= timeoutMs) {
        throw new RangeError(
          "Invalid durability: expected { replicas, timeoutMs } of positive integers, " +
            "timeoutMs below the store's timeoutMs",
        );
      }
      if (typeof redis.exec !== "function") {
        throw new TypeError(
          "Cannot create UpstashStore: durability needs options.redis.exec (@upstash/redis 1.34.4+)",
        );
      }
    }
    const batch = options.batch;
    let maxBytes = DEFAULT_BATCH_BYTES;
    if (batch !== undefined && batch !== false) {
      maxBytes = (batch ?? {} as UpstashBatchOptions).maxBytes ?? DEFAULT_BATCH_BYTES;
      if (
        typeof batch !== "object" || batch === null || !Number.isSafeInteger(maxBytes) ||
        maxBytes < 1
      ) {
        throw new RangeError("Invalid batch: expected false or { maxBytes } of a positive integer");
      }
      if (typeof redis.pipeline !== "function") {
        throw new TypeError("Cannot create UpstashStore: batch needs options.redis.pipeline");
      }
    }
    this.#batcher = batch === false || typeof redis.pipeline !== "function"
      ? undefined
      : new ScriptBatcher(redis as UpstashRedisClient & { pipeline(): UpstashPipeline }, maxBytes);
    this.#redis = redis;
    this.#prefix = prefix;
    this.#limit = timeoutMs > MAX_TIMER_MS ? undefined : new TimeLimit(timeoutMs);
    this.#keyLocking = keyLocking;
    this.#durability = durability === undefined
      ? undefined
      : Object.freeze({ replicas: durability.replicas, timeoutMs: durability.timeoutMs });
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
  ): Promise<{ ok: true; run: RunState } | StartRunRefusal> {
    const invalid = checkStartRunRequest(request);
    if (invalid !== null) return refuse(invalid);
    const args = [
      request.runId,
      request.attemptId,
      intArg(request.deadline),
      intArg(request.budget.calls),
      intArg(request.ttlMs),
      intArg(request.now),
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
    return {
      ok: true,
      run: {
        runId,
        status: "ACTIVE",
        deadline: request.deadline,
        startedAt: request.now,
        endedAt: null,
        budget: { calls: request.budget.calls, perTool: budget },
        used: { calls: 0, perTool: {} },
      },
    };
  }

  /** {@inheritDoc Store.getRun} */
  async getRun(runId: string): Promise<RunState | null> {
    if (!isSafeRunId(runId)) return null;
    const reply = await this.#call(GET_RUN, [this.#runKey(runId)], ["0"]);
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
      if (reply.length === 3) {
        // Created: every record field is the request's.
        return { ok: true, run, record: projectingRecord(request, expiresAt) };
      }
      return { ok: true, run, record: toRecord(reply.slice(2)) };
    });
  }

  /** {@inheritDoc Store.complete} */
  async complete(
    request: CompleteRequest,
  ): Promise<{ ok: true; record: StoredRecord } | CompleteRefusal> {
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
    ]);
    const status = replyStatus(reply);
    if (status !== "OK") return refusalOf(status, COMPLETE_CODES);
    // The reply carries only the fields the request does not: the script checked that the
    // attempt, the status, the evidence, the error code and the payloads stored are the ones sent.
    const record = this.#parse((): StoredRecord => {
      const [, toolName, requestJson, createdAt, expiresAt, updatedAt, storedProof] = reply;
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
        createdAt: int(createdAt),
        updatedAt: int(createdAt),
        expiresAt: int(expiresAt),
      };
      const done = applyOutcome(
        begun,
        outcome,
        updatedAt === undefined ? request.now : int(updatedAt),
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

  /** {@inheritDoc Store.sealRun} */
  async sealRun(request: SealRunRequest): Promise<{ ok: true; sealJson: string } | EndRunRefusal> {
    if (typeof request?.sealJson !== "string") {
      throw new TypeError("Invalid sealJson: expected a string");
    }
    if (!isSafeRunId(request.runId)) return refuse("RUN_NOT_FOUND");
    const reply = await this.#call(SEAL_RUN, [this.#runKey(request.runId)], [request.sealJson]);
    const status = replyStatus(reply);
    if (status !== "OK") return refusalOf(status, END_RUN_CODES);
    return { ok: true, sealJson: this.#parse(() => text(reply[1])) };
  }

  /** {@inheritDoc Store.exportRun} */
  async exportRun(runId: string): Promise<RunExport | null> {
    if (!isSafeRunId(runId)) return null;
    const runReply = await this.#call(GET_RUN, [this.#runKey(runId)], ["1"]);
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

  /** {@inheritDoc Store.listRuns} */
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
    const reply = await this.#call(GET_RUN, [this.#runKey(runId)], ["0"], undefined, true);
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

  /** {@inheritDoc Store.lookupCall} */
  async lookupCall(
    runId: string,
    toolCallId: string,
    startedAt?: number,
  ): Promise<CallLookup | null> {
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

  /** {@inheritDoc Store.listCalls} */
  async listCalls(runId: string): Promise<{ run: RunState; calls: CallSummary[] } | null> {
    if (!isSafeRunId(runId)) return null;
    const runReply = await this.#call(GET_RUN, [this.#runKey(runId)], ["1"]);
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
