/**
 * The begin request the boundary hands a store whose `begin` takes a digest when it needs it
 * (`MemoryStore`'s own): its `requestDigest` is a {@linkcode PendingDigest}, hashed on first
 * read, so the in-process store does not hash a request it never compares. Every other store,
 * and a `MemoryStore` whose `begin` was replaced or wrapped, gets a plain request with the digest
 * computed, as the `Store` interface describes.
 *
 * @module
 */
import type { PendingDigest } from "./digest.ts";
import type { BeginRequest } from "./store.ts";

/** The `begin` functions that take a {@linkcode PendingBeginRequest}. */
const takers = new WeakSet<object>();

/**
 * Marks a store's `begin` as one that reads a {@linkcode PendingBeginRequest} through
 * {@linkcode PendingBeginRequest.digestOf}. Called once, by `MemoryStore`'s static block.
 *
 * @param begin The method, as its prototype holds it.
 */
export function takeDigestsLater(begin: object): void {
  takers.add(begin);
}

/**
 * Whether a store's `begin`, as read from the store, is one marked by
 * {@linkcode takeDigestsLater}.
 *
 * @param begin What the store's `begin` property held.
 * @returns `true` only for a marked function.
 */
export function takesDigestsLater(begin: unknown): boolean {
  return typeof begin === "function" && takers.has(begin);
}

/** A begin request whose digest is computed when first read. */
export class PendingBeginRequest implements BeginRequest {
  readonly runId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly requestJson: string;
  readonly replay?: true;
  readonly attemptId: string;
  readonly ttlMs: number;
  readonly now: number;
  readonly startedAt?: number;
  readonly cost?: number;
  readonly #digest: PendingDigest;

  constructor(
    fields: Omit<BeginRequest, "requestDigest" | "replay">,
    replay: boolean,
    digest: PendingDigest,
  ) {
    this.runId = fields.runId;
    this.toolCallId = fields.toolCallId;
    this.toolName = fields.toolName;
    this.requestJson = fields.requestJson;
    if (replay) this.replay = true;
    this.attemptId = fields.attemptId;
    this.ttlMs = fields.ttlMs;
    this.now = fields.now;
    if (fields.startedAt !== undefined) this.startedAt = fields.startedAt;
    if (fields.cost !== undefined) this.cost = fields.cost;
    this.#digest = digest;
  }

  /** The digest, hashed on first read. */
  get requestDigest(): string {
    return this.#digest.value;
  }

  /**
   * The pending digest of a request the boundary made (the brand cannot be forged), else
   * `undefined`: any other request carries its digest as a string, to be checked.
   *
   * @param request A begin request.
   * @returns Its pending digest, or `undefined`.
   */
  static digestOf(request: BeginRequest): PendingDigest | undefined {
    return typeof request === "object" && request !== null && #digest in request
      ? request.#digest
      : undefined;
  }
}
