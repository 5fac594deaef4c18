/**
 * `deno task demo`: one scripted run through the library with the demo tools, a call for each
 * outcome, then the records (as the harness sees them) and the run's observed facts as tables.
 *
 * @module
 */
import { type BoundaryResult, ToolBoundary } from "@tool-boundary/core";
import type { CanonicalRecord } from "@tool-boundary/core/harness";
import { utf8ByteLength } from "@tool-boundary/core/store";
import { DEMO_TOOLS } from "./tools.ts";

/** One scripted call: what it shows, and the envelope fields. */
export interface DemoCall {
  /** What the call demonstrates. */
  note: string;
  /** The framework's tool call ID. */
  toolCallId: string;
  /** The tool. */
  toolName: string;
  /** The input, as an object or as JSON text. */
  input: unknown;
  /** A different run ID in the envelope, for the cross-run case. */
  runId?: string;
}

/** The scripted calls, in order. */
export const DEMO_CALLS: readonly DemoCall[] = [
  {
    note: "runbook has it",
    toolCallId: "call_rb_1",
    toolName: "search_runbook",
    input: { query: "disk full" },
  },
  {
    note: "runbook has nothing (scoped)",
    toolCallId: "call_rb_2",
    toolName: "search_runbook",
    input: '{"query":"kafka lag"}',
  },
  {
    note: "logs have it",
    toolCallId: "toolu_logs_1",
    toolName: "search_logs",
    input: { service: "checkout", query: "timeout" },
  },
  {
    note: "logs have nothing (scoped)",
    toolCallId: "toolu_logs_2",
    toolName: "search_logs",
    input: { service: "worker", query: "timeout", level: "ERROR" },
  },
  {
    note: "logs, third call",
    toolCallId: "toolu_logs_3",
    toolName: "search_logs",
    input: { service: "api", query: "no space" },
  },
  {
    note: "tool budget (3) used up",
    toolCallId: "toolu_logs_4",
    toolName: "search_logs",
    input: { service: "api", query: "disk" },
  },
  {
    note: "raw payload too large",
    toolCallId: "call_traces",
    toolName: "export_traces",
    input: { service: "api" },
  },
  {
    note: "writable tool refused",
    toolCallId: "call_restart",
    toolName: "restart_service",
    input: { service: "api" },
  },
  {
    note: "tool throws",
    toolCallId: "call_metrics",
    toolName: "query_metrics",
    input: { metric: "p99" },
  },
  {
    note: "tool times out",
    toolCallId: "call_trace",
    toolName: "trace_lookup",
    input: { traceId: "4bf92f35" },
  },
  {
    note: "same ID again",
    toolCallId: "call_rb_1",
    toolName: "search_runbook",
    input: { query: "disk full" },
  },
  {
    note: "input fails the schema",
    toolCallId: "call_bad",
    toolName: "search_logs",
    input: { service: "db", query: 42 },
  },
  { note: "no such tool", toolCallId: "call_x", toolName: "rm_rf", input: {} },
  {
    note: "unsafe tool call ID",
    toolCallId: "call {1}",
    toolName: "search_runbook",
    input: { query: "disk" },
  },
  {
    note: "envelope from another run",
    toolCallId: "call_other",
    toolName: "search_runbook",
    input: { query: "disk" },
    runId: "someone-elses-run",
  },
];

/** Pads cells into an aligned text table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length))
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)]
    .join("\n");
}

const clip = (text: string, max = 60) => text.length > max ? `${text.slice(0, max - 1)}…` : text;

/**
 * Runs the demo and returns what it prints.
 *
 * @returns The report text.
 */
export async function runDemo(): Promise<string> {
  const boundary = new ToolBoundary({ tools: DEMO_TOOLS });
  const run = await boundary.startRun({
    runId: "demo-run-1",
    ttlMs: 60_000,
    budget: { calls: 20 },
  });
  const out: string[] = [`Run ${run.runId}: budget ${run.budget.calls} calls\n`];

  const results: [DemoCall, BoundaryResult][] = [];
  for (const call of DEMO_CALLS) {
    results.push([
      call,
      await boundary.invoke(run, {
        toolCallId: call.toolCallId,
        runId: call.runId ?? run.runId,
        toolName: call.toolName,
        input: call.input,
      }),
    ]);
  }
  out.push(
    "What the agent gets back:",
    table(
      ["#", "tool call ID", "tool", "demonstrates", "status", "evidence / code", "agent sees"],
      results.map(([call, result], i) => [
        String(i + 1),
        call.toolCallId,
        call.toolName,
        call.note,
        result.status,
        result.status === "READY" ? result.evidence : result.code,
        clip(result.status === "READY" ? JSON.stringify(result.content) : result.message, 48),
      ]),
    ),
    "",
  );

  const records: CanonicalRecord[] = [];
  for (const call of DEMO_CALLS) {
    if (call.runId !== undefined) continue;
    const record = await boundary.inspect(run.runId, call.toolCallId);
    if (record !== null && !records.some((seen) => seen.toolCallId === record.toolCallId)) {
      records.push(record);
    }
  }
  out.push(
    `Canonical records (harness only): ${records.length} of ${DEMO_CALLS.length} calls; ` +
      "refused calls create none, the duplicate kept the first",
    table(
      ["tool call ID", "tool", "status", "evidence", "error code", "raw bytes", "agent bytes"],
      records.map((record) => [
        record.toolCallId,
        record.toolName,
        record.status,
        record.evidence ?? "",
        record.errorCode ?? "",
        record.raw === undefined ? "(none)" : String(utf8ByteLength(JSON.stringify(record.raw))),
        record.agentResult === null
          ? "(none)"
          : String(utf8ByteLength(JSON.stringify(record.agentResult))),
      ]),
    ),
    "",
  );

  const { facts, omitted } = await boundary.endRunReport(run);
  out.push(
    `Observed facts at the end of the run (READY records only; ${omitted} omitted by the caps):`,
    table(
      ["tool call ID", "kind", "scope"],
      facts.map((fact) => [fact.toolCallId, fact.kind, clip(fact.scope, 80)]),
    ),
  );
  return out.join("\n");
}

if (import.meta.main) {
  console.log(await runDemo());
}
