/**
 * The harness's side of the boundary, beside the page at the package root: what the reads of a
 * `ToolBoundary` return (`getRun`'s run state, `listCalls`, `listRuns`, `inspect`,
 * `checkCitations`, `endRunReport`, `exportRun`), the parts of a record and of a sealed run, the
 * option types a harness tunes (`limits`, `archive`), and the harness-side constants. An agent
 * builder who starts runs, invokes tools and ends runs needs none of it; one who audits, resumes
 * or serves runs names these types.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { type CallSummary, MAX_LIST_RUNS, type RunsPage } from "@tool-boundary/core/harness";
 *
 * const ping = defineTool({
 *   name: "ping",
 *   readOnly: true,
 *   execute: () => ({}),
 *   project: () => ({ evidence: "NO_EVIDENCE", scope: "ping", content: null }),
 * });
 * const boundary = new ToolBoundary({ tools: [ping] });
 * const run = await boundary.startRun({ runId: "run-1" });
 * await boundary.invoke(run, { toolCallId: "call_1", runId: "run-1", toolName: "ping", input: {} });
 * const calls: CallSummary[] = await boundary.listCalls("run-1");
 * assert.deepEqual(calls.map((call) => [call.toolCallId, call.status]), [["call_1", "READY"]]);
 * const page: RunsPage = await boundary.listRuns({ limit: MAX_LIST_RUNS });
 * assert.deepEqual(page.runs.map((listed) => [listed.runId, listed.calls]), [["run-1", 1]]);
 * ```
 *
 * @module
 */
export type {
  CallSummary,
  ListRunsRequest,
  RunsPage,
  RunState,
  RunSummary,
} from "../core/store.ts";
export type {
  CanonicalRecord,
  Citation,
  EvidenceStatus,
  ProjectedEvidence,
  Projection,
  ReceiptCall,
  RecordCost,
  RecordProof,
  RecordStatus,
  RunCost,
  RunEnd,
  RunInstance,
  RunReceipt,
  ToolFailure,
} from "../core/types.ts";
export type { RunBundle } from "../core/ledger.ts";
export type { InputSchema } from "../core/tool.ts";
export { memoryArchive, type RunArchive } from "../core/archive.ts";
export {
  DEFAULT_LIMITS,
  type Limits,
  MAX_CITATIONS,
  MAX_COST,
  MAX_FAILURE_BYTES,
  MAX_LIST_RUNS,
  MAX_TIMER_MS,
} from "../core/limits.ts";
export { TOOL_CALL_ID_META } from "../core/ids.ts";
