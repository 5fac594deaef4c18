/**
 * Where sealed runs are kept past the store's TTL: the `archive` option of `ToolBoundary`, and
 * an archive in memory for tests and development.
 *
 * @module
 */
import { isSafeRunId } from "./ids.ts";

/**
 * Where a boundary writes each sealed run's bundle, so that the evidence outlives the store's
 * records (24 hours by default; audits ask for months). The boundary calls `put` from every
 * `endRun` that answers a sealed run, never per call.
 *
 * An archive keeps the first bundle written for a run: `put` of the same bytes again succeeds and
 * changes nothing, and other bytes for a run already kept are refused (a rejection), so evidence
 * is never overwritten. `get` reads a kept bundle back. `r2Archive` of
 * `@tool-boundary/cloudflare` and {@linkcode memoryArchive} are archives of this shape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RunArchive } from "@tool-boundary/core";
 *
 * // An archive over any key-value space with a write-if-absent (here a Map).
 * const objects = new Map<string, string>();
 * const archive: RunArchive = {
 *   put(runId, bundleJson) {
 *     const kept = objects.get(runId);
 *     if (kept !== undefined && kept !== bundleJson) {
 *       return Promise.reject(new Error(`Another bundle is kept for run ${runId}`));
 *     }
 *     objects.set(runId, bundleJson);
 *     return Promise.resolve();
 *   },
 *   get: (runId) => Promise.resolve(objects.get(runId) ?? null),
 * };
 * await archive.put("run-1", "{}");
 * await archive.put("run-1", "{}");
 * await assert.rejects(archive.put("run-1", "[]"));
 * assert.equal(await archive.get!("run-1"), "{}");
 * ```
 */
export interface RunArchive {
  /**
   * Keeps a run's bundle: `JSON.stringify` of what `exportRun(runId)` answers once the run is
   * sealed (its records with `raw`, the facts and the receipt). Idempotent by run: the same bytes
   * again succeed; other bytes for a run already kept are refused. A rejection makes `endRun`
   * fail with ARCHIVE_UNAVAILABLE (the run stays sealed; a later `endRun` writes again). An
   * archive bounds its own writes in time: `endRun` waits for the answer.
   */
  put(runId: string, bundleJson: string): Promise<void>;
  /**
   * The bundle kept for a run, as written; `null` when there is none. With it, a `put` refused
   * because the archive keeps an earlier bundle of the same seal (a call in flight at the seal
   * completed since, or a record expired) is no failure: the first bundle is the run's.
   */
  get?(runId: string): Promise<string | null>;
}

/**
 * A {@linkcode RunArchive} in this process's memory, for tests and development: it behaves as an
 * archive in object storage does (the first bundle of a run kept, the same bytes again a success,
 * other bytes refused) and is gone with the process, so it keeps nothing past a restart.
 *
 * @returns An archive with `put` and `get`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, generateLedgerKeys, memoryArchive, ToolBoundary } from "@tool-boundary/core";
 * import { verifyRun } from "@tool-boundary/core/verify";
 *
 * const echo = defineTool({
 *   name: "echo",
 *   readOnly: true,
 *   execute: (input) => input,
 *   project: () => ({ evidence: "NO_EVIDENCE", scope: "echo", content: null }),
 * });
 * const keys = await generateLedgerKeys();
 * const archive = memoryArchive();
 * const boundary = new ToolBoundary({ tools: [echo], ledgerKey: keys.privateKey, archive });
 * const run = await boundary.startRun();
 * await boundary.invoke(run, { toolCallId: "c1", runId: run.runId, toolName: "echo", input: {} });
 * await boundary.endRun(run); // seals the run, then writes its bundle to the archive
 *
 * const kept = await archive.get(run.runId);
 * assert.equal(kept, JSON.stringify(await boundary.exportRun(run.runId)));
 * assert.deepEqual(await verifyRun(JSON.parse(kept!), keys.publicKey, { run }), {
 *   ok: true,
 *   sealed: true,
 *   calls: 1,
 * });
 * ```
 */
export function memoryArchive(): RunArchive & { get(runId: string): Promise<string | null> } {
  const kept = new Map<string, string>();
  return {
    put(runId, bundleJson) {
      if (!isSafeRunId(runId)) return Promise.reject(new TypeError("Invalid runId"));
      if (typeof bundleJson !== "string") {
        return Promise.reject(new TypeError("Invalid bundleJson: expected a string"));
      }
      const earlier = kept.get(runId);
      if (earlier !== undefined && earlier !== bundleJson) {
        return Promise.reject(new Error(`Archive already holds another bundle for run ${runId}`));
      }
      kept.set(runId, bundleJson);
      return Promise.resolve();
    },
    get(runId) {
      return Promise.resolve(kept.get(runId) ?? null);
    },
  };
}
