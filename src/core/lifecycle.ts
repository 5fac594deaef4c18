/**
 * The record lifecycle rules every store shares: which outcomes a complete may write, what a
 * record becomes when one is applied, when a repeated complete is the same one, and how a begun
 * call is summarised. UpstashStore's complete script keeps the same rules in Lua (it cannot call
 * these), and the conformance suite checks that both agree.
 *
 * @module
 */
import { isErrorCode } from "./errors.ts";
import { checkFailure, sameFailure } from "./failure.ts";
import { checkRecordProof } from "./ledger.ts";
import type {
  CallSummary,
  CompleteOutcome,
  CompleteReply,
  CompleteRequest,
  StoredRecord,
} from "./store.ts";
import type { RecordCost } from "./types.ts";

/**
 * Tells whether a complete may write an outcome: READY with evidence EVIDENCE_FOUND or
 * NO_EVIDENCE, a raw response and an agent result (JSON text), and no failure; or ERROR with a known error code
 * and a raw response that is JSON text or `null`, and a `failure` that is absent or one
 * `checkFailure` accepts. Anything else is ILLEGAL_TRANSITION.
 *
 * @param outcome Anything.
 * @returns `true` when the outcome may be written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isValidOutcome } from "@tool-boundary/core/store";
 * assert.equal(isValidOutcome({ status: "ERROR", errorCode: "TOOL_TIMEOUT", rawJson: null }), true);
 * assert.equal(
 *   isValidOutcome({ status: "READY", evidence: "ERROR", rawJson: "{}", agentResultJson: "{}" }),
 *   false,
 * );
 * ```
 */
export function isValidOutcome(outcome: unknown): outcome is CompleteOutcome {
  const o = outcome as Partial<Record<string, unknown>> | null | undefined;
  if (o?.status === "READY") {
    return (o.evidence === "EVIDENCE_FOUND" || o.evidence === "NO_EVIDENCE") &&
      typeof o.rawJson === "string" && typeof o.agentResultJson === "string" &&
      o.failure === undefined;
  }
  return o?.status === "ERROR" && isErrorCode(o.errorCode) &&
    (o.rawJson === null || typeof o.rawJson === "string") &&
    (o.failure === undefined || isFailure(o.failure));
}

