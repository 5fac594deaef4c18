/**
 * OpenTelemetry spans for tool-boundary: one `execute_tool` span per `invoke`, refusals
 * included, following the GenAI semantic conventions' "Execute tool span", with no payloads and
 * no exception text unless asked.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   BasicTracerProvider,
 *   InMemorySpanExporter,
 *   SimpleSpanProcessor,
 * } from "@opentelemetry/sdk-trace-base";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { otelObserver } from "@tool-boundary/otel";
 *
 * const exporter = new InMemorySpanExporter();
 * const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
 * const lookup = defineTool({
 *   name: "lookup",
 *   readOnly: true,
 *   execute: () => ({ rows: 1 }),
 *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "the table", content: raw.rows }),
 * });
 * const boundary = new ToolBoundary({
 *   tools: [lookup],
 *   observe: otelObserver({ tracer: provider.getTracer("my-agent") }),
 * });
 * const run = await boundary.startRun({ ttlMs: 60_000 });
 * await boundary.invoke(run, { toolCallId: "call_1", runId: run.runId, toolName: "lookup", input: {} });
 *
 * const [span] = exporter.getFinishedSpans();
 * assert.equal(span?.name, "execute_tool lookup");
 * assert.equal(span?.attributes["gen_ai.tool.call.id"], "call_1");
 * assert.equal(span?.attributes["tool_boundary.evidence"], "EVIDENCE_FOUND");
 * ```
 *
 * @module
 */
import { type Attributes, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { type BoundaryEvent, modelViewText } from "@tool-boundary/core";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * `Tracer` of `@opentelemetry/api`.
 * @internal
 */
type OtelTracer = Tracer;
/**
 * `BoundaryEvent` of `@tool-boundary/core`: what the `observe` hook receives.
 * @internal
 */
type Event = BoundaryEvent;

/** Options of {@linkcode otelObserver}. */
export interface OtelObserverOptions {
  /** Where the spans go, e.g. `provider.getTracer("my-agent")` or `trace.getTracer(...)`. */
  tracer: OtelTracer;
  /**
   * Opt-in: also record what the model was given, as `gen_ai.tool.call.result` (JSON of
   * `{ evidence, scope, content }`, or of `{ code, message }` for an ERROR). That is the bounded
   * agent result, never the raw response, the request or an exception. @default false
   */
  recordResult?: boolean;
  /**
   * Epoch milliseconds, read when a call ends. The boundary reports a call once it is over,
   * with its duration, so a span starts at this reading minus `durationMs`.
   * @default () => performance.timeOrigin + performance.now()
   */
  clock?: () => number;
}

/** The span event a refused call carries (no GenAI convention exists for it). */
export const REFUSED_EVENT = "tool_boundary.refused";

/**
 * Makes the `observe` hook of a `ToolBoundary` that emits one span per `invoke`, named
 * `execute_tool <tool name>` (`execute_tool` when the tool is unknown), kind INTERNAL.
 *
 * Attributes: `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, `gen_ai.tool.type` = `function`; `error.type` = the error code on
 * ERROR (span status ERROR, without a description); `tool_boundary.run.id`,
 * `tool_boundary.status` (READY or ERROR), `tool_boundary.evidence` (EVIDENCE_FOUND,
 * NO_EVIDENCE or ERROR) and `tool_boundary.replayed`; for a call of a tool with a `cost`,
 * `tool_boundary.cost.reserved` (what begin reserved) and `tool_boundary.cost.spent` (what the
 * call spent, absent when its record could not be completed). A call refused before it began (preflight,
 * authorization, a duplicate, a budget) is a span too, with its code in `error.type` and a
 * `tool_boundary.refused` event. Agent-supplied names the boundary refused are never recorded.
 *
 * Nothing else is exported: no request, raw response, exception or message text, unless
 * `recordResult` asks for the agent result. Other boundary events (`run.started`,
 * `run.ended`) are ignored; to log them too, call this observer from your own.
 *
 * @param options The tracer, and what else to record.
 * @returns The function to pass as the `observe` option of `ToolBoundary`.
 */
export function otelObserver(options: OtelObserverOptions): (event: Event) => void {
  const { tracer, recordResult = false } = options;
  const clock = options.clock ?? (() => performance.timeOrigin + performance.now());
  return (event) => {
    if (
      event.type !== "call.finished" && event.type !== "call.refused" &&
      event.type !== "call.replayed"
    ) return;
    const end = clock();
    const { result, toolName, toolCallId } = event;
    const attributes: Attributes = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.type": "function",
    };
    if (toolName !== null) attributes["gen_ai.tool.name"] = toolName;
    if (toolCallId !== null) attributes["gen_ai.tool.call.id"] = toolCallId;
    attributes["tool_boundary.run.id"] = event.runId;
    attributes["tool_boundary.status"] = result.status;
    attributes["tool_boundary.evidence"] = result.status === "READY" ? result.evidence : "ERROR";
    attributes["tool_boundary.replayed"] = (result as { replayed?: unknown }).replayed === true;
    if (result.status === "ERROR") attributes["error.type"] = result.code;
    if (event.type === "call.finished" && event.cost !== undefined) {
      attributes["tool_boundary.cost.reserved"] = event.cost.reserved;
      if (event.cost.spent !== null) attributes["tool_boundary.cost.spent"] = event.cost.spent;
    }
    if (recordResult) attributes["gen_ai.tool.call.result"] = modelViewText(result);

    const durationMs = event.type === "call.finished" ? event.durationMs : 0;
    const span = tracer.startSpan(
      toolName === null ? "execute_tool" : `execute_tool ${toolName}`,
      { kind: SpanKind.INTERNAL, startTime: end - Math.max(0, durationMs), attributes },
    );
    if (event.type === "call.refused") {
      span.addEvent(REFUSED_EVENT, { "tool_boundary.code": event.code }, end);
    }
    // No description: the status carries no message text.
    if (result.status === "ERROR") span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(end);
  };
}
