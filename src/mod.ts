/**
 * tool-boundary: a fail-closed boundary around every tool call an AI agent makes, with one
 * canonical record per call.
 *
 * Preflight runs before anything else (exact framework tool call ID, same run, JSON-object
 * input, authorized, read-only, run active and before its deadline, not a duplicate, budgets
 * left); then one atomic begin creates a PROJECTING record; the tool runs, byte limits are
 * checked, the projector makes the bounded agent result; one atomic complete makes the record
 * READY or ERROR. The agent only ever sees the bounded result or a safe error code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 *
 * const searchRunbook = defineTool({
 *   name: "search_runbook",
 *   readOnly: true,
 *   input: v.object({ query: v.string() }),
 *   execute: ({ query }) => ({
 *     query,
 *     matches: query.includes("disk") ? ["Disk full: rotate /var/log, then restart."] : [],
 *   }),
 *   project: (raw) => ({
 *     evidence: raw.matches.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
 *     scope: `runbook search for "${raw.query}"`,
 *     content: raw.matches,
 *   }),
 * });
 *
 * const boundary = new ToolBoundary({ tools: [searchRunbook] });
 * const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 10 } });
 * const result = await boundary.invoke(run, {
 *   toolCallId: "call_abc123",
 *   runId: run.runId,
 *   toolName: "search_runbook",
 *   input: '{"query":"disk full"}',
 * });
 * assert.deepEqual(result, {
 *   status: "READY",
 *   toolCallId: "call_abc123",
 *   evidence: "EVIDENCE_FOUND",
 *   scope: 'runbook search for "disk full"',
 *   content: ["Disk full: rotate /var/log, then restart."],
 * });
 * const facts = await boundary.endRun(run);
 * assert.deepEqual(facts.map((fact) => [fact.toolCallId, fact.kind]), [["call_abc123", "EVIDENCE"]]);
 * ```
 *
 * @module
 */
export { ToolBoundary } from "./core/boundary.ts";
export { generateLedgerKeys, type RunBundle } from "./core/ledger.ts";
export { memoryArchive, type RunArchive } from "./core/archive.ts";
export type {
  AuthorizeRequest,
  BoundaryEvent,
  InvokeOptions,
  StartRunOptions,
  ToolBoundaryOptions,
} from "./core/options.ts";
export {
  type AnyToolDefinition,
  defineTool,
  type ExecuteContext,
  type InputSchema,
  type ProjectContext,
  type ProjectorOutput,
  type ToolDefinition,
  type ToolDescription,
  ToolError,
  toolError,
} from "./core/tool.ts";
export { RawJson, rawJson } from "./core/raw_json.ts";
export type {
  BoundaryResult,
  CanonicalRecord,
  Citation,
  ErrorResult,
  EvidenceStatus,
  InputIssue,
  ObservedFact,
  ProjectedEvidence,
  Projection,
  ReadyResult,
  ReceiptCall,
  RecordProof,
  RecordStatus,
  RunBudget,
  RunContext,
  RunEnd,
  RunInstance,
  RunReceipt,
  RunRef,
  ToolCallEnvelope,
  ToolFailure,
} from "./core/types.ts";
export type { JsonObject, JsonValue } from "./core/json.ts";
export { TOOL_CALL_ID_META } from "./core/ids.ts";
export {
  type ErrorView,
  type ModelView,
  modelView,
  modelViewText,
  type ReadyView,
} from "./core/model_view.ts";
export {
  DEFAULT_LIMITS,
  type Limits,
  MAX_CITATIONS,
  MAX_FAILURE_BYTES,
  MAX_LIST_RUNS,
  MAX_TIMER_MS,
} from "./core/limits.ts";
export {
  BoundaryError,
  ERROR_CODES,
  ERROR_MESSAGES,
  type ErrorCode,
  isErrorCode,
} from "./core/errors.ts";
export type {
  CallSummary,
  ListRunsRequest,
  RunsPage,
  RunState,
  RunSummary,
  Store,
} from "./core/store.ts";
