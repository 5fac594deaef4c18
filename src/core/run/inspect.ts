/**
 * `inspect`: one canonical record, read from the store and parsed (harness-only: it includes the
 * raw response).
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { isSafeRunId, isSafeToolCallId } from "../ids.ts";
import type { Setup } from "../setup.ts";
import type { JsonValue } from "../json.ts";
import type { StoredRecord } from "../store.ts";
import type { CanonicalRecord, Projection } from "../types.ts";
import { storeCall } from "./store_call.ts";

/**
 * Reads a canonical record; never touches its TTL.
 *
 * @returns The record, or `null` when absent, expired, or an ID is unsafe.
 * @throws {BoundaryError} STORE_UNAVAILABLE, also for a record the store holds but cannot give
 *   back as data (its cause an {@linkcode UnreadableRecordError}).
 */
export async function inspect(
  setup: Setup,
  runId: string,
  toolCallId: string,
): Promise<CanonicalRecord | null> {
  if (!isSafeRunId(runId) || !isSafeToolCallId(toolCallId)) return null;
  const stored = await storeCall(() => setup.store.get(runId, toolCallId));
  return stored === null ? null : toCanonicalRecord(stored);
}

/**
 * A stored record whose payload text (request, raw response or agent result) is not JSON. The
 * boundary only ever writes JSON there, so the record was altered in the store: `verifyRun`'s
 * route answers ALTERED for it, and reads that return records fail with STORE_UNAVAILABLE whose
 * cause is this error.
 */
export class UnreadableRecordError extends Error {
  /** The run of the record. */
  readonly runId: string;
  /** The call whose record cannot be read. */
  readonly toolCallId: string;

  /**
   * @param stored The record as the store gave it.
   * @param cause What the JSON parser threw.
   */
  constructor(stored: Pick<StoredRecord, "runId" | "toolCallId">, cause: unknown) {
    super(`The stored record of ${stored.toolCallId} is not JSON data`, { cause });
    this.name = "UnreadableRecordError";
    this.runId = stored.runId;
    this.toolCallId = stored.toolCallId;
  }
}

/**
 * The call a failed read names as altered in the store: the tool call ID of an
 * {@linkcode UnreadableRecordError}, itself or as the cause of a `BoundaryError`, else `null`.
 */
export function unreadableCallOf(error: unknown): string | null {
  const found = error instanceof BoundaryError ? error.cause : error;
  return found instanceof UnreadableRecordError ? found.toolCallId : null;
}

/**
 * A record as stored (payloads as JSON text) as the harness reads it (payloads as values).
 *
 * @throws {BoundaryError} STORE_UNAVAILABLE when a payload's text is not JSON (its cause an
 *   {@linkcode UnreadableRecordError}): never the parser's own SyntaxError.
 */
export function toCanonicalRecord(stored: StoredRecord): CanonicalRecord {
  return {
    runId: stored.runId,
    toolCallId: stored.toolCallId,
    toolName: stored.toolName,
    status: stored.status,
    evidence: stored.evidence,
    request: payload<CanonicalRecord["request"]>(stored, stored.requestJson),
    ...(stored.rawJson === null ? {} : { raw: payload(stored, stored.rawJson) }),
    agentResult: stored.agentResultJson === null
      ? null
      : payload<Projection>(stored, stored.agentResultJson),
    errorCode: stored.errorCode,
    seq: stored.seq,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    expiresAt: stored.expiresAt,
    ...(stored.cost === undefined ? {} : { cost: { ...stored.cost } }),
    ...(stored.failure === undefined ? {} : { failure: { ...stored.failure } }),
    ...(stored.proof === undefined ? {} : { proof: { ...stored.proof } }),
  };
}

/**
 * A payload's JSON text, parsed (as the type the boundary wrote it as); text that is not JSON is
 * an unreadable record.
 */
function payload<T = JsonValue>(stored: StoredRecord, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new BoundaryError("STORE_UNAVAILABLE", {
      cause: new UnreadableRecordError(stored, error),
    });
  }
}
