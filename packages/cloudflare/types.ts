/**
 * What this package uses of the Workers runtime, typed by shape: a Durable Object's `ctx` (its
 * SQLite storage and alarm), a Durable Object namespace and an R2 bucket. The real bindings
 * (`@cloudflare/workers-types`) fit these types, and so does anything else of the same shape;
 * the package imports nothing of Cloudflare's.
 *
 * @module
 */

/** A value SQLite gives back: what a column of the ledger's tables holds. */
export type SqlValue = string | number | null | ArrayBuffer;

/** The cursor `sql.exec` answers; the store reads it whole. */
export interface SqlCursor<T> {
  /** Every row, as an object keyed by column name. */
  toArray(): T[];
}

/** `ctx.storage.sql` of a SQLite-backed Durable Object (the part the store uses). */
export interface SqlStorage {
  /** Runs one statement with its `?` bindings. */
  exec<T extends Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): SqlCursor<T>;
}

/** `ctx.storage` of a SQLite-backed Durable Object (the part the store uses). */
export interface DurableObjectStorageLike {
  /** The object's SQLite database. */
  sql: SqlStorage;
  /** Runs `fn` as one transaction: all its writes, or none when it throws. */
  transactionSync<T>(fn: () => T): T;
  /** Sets the object's one alarm (epoch ms); the runtime calls the object's `alarm()` then. */
  setAlarm(scheduledTime: number | Date): Promise<void>;
}

/** A Durable Object's `ctx` (`this.ctx` in a `DurableObject` or an `Agent`), as the store uses it. */
export interface DurableObjectContext {
  /** The object's storage. */
  storage: DurableObjectStorageLike;
}

/** A Durable Object namespace binding (`env.LEDGER`), as {@linkcode boundaryStore} uses it. */
export interface DurableObjectNamespaceLike<Stub> {
  /** The ID of the object of a name: the same name is always the same object. */
  idFromName(name: string): unknown;
  /** A stub of the object with that ID. */
  get(id: unknown): Stub;
}

/** An R2 object's body, as the archive reads it back. */
export interface R2ObjectBodyLike {
  /** The bytes as UTF-8 text. */
  text(): Promise<string>;
}

/** Options of an R2 `put`, as the archive passes them. */
export interface R2PutOptionsLike {
  /** Writes only when the condition holds; `etagDoesNotMatch: "*"` only when no object exists. */
  onlyIf?: { etagDoesNotMatch?: string };
  /** R2 checks the bytes it receives against this SHA-256 (hex) and refuses others. */
  sha256?: string;
  /** The object's HTTP metadata. */
  httpMetadata?: { contentType?: string };
}

/** An R2 bucket binding (`env.ARCHIVE`), as {@linkcode r2Archive} uses it. */
export interface R2BucketLike {
  /**
   * Writes an object; answers `null` when `onlyIf` did not hold (nothing written).
   */
  put(key: string, value: string, options?: R2PutOptionsLike): Promise<unknown>;
  /** Reads an object; `null` when there is none. */
  get(key: string): Promise<R2ObjectBodyLike | null>;
}
