/**
 * `listRuns`: the recent runs, newest first, a page at a time (`Store.listRuns`), for the run
 * console.
 *
 * @module
 */
import { requireCapability } from "../capabilities.ts";
import { checkListRunsRequest } from "../limits.ts";
import type { Setup } from "../setup.ts";
import type { ListRunsRequest, RunsPage } from "../store.ts";
import { storeCall } from "./store_call.ts";

/**
 * One page of the store's live runs, each with its counts of calls begun and of ERROR records.
 *
 * @throws {RangeError} When `limit` is not an integer from 1 to `MAX_LIST_RUNS`, or `cursor` is
 *   not the `next` of a page.
 * @throws {BoundaryError} STORE_UNAVAILABLE.
 * @throws {TypeError} When the store has no `RunIndex`.
 */
export async function listRuns(setup: Setup, request: ListRunsRequest): Promise<RunsPage> {
  // Read once and checked here, so the store gets plain values.
  const store = requireCapability(setup.store, "RunIndex", "list runs");
  const { limit, cursor } = request;
  const plain = { limit, cursor: cursor ?? null };
  checkListRunsRequest(plain);
  return await storeCall(() => store.listRuns(plain));
}
