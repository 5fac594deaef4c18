/**
 * The tool-boundary ledger inside Cloudflare: the canonical store in a Durable Object's SQLite
 * storage, and an R2 archive of sealed runs.
 *
 * - {@linkcode DurableObjectStore}: a `Store` over `ctx.storage.sql`, each transition one
 *   synchronous transaction, TTLs kept by `expiresAt` and the object's alarm. Inside an `Agent`
 *   of the Cloudflare Agents SDK (an `Agent` is a Durable Object), the ledger sits beside the
 *   agent's own tables: no network round trip per call.
 * - {@linkcode ledgerObject} and {@linkcode boundaryStore}: the ledger as a Durable Object
 *   namespace, one object per run, that Workers reach by RPC.
 * - {@linkcode r2Archive}: each sealed run's exported bundle, kept in R2 past the store's TTL.
 *
 * The package imports nothing of Cloudflare's: the runtime's objects are typed by the shape the
 * package uses (`./types.ts`). When to choose it over Upstash, its limits and how to deploy:
 * docs/cloudflare.md.
 *
 * @example
 * ```ts ignore
 * import { Agent } from "agents";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { DurableObjectStore } from "@tool-boundary/cloudflare";
 *
 * export class SupportAgent extends Agent<Env> {
 *   // The agent owns the object's alarm: the ledger's sweeps go through its scheduler.
 *   ledger = new DurableObjectStore(this.ctx, {
 *     scheduleSweep: (at) => this.schedule(new Date(at), "sweepLedger"),
 *   });
 *   boundary = new ToolBoundary({ store: this.ledger, tools });
 *
 *   async sweepLedger() {
 *     await this.ledger.sweep();
 *   }
 * }
 * ```
 *
 * @module
 */
export {
  DurableObjectStore,
  type DurableObjectStoreOptions,
  MAX_ROW_BYTES,
  type SweepReport,
} from "./store.ts";
export {
  boundaryStore,
  type DurableObjectBase,
  type LedgerMethods,
  type LedgerNamespace,
  ledgerObject,
  type LedgerObjectClass,
  type LedgerObjectInstance,
  type LedgerObjectOptions,
} from "./namespace.ts";
export { r2Archive, type R2ArchiveOptions } from "./archive.ts";
export type {
  DurableObjectContext,
  DurableObjectStorageLike,
  R2BucketLike,
  R2ObjectBodyLike,
  R2PutOptionsLike,
  SqlCursor,
  SqlStorage,
  SqlValue,
} from "./types.ts";
