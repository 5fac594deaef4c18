/**
 * For store authors: the shapes a `Store` (the interface is the package root's) stores and the
 * requests it takes, and the helpers every store uses so that all of them create the same records and accept exactly
 * the same values (the ID allow-lists, the number ranges, the request checks).
 *
 * Prove a store with `storeConformance` from `@tool-boundary/core/testing`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkBeginRequest, projectingRecord } from "@tool-boundary/core/store";
 *
 * const request = {
 *   runId: "run-1", toolCallId: "call_1", toolName: "search", requestJson: "{}",
 *   requestDigest: "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o", attemptId: "attempt-1",
 *   ttlMs: 60_000, now: 1_700_000_000_000,
 * };
 * assert.equal(checkBeginRequest(request), null);
 * assert.equal(checkBeginRequest({ ...request, toolCallId: "no spaces" }), "INVALID_TOOL_CALL_ID");
 * const record = projectingRecord(request, request.now + request.ttlMs);
 * assert.equal(record.status, "PROJECTING");
 * ```
 *
 * @module
 */
// `Store`, `RunState`, `CallSummary`, `ErrorCode` and the status types are the package root's
// (`@tool-boundary/core`): each name has one entry.
export type {
  BeginRefusal,
  BeginReply,
  BeginRequest,
  BegunCall,
  BegunRun,
  CallLookup,
  CanonicalIdentity,
  CompleteOutcome,
  CompleteRefusal,
  CompleteRequest,
  DuplicateRefusal,
  EndRunPage,
  EndRunPageState,
  EndRunRefusal,
  EndRunReply,
  EndRunRequest,
  FactRow,
  ReadFactsReply,
  ReadFactsRequest,
  RunExport,
  SealRunRequest,
  SealState,
  StartRunRefusal,
  StartRunRequest,
  StoredRecord,
  StoreRefusal,
} from "./core/store.ts";
export { factRowOf, projectingRecord } from "./core/records.ts";
export { checkFailure, readFailure } from "./core/failure.ts";
export { type RunsCursor, runsCursor } from "./core/runs_page.ts";
export {
  applyOutcome,
  completeTransition,
  isSameOutcome,
  isValidOutcome,
  summarizeCall,
} from "./core/lifecycle.ts";
export {
  checkBeginRequest,
  checkCompleteRequest,
  checkEndRunRequest,
  checkEpochMs,
  checkListRunsRequest,
  checkReadFactsRequest,
  checkStartRunRequest,
  MAX_BUDGET,
  MAX_EPOCH_MS,
  MAX_TTL_MS,
  MIN_FACT_BYTES,
  ownBudget,
  REQUEST_DIGEST_PATTERN,
  setOwnBudget,
} from "./core/limits.ts";
export { isSafeRunId, isSafeToolCallId, RUN_ID_PATTERN, TOOL_CALL_ID_PATTERN } from "./core/ids.ts";
export { utf8ByteLength } from "./core/utf8.ts";
export { requestDigest } from "./core/digest.ts";
export { canonicalJson } from "./core/json.ts";
