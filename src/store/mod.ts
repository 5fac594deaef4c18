/**
 * For store authors: the `Store` interface (the required core every boundary call needs) and its
 * optional capabilities (`CallIndex`, `RunIndex`, `RunSeal`), the requests and replies of each
 * method, and the helpers every store uses so that all of them create the same records and
 * accept exactly the same values (the ID allow-lists, the number ranges, the request checks).
 * The run and call shapes a harness reads too (`RunState`, `CallSummary`, `RunsPage`,
 * `RunSummary`, `ListRunsRequest`) are the package root's.
 *
 * Prove a store with `storeConformance` from `@tool-boundary/core/testing`: it runs the core
 * cases and those of each capability the store offers.
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
 * const record = projectingRecord(request, request.now + request.ttlMs, 1);
 * assert.equal(record.status, "PROJECTING");
 * ```
 *
 * @module
 */
export type {
  BeginReply,
  BeginRequest,
  BegunCall,
  CallIndex,
  CompleteOutcome,
  CompleteReply,
  CompleteRequest,
  EndRunReply,
  EndRunRequest,
  ExportRunReply,
  FactRow,
  ListCallsReply,
  LookupCallReply,
  ReadFactsReply,
  ReadFactsRequest,
  RunIndex,
  RunSeal,
  SealRunReply,
  SealRunRequest,
  StartRunReply,
  StartRunRequest,
  Store,
  StoredRecord,
} from "../core/store.ts";
export {
  capabilitiesOf,
  requireCapability,
  STORE_CAPABILITIES,
  type StoreCapability,
} from "../core/capabilities.ts";
export { factRowOf, projectingRecord } from "../core/records.ts";
export { runsCursor } from "../core/runs_page.ts";
export {
  applyOutcome,
  completeTransition,
  isValidOutcome,
  summarizeCall,
} from "../core/lifecycle.ts";
export {
  checkBeginRequest,
  checkCompleteRequest,
  checkCost,
  checkEndRunRequest,
  checkEpochMs,
  checkListRunsRequest,
  checkReadFactsRequest,
  checkStartRunRequest,
  fitsCostBudget,
  MIN_FACT_BYTES,
  ownBudget,
  setOwnBudget,
} from "../core/limits.ts";
export { isSafeRunId, isSafeToolCallId } from "../core/ids.ts";
export { utf8ByteLength } from "../core/utf8.ts";