function isFailure(value: unknown): boolean {
  try {
    checkFailure(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The record a complete writes: the outcome's status, evidence (ERROR for ERROR), payloads and
 * error code, `updatedAt` set; the IDs, request, attempt, creation and expiry kept.
 *
 * @param record The record before (PROJECTING when the transition is allowed).
 * @param outcome A valid outcome ({@linkcode isValidOutcome}).
 * @param now Epoch ms of the transition.
 * @param spent What the call spent, for a record begun with a cost (`cost.spent`): absent, its
 *   reservation. Ignored for a record without a cost.
 * @returns A new record; `record` is not changed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyOutcome, projectingRecord } from "@tool-boundary/core/store";
 * const begun = projectingRecord({
 *   runId: "r1", toolCallId: "call_1", toolName: "t", requestJson: "{}", requestDigest: "d",
 *   attemptId: "a1", ttlMs: 1_000, now: 0,
 * }, 1_000, 1);
 * const done = applyOutcome(begun, { status: "ERROR", errorCode: "TOOL_TIMEOUT", rawJson: null }, 5);
 * assert.deepEqual([done.status, done.evidence, done.errorCode, done.updatedAt], ["ERROR", "ERROR", "TOOL_TIMEOUT", 5]);
 * ```
 */
export function applyOutcome(
  record: StoredRecord,
  outcome: CompleteOutcome,
  now: number,
  spent?: number,
): StoredRecord {
  // A failure is the outcome's, never the record's before. A record without one of its own
  // (every PROJECTING record) is spread as it is: an object rest that leaves a key out costs V8
  // ten times a spread.
  const base = Object.hasOwn(record, "failure") ? withoutFailure(record) : record;
  const done: StoredRecord = outcome.status === "READY"
    ? {
      ...base,
      status: "READY",
      evidence: outcome.evidence,
      rawJson: outcome.rawJson,
      agentResultJson: outcome.agentResultJson,
      errorCode: null,
      updatedAt: now,
    }
    : {
      ...base,
      status: "ERROR",
      evidence: "ERROR",
      rawJson: outcome.rawJson,
      agentResultJson: null,
      errorCode: outcome.errorCode,
      updatedAt: now,
      ...(outcome.failure === undefined ? {} : { failure: checkFailure(outcome.failure) }),
    };
  if (record.cost !== undefined) done.cost = settledCost(record.cost.reserved, spent);
  return done;
}

/**
 * The cost a complete writes on a record begun with one: its reservation, and what it spent
 * (the reservation when the complete names nothing else).
 *
 * @param reserved The record's `cost.reserved`.
 * @param spent The complete's `spent`, if any.
 * @returns The record's `cost`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { settledCost } from "./lifecycle.ts";
 * assert.deepEqual(settledCost(40, 12), { reserved: 40, spent: 12 });
 * assert.deepEqual(settledCost(40, undefined), { reserved: 40, spent: 40 });
 * ```
 */
export function settledCost(reserved: number, spent: number | undefined): RecordCost {
  return { reserved, spent: spent ?? reserved };
}

function withoutFailure(record: StoredRecord): Omit<StoredRecord, "failure"> {
  const { failure: _before, ...base } = record;
  return base;
}

/**
 * Tells whether a completed record already holds exactly this outcome, so that the same attempt
 * repeating it is a retry (the stored record again), not a second transition.
 *
 * @param record A READY or ERROR record.
 * @param outcome A valid outcome.
 * @returns `true` when status, evidence, error code, both payloads and the failure are the
 *   outcome's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyOutcome, projectingRecord } from "@tool-boundary/core/store";
 * import { isSameOutcome } from "./lifecycle.ts";
 * const begun = projectingRecord({
 *   runId: "r1", toolCallId: "call_1", toolName: "t", requestJson: "{}", requestDigest: "d",
 *   attemptId: "a1", ttlMs: 1_000, now: 0,
 * }, 1_000, 1);
 * const failed = { status: "ERROR", errorCode: "TOOL_TIMEOUT", rawJson: null } as const;
 * const done = applyOutcome(begun, failed, 5);
 * assert.equal(isSameOutcome(done, failed), true);
 * assert.equal(isSameOutcome(done, { ...failed, errorCode: "EXECUTION_FAILED" }), false);
 * ```
 */
export function isSameOutcome(record: StoredRecord, outcome: CompleteOutcome): boolean {
  const next = applyOutcome(record, outcome, record.updatedAt);
  return record.status === next.status && record.evidence === next.evidence &&
    record.errorCode === next.errorCode && record.rawJson === next.rawJson &&
    record.agentResultJson === next.agentResultJson && sameFailure(record.failure, next.failure);
}

/**
 * The whole rule of `Store.complete` for a record as it is now: RECORD_EXPIRED when there is
 * none; ILLEGAL_TRANSITION for another attempt, an outcome {@linkcode isValidOutcome} refuses, or
 * a completed record that holds another outcome; the stored record again (`changed: false`) for a
 * repeat of the same outcome; else the record to write (`changed: true`).
 *
 * @param record The record, or nothing when it is absent or expired.
 * @param request The complete request.
 * @returns The refusal, or the record to return.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { completeTransition, projectingRecord } from "@tool-boundary/core/store";
 * const begun = projectingRecord({
 *   runId: "r1", toolCallId: "call_1", toolName: "t", requestJson: "{}", requestDigest: "d",
 *   attemptId: "a1", ttlMs: 1_000, now: 0,
 * }, 1_000, 1);
 * const request = {
 *   runId: "r1", toolCallId: "call_1", attemptId: "a1", now: 5,
 *   outcome: { status: "ERROR", errorCode: "TOOL_TIMEOUT", rawJson: null },
 * } as const;
 * const done = completeTransition(begun, request);
 * assert.ok(done.ok && done.changed);
 * assert.deepEqual(completeTransition(done.record, request), { ok: true, record: done.record, changed: false });
 * assert.deepEqual(completeTransition(begun, { ...request, attemptId: "a2" }), { ok: false, code: "ILLEGAL_TRANSITION" });
 * assert.deepEqual(completeTransition(null, request), { ok: false, code: "RECORD_EXPIRED" });
 * ```
 */
export function completeTransition(
  record: StoredRecord | null | undefined,
  request: CompleteRequest,
): Extract<CompleteReply, { ok: false }> | { ok: true; record: StoredRecord; changed: boolean } {
  if (record == null) return { ok: false, code: "RECORD_EXPIRED" };
  const { outcome } = request;
  if (record.attemptId !== request.attemptId || !isValidOutcome(outcome)) {
    return { ok: false, code: "ILLEGAL_TRANSITION" };
  }
  // Only a call begun with a cost settles one.
  if (record.cost === undefined && request.spent !== undefined) {
    return { ok: false, code: "ILLEGAL_TRANSITION" };
  }
  if (record.status === "PROJECTING") {
    const done = applyOutcome(record, outcome, request.now, request.spent);
    // The proof is kept as given, frozen, so that no copy of the record can change it.
    if (request.proof !== undefined) done.proof = checkRecordProof(request.proof);
    return { ok: true, record: done, changed: true };
  }
  return isSameOutcome(record, outcome) &&
      (record.cost === undefined ||
        record.cost.spent === settledCost(record.cost.reserved, request.spent).spent)
    ? { ok: true, record, changed: false }
    : { ok: false, code: "ILLEGAL_TRANSITION" };
}

/**
 * One line of `CallIndex.listCalls`: a begun call's record without payloads, or EXPIRED when the
 * record is gone.
 *
 * @param toolCallId The begun key.
 * @param record Its record's summary fields, or `null` when it expired.
 * @returns The summary.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarizeCall } from "@tool-boundary/core/store";
 * assert.deepEqual(summarizeCall("call_1", null), {
 *   toolCallId: "call_1", status: "EXPIRED", toolName: null, evidence: null, errorCode: null,
 *   createdAt: null, updatedAt: null,
 * });
 * ```
 */
export function summarizeCall(
  toolCallId: string,
  record:
    | Pick<
      StoredRecord,
      "toolName" | "status" | "evidence" | "errorCode" | "createdAt" | "updatedAt"
    >
    | null,
): CallSummary {
  if (record === null) {
    return {
      toolCallId,
      status: "EXPIRED",
      toolName: null,
      evidence: null,
      errorCode: null,
      createdAt: null,
      updatedAt: null,
    };
  }
  return {
    toolCallId,
    status: record.status,
    toolName: record.toolName,
    evidence: record.evidence,
    errorCode: record.errorCode,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
