/**
 * The archive write of `endRun`: a sealed run's bundle handed to the boundary's `archive`.
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../json.ts";
import type { ArchiveCalls, Setup } from "../setup.ts";
import type { RunReceipt } from "../types.ts";
import { exportRun } from "./export_run.ts";

/**
 * Writes the bundle of a sealed run (`JSON.stringify` of its export, read now) to the archive,
 * once. A write the archive refuses is no failure when it already keeps a bundle of this seal
 * (its `get` answers one with the same receipt): the first bundle kept is the run's, and a later
 * bundle can differ from it only by calls that were in flight at the seal or records that expired.
 *
 * @throws {BoundaryError} ARCHIVE_UNAVAILABLE when the archive did not keep it (the archive's
 *   error as the cause), or what `exportRun` throws (STORE_UNAVAILABLE, RUN_NOT_FOUND).
 */
export async function archiveRun(
  setup: Setup,
  archive: ArchiveCalls,
  runId: string,
  receipt: RunReceipt,
): Promise<void> {
  const bundleJson = JSON.stringify(await exportRun(setup, runId));
  let failure: unknown;
  try {
    // Whatever the archive answers is only awaited: a value (or a thenable that throws) is
    // never read for more.
    await archive.put(runId, bundleJson);
    return;
  } catch (error) {
    failure = error;
  }
  if (archive.get !== undefined && await keepsSeal(archive.get, runId, receipt)) return;
  throw new BoundaryError("ARCHIVE_UNAVAILABLE", { cause: failure });
}

/** Whether the archive answers, for the run, a bundle whose receipt is this one. */
async function keepsSeal(
  get: (runId: string) => unknown,
  runId: string,
  receipt: RunReceipt,
): Promise<boolean> {
  try {
    const kept: unknown = await get(runId);
    if (typeof kept !== "string") return false;
    const bundle = JSON.parse(kept) as { receipt?: JsonValue } | null;
    const keptReceipt = bundle !== null && typeof bundle === "object" ? bundle.receipt : undefined;
    return keptReceipt !== undefined &&
      canonicalJson(keptReceipt) === canonicalJson(receipt as unknown as JsonValue);
  } catch {
    // An archive that cannot answer keeps nothing this write can count on.
    return false;
  }
}
