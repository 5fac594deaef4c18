/**
 * A way into a `MemoryStore`'s state for tests that edit it as an operator with write access to
 * a store could (the ledger's tamper tests). No entry point exports it.
 *
 * @module
 */
import type { PendingDigest } from "../core/digest.ts";
import type { BegunRun, RunState, StoredRecord } from "../core/store.ts";
import type { IdTable } from "./id_table.ts";

/**
 * A begun key as a MemoryStore keeps it: a `BegunCall` whose digest may still be pending (the
 * boundary's requests carry one, hashed only when read: see `core/begin_request.ts`).
 */
export interface BegunEntry {
  toolCallId: string;
  digest: string | PendingDigest;
  attemptId: string;
  seq: number;
}

/** The digest of a begun key, hashed now if it was pending. */
export function digestOf(entry: BegunEntry): string {
  const { digest } = entry;
  return typeof digest === "string" ? digest : digest.value;
}

/** What a MemoryStore keeps of a run. */
export interface RunEntry {
  state: RunState;
  /** What each begin answers of the run (frozen: every begin gives the same object). */
  begunRun: BegunRun;
  attemptId: string;
  expiresAt: number;
  progress: string[];
  /** How many identities of `progress` the first endRun returned: every later one returns those. */
  ended: number | null;
  /** The READY completes of `progress`, in order, with their records' expiry, for paged ends. */
  ready: { toolCallId: string; expiresAt: number }[];
  /** How many of `ready` the first endRun fixed. */
  endedReady: number | null;
  /** The soonest expiry among those, kept by the first endRun (`Infinity` for none). */
  endedExpiry: number;
  /** Every key begun in the run, in begin order: a key stays used after its record expires. */
  begun: IdTable<BegunEntry>;
  /** The `proof.hash` each signed complete carried, by tool call ID, for the seal. */
  hashes: IdTable<string>;
  /** The seal `sealRun` kept, once. */
  sealJson: string | null;
  /** Begun calls whose record ended ERROR, for `listRuns`. */
  errors: number;
}

/** The live maps of a MemoryStore: records by run ID then tool call ID, and runs. */
export interface MemoryState {
  records: Map<string, IdTable<StoredRecord>>;
  runs: Map<string, RunEntry>;
}

let reach: ((store: object) => MemoryState) | undefined;

/** Called once, by `MemoryStore`'s static block. */
export function exposeState(read: (store: object) => MemoryState): void {
  reach ??= read;
}

/**
 * The state a MemoryStore holds: the live maps, to edit.
 *
 * @param store A MemoryStore.
 * @returns Its maps.
 */
export function memoryStateForTests(store: object): MemoryState {
  return reach!(store);
}
