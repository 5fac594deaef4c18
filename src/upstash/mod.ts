/**
 * `UpstashStore`: the canonical invocation store on Upstash Redis, over REST through the official
 * `@upstash/redis` client or the smaller `UpstashRestClient`. Every transition is one atomic Lua
 * script and one round trip; all keys of a run share one Redis Cluster hash tag; client retries
 * are safe; failures become `STORE_UNAVAILABLE` with a redacted cause.
 *
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { Redis } from "@upstash/redis";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { UpstashStore } from "@tool-boundary/core/upstash";
 *
 * const redis = Redis.fromEnv({ enableAutoPipelining: false });
 * const store = new UpstashStore({ redis, prefix: "agents", timeoutMs: 5_000 });
 * const boundary = new ToolBoundary({ store, tools: [] });
 * const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 10 } });
 * assert.deepEqual(await boundary.endRun(run), []);
 * ```
 *
 * @module
 */
export { RedisStoreError } from "./errors.ts";
export type { UpstashPipeline } from "./batch.ts";
export type {
  UpstashBatchOptions,
  UpstashDurability,
  UpstashRedisClient,
  UpstashStoreOptions,
} from "./options.ts";
export { UpstashStore } from "./store.ts";
export { UpstashRestClient } from "./rest.ts";
export type { UpstashRestClientOptions } from "./rest.ts";
