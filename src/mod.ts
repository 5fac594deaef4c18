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
 * The page holds what a caller of `invoke` needs. What the harness's reads return (runs, call
 * lists, records, bundles) and the harness-side limits are in `@tool-boundary/core/harness`; the
 * `Store` interface and what a store author needs in `@tool-boundary/core/store`.
 *
 * @module
 */
export { ToolBoundary } from "./core/boundary.ts";
export { generateLedgerKeys } from "./core/ledger.ts";
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
  ErrorResult,
  InputIssue,
  ObservedFact,
  ReadyResult,
  RunBudget,
  RunContext,
  RunRef,
  ToolCallEnvelope,
} from "./core/types.ts";
export type { JsonObject, JsonValue } from "./core/json.ts";
export { type ModelView, modelView, modelViewText } from "./core/model_view.ts";
export {
  BoundaryError,
  ERROR_CODES,
  ERROR_MESSAGES,
  type ErrorCode,
  isErrorCode,
} from "./core/errors.ts";
