/**
 * The one way the run-level operations call the store: a failure the store did not name becomes
 * STORE_UNAVAILABLE, with the store's error as its cause (for the harness's logs).
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";

/**
 * Runs one store operation.
 *
 * @param operation The store call.
 * @returns What the store answered.
 * @throws {BoundaryError} The store's own, or STORE_UNAVAILABLE for anything else it threw.
 */
export async function storeCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof BoundaryError) throw error;
    throw new BoundaryError("STORE_UNAVAILABLE", { cause: error });
  }
}
