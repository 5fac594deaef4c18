/**
 * `inspect`: one canonical record, read from the store and parsed (harness-only: it includes the
 * raw response).
 *
 * @module
 */
import { isSafeRunId, isSafeToolCallId } from "../ids.ts";
import type { Setup } from "../setup.ts";
import type { StoredRecord } from "../store.ts";
import type { CanonicalRecord } from "../types.ts";
import { storeCall } from "./store_call.ts";

/**
 * Reads a canonical record; never touches its TTL.
 *
 * @returns The record, or `null` when absent, expired, or an ID is unsafe.
 * @throws {BoundaryError} STORE_UNAVAILABLE.
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

/** A record as stored (payloads as JSON text) as the harness reads it (payloads as values). */
export function toCanonicalRecord(stored: StoredRecord): CanonicalRecord {
  return {
    runId: stored.runId,
    toolCallId: stored.toolCallId,
    toolName: stored.toolName,
    status: stored.status,
    evidence: stored.evidence,
    request: JSON.parse(stored.requestJson),
    ...(stored.rawJson === null ? {} : { raw: JSON.parse(stored.rawJson) }),
    agentResult: stored.agentResultJson === null ? null : JSON.parse(stored.agentResultJson),
    errorCode: stored.errorCode,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    expiresAt: stored.expiresAt,
    ...(stored.failure === undefined ? {} : { failure: { ...stored.failure } }),
    ...(stored.proof === undefined ? {} : { proof: { ...stored.proof } }),
  };
}
