/**
 * A way into a `MemoryStore`'s records for tests that edit them as an operator with write access
 * to a store could (the ledger's tamper tests). No entry point exports it.
 *
 * @module
 */
import type { StoredRecord } from "../core/store.ts";

type Records = Map<string, Map<string, StoredRecord>>;
let reach: ((store: object) => Records) | undefined;

/** Called once by `MemoryStore`'s static block. */
export function exposeRecords(read: (store: object) => Records): void {
  reach ??= read;
}

/**
 * The records a MemoryStore holds, by run ID then tool call ID: the live maps, to edit.
 *
 * @param store A MemoryStore.
 * @returns Its record maps.
 */
export function memoryRecordsForTests(store: object): Records {
  return reach!(store);
}
