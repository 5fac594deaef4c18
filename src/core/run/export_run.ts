/**
 * `exportRun`: everything a third party needs to verify a run, read from the store in one
 * operation (`Store.exportRun`).
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { isSafeRunId } from "../ids.ts";
import { BUNDLE_FORMAT, type RunBundle } from "../ledger.ts";
import type { Setup } from "../setup.ts";
import type { CanonicalRecord } from "../types.ts";
import { parseSeal } from "./seal.ts";
import { toCanonicalRecord } from "./inspect.ts";
import { storeCall } from "./store_call.ts";

/**
 * The run's bundle: the run, every live record of its begun calls in begin order (raw included,
 * each as `inspect()` returns it; an expired record is left out), and, once a boundary with a
 * ledger key sealed it, the facts of the sealing `endRun` and the receipt (both `null` before).
 *
 * @throws {BoundaryError} INVALID_RUN_ID, RUN_NOT_FOUND or STORE_UNAVAILABLE.
 * @throws {TypeError} When the store has no `exportRun`.
 */
export async function exportRun(setup: Setup, runId: string): Promise<RunBundle> {
  if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
  const store = setup.store;
  if (typeof store.exportRun !== "function") {
    throw new TypeError("Cannot export a run: the store has no exportRun()");
  }
  const read = await storeCall(() => store.exportRun!(runId));
  if (read === null) throw new BoundaryError("RUN_NOT_FOUND");
  const records: CanonicalRecord[] = [];
  for (const { record } of read.calls) if (record !== null) records.push(toCanonicalRecord(record));
  const seal = read.sealJson === null ? null : parseSeal(read.sealJson);
  return {
    format: BUNDLE_FORMAT,
    run: read.run,
    records,
    facts: seal?.facts ?? null,
    receipt: seal?.receipt ?? null,
  };
}
