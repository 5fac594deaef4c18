/**
 * The R2 archive of sealed runs: each run's exported bundle kept past the store's TTL.
 *
 * @module
 */
import { isSafeRunId, type RunArchive } from "./core.ts";
import type { R2BucketLike } from "./types.ts";

/** Options of {@linkcode r2Archive}. */
export interface R2ArchiveOptions {
  /** What every key starts with; a run's key is `<prefix><runId>.json`. @default "runs/" */
  prefix?: string;
}

/**
 * A `RunArchive` of `@tool-boundary/core` in an R2 bucket, for the boundary's `archive` option.
 * A bundle is written only where no object is (a conditional put), with its SHA-256 for R2 to
 * check the bytes it received; when one is already there, the same bytes are a success and any
 * others an error.
 *
 * @param bucket The bucket binding (`env.ARCHIVE`).
 * @param options The key prefix.
 * @returns The archive.
 * @throws {TypeError} When the prefix is not a string.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { r2Archive } from "@tool-boundary/cloudflare";
 *
 * // In a Worker, pass env.ARCHIVE; here, a bucket of the same shape kept in a Map.
 * const objects = new Map<string, string>();
 * const archive = r2Archive({
 *   put: (key, value, options) => {
 *     if (options?.onlyIf?.etagDoesNotMatch === "*" && objects.has(key)) {
 *       return Promise.resolve(null);
 *     }
 *     objects.set(key, value);
 *     return Promise.resolve({ key });
 *   },
 *   get: (key) => {
 *     const value = objects.get(key);
 *     return Promise.resolve(value === undefined ? null : { text: () => Promise.resolve(value) });
 *   },
 * });
 * const bundleJson = '{"format":"tool-boundary.run/1"}';
 * await archive.put("run-1", bundleJson);
 * await archive.put("run-1", bundleJson); // the same bytes again: a success
 * await assert.rejects(archive.put("run-1", "{}"), /another bundle/);
 * assert.equal(await archive.get("run-1"), bundleJson);
 * assert.deepEqual([...objects.keys()], ["runs/run-1.json"]);
 * ```
 */
export function r2Archive(
  bucket: R2BucketLike,
  options: R2ArchiveOptions = {},
): RunArchive & { get(runId: string): Promise<string | null> } {
  const prefix = options.prefix ?? "runs/";
  if (typeof prefix !== "string") throw new TypeError("Invalid prefix: expected a string");
  const keyOf = (runId: string) => {
    if (!isSafeRunId(runId)) throw new TypeError("Invalid runId: expected a run ID");
    return `${prefix}${runId}.json`;
  };
  return {
    async put(runId, bundleJson) {
      const key = keyOf(runId);
      if (typeof bundleJson !== "string") {
        throw new TypeError("Invalid bundleJson: expected a string");
      }
      const sha256 = await sha256Hex(bundleJson);
      const written = await bucket.put(key, bundleJson, {
        onlyIf: { etagDoesNotMatch: "*" },
        sha256,
        httpMetadata: { contentType: "application/json" },
      });
      if (written !== null) return;
      const kept = await bucket.get(key);
      if (kept === null) {
        throw new Error(`Archive write of run ${runId} failed: neither written nor found`);
      }
      if (await kept.text() !== bundleJson) {
        throw new Error(`Archive already holds another bundle for run ${runId}`);
      }
    },
    async get(runId) {
      const kept = await bucket.get(keyOf(runId));
      return kept === null ? null : await kept.text();
    },
  };
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
