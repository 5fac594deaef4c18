/**
 * The options of `UpstashStore`: the client it takes, key locking, durability and batching, and
 * the one check of them all, made when the store is created.
 *
 * @module
 */
import type { UpstashPipeline } from "./batch.ts";

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

/** A key prefix: 1 to 64 of `A-Z a-z 0-9 _ - . :`. */
const PREFIX_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
/** `timeoutMs` when none is given. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** 1 MiB: a tenth of Upstash's max request size, so JSON escapes cannot take a batch near it. */
const DEFAULT_BATCH_BYTES = 1024 * 1024;

/** The options as checked, the defaults filled in: what the store keeps. */
export interface StoreSettings {
  /** The client. */
  readonly redis: UpstashRedisClient;
  /** The key prefix. */
  readonly prefix: string;
  /** The time bound of one operation, in ms. */
  readonly timeoutMs: number;
  /** Whether the scripts carry Upstash's key-locking flags. */
  readonly keyLocking: boolean;
  /** The replicas every begin waits for, frozen; `undefined` without. */
  readonly durability: Readonly<UpstashDurability> | undefined;
  /** The pipeline's largest body, when begins and completes are batched; else `undefined`. */
  readonly batchBytes: number | undefined;
}

/**
 * Checks the options of an `UpstashStore` and fills in the defaults.
 *
 * @param options As `new UpstashStore` got them.
 * @returns What the store keeps.
 * @throws {TypeError} When `redis` lacks `eval`/`evalsha` or `prefix` is not allowed.
 * @throws {RangeError} When `timeoutMs` is not a positive number.
 * @throws {TypeError} When `keyLocking` is given and not a boolean.
 * @throws {RangeError} When `durability` is not `{ replicas, timeoutMs }` of positive integers
 *   with `durability.timeoutMs` below `timeoutMs`.
 * @throws {TypeError} When `durability` is given and `redis` lacks `exec`.
 * @throws {RangeError} When `batch` is not `false` or `{ maxBytes }` of a positive integer.
 * @throws {TypeError} When `batch` options are given and `redis` lacks `pipeline`.
 */
export function checkStoreOptions(options: UpstashStoreOptions): StoreSettings {
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
  return {
    redis,
    prefix,
    timeoutMs,
    keyLocking,
    durability: durability === undefined
      ? undefined
      : Object.freeze({ replicas: durability.replicas, timeoutMs: durability.timeoutMs }),
    // Batched when the client can pipeline, unless told not to.
    batchBytes: batch === false || typeof redis.pipeline !== "function" ? undefined : maxBytes,
  };
}
