/**
 * `listCalls`: every call a run began, in begin order, without payloads.
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { isSafeRunId } from "../ids.ts";
import { requireCapability } from "../capabilities.ts";
import type { Setup } from "../setup.ts";
import type { CallSummary } from "../store.ts";
import { storeCall } from "./store_call.ts";

/**
 * Lists a run's begun calls.
 *
 * @returns One summary per begun call.
 * @throws {BoundaryError} INVALID_RUN_ID, RUN_NOT_FOUND or STORE_UNAVAILABLE.
 * @throws {TypeError} When the store has no `CallIndex`.
 */
export async function listCalls(setup: Setup, runId: string): Promise<CallSummary[]> {
  const store = requireCapability(setup.store, "CallIndex", "list calls");
  if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
  const listed = await storeCall(() => store.listCalls(runId));
  if (listed === null) throw new BoundaryError("RUN_NOT_FOUND");
  return listed.calls;
}
