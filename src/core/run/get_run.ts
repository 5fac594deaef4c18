/**
 * `getRun`: the context of an existing run, loaded from the store (in another instance, or an
 * HTTP handler).
 *
 * @module
 */
import { isSafeRunId } from "../ids.ts";
import type { Setup } from "../setup.ts";
import type { RunContext } from "../types.ts";
import { toRunContext } from "./start_run.ts";
import { storeCall } from "./store_call.ts";

/**
 * Loads a run's context.
 *
 * @returns The context, or `null` when the run is unknown, expired or the ID is unsafe.
 * @throws {BoundaryError} STORE_UNAVAILABLE.
 */
export async function getRun(setup: Setup, runId: string): Promise<RunContext | null> {
  if (!isSafeRunId(runId)) return null;
  const state = await storeCall(() => setup.store.getRun(runId));
  return state === null ? null : toRunContext(state);
}
