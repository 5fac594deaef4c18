/**
 * The tools of a {@linkcode ToolBoundary} as function tools for the OpenAI Agents SDK
 * (`@openai/agents` 0.20): every call the model makes goes through `boundary.invoke` with the
 * SDK's exact call ID (`details.toolCall.callId`) and its abort signal, and the model gets only
 * the bounded result or a safe error code, as JSON text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { Agent, Runner } from "@openai/agents";
 * import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents-core/testing";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { openaiAgentsTools } from "@tool-boundary/openai-agents";
 *
 * const boundary = new ToolBoundary({
 *   tools: [defineTool({
 *     name: "search_logs",
 *     readOnly: true,
 *     input: v.object({ query: v.string() }),
 *     execute: ({ query }) => ({ query, lines: ["api 12:01 upstream timeout"], token: "raw" }),
 *     project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: `logs for "${raw.query}"`, content: raw.lines }),
 *   })],
 * });
 * const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
 * const model = new ScriptedModel([
 *   [functionCall("search_logs", { query: "timeout" }, { callId: "call_1" })],
 *   [assistantMessage("The API timed out upstream.")],
 * ]);
 * const agent = new Agent({ name: "ops", model, tools: openaiAgentsTools(boundary, run) });
 * await new Runner({ tracingDisabled: true }).run(agent, "Why did the API fail?");
 *
 * const seen = JSON.stringify(model.calls[1]?.request.input);
 * assert.ok(seen.includes("upstream timeout") && !seen.includes('"token"'));
 * assert.equal((await boundary.inspect(run.runId, "call_1"))?.status, "READY");
 * ```
 *
 * @module
 */
import { type FunctionTool, type RunContext as AgentsRunContext, tool } from "@openai/agents-core";
import {
  type BoundaryResult,
  modelViewText,
  type RunContext,
  type ToolBoundary,
} from "@tool-boundary/core";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * `RunContext` of `@tool-boundary/core`.
 * @internal
 */
type Run = RunContext;
/**
 * `ToolBoundary` of `@tool-boundary/core`.
 * @internal
 */
type Boundary = ToolBoundary;
/**
 * `FunctionTool` of `@openai/agents-core`.
 * @internal
 */
type AgentsTool<TContext> = FunctionTool<TContext, NonStrictParameters, string>;
/**
 * `RunContext` of `@openai/agents-core`: the SDK's context of one agent run.
 * @internal
 */
type AgentsContext<TContext> = AgentsRunContext<TContext>;

/**
 * Where the tools find the boundary's run: the `RunContext` itself, or a function that
 * reads it from the SDK's run context on every call (for example `(ctx) => ctx.context.run`
 * after `runner.run(agent, input, { context: { run } })`), so that it survives a `RunState`
 * serialized for an approval and restored later.
 */
export type RunSource<TContext = unknown> =
  | Run
  | ((runContext: AgentsContext<TContext>) => Run);

/**
 * How the tools type their parameters for the SDK (its non-strict JSON schema type); at run time
 * they are each tool's JSON Schema from `describeTools()`, sent as it is.
 */
export type NonStrictParameters = {
  type: "object";
  properties: Record<string, never>;
  required: never[];
  additionalProperties: true;
};

/**
 * What the model gets when the run could not be resolved or `invoke` was misused (no record
 * exists then): a fixed text that never carries the exception.
 */
const FAILED_TEXT = modelViewText(null);

/**
 * Makes one SDK function tool per tool of the boundary, writable tools included (they answer
 * NOT_READ_ONLY, so the model learns it may not use them).
 *
 * - The model sees each tool's JSON Schema from `describeTools()` unchanged (`strict: false`:
 *   the SDK's strict mode rewrites schemas, closing objects and making optional fields
 *   nullable, and strips the nulls it added from the input). The SDK does not validate JSON
 *   schemas, so only the boundary does.
 * - Each call is `boundary.invoke(run, { toolCallId: details.toolCall.callId, ... },
 *   { signal: details.signal })`. A call without the SDK's details (`tool.invoke(ctx, json)`
 *   by hand) has no call ID and answers INVALID_TOOL_CALL_ID.
 * - The result is JSON text: `{ evidence, scope, content }` for READY, `{ code, message }`
 *   (plus `issues` for INVALID_INPUT) for ERROR. The tool never throws: a run that cannot be
 *   resolved gives a fixed EXECUTION_FAILED text without the exception, and `errorFunction`
 *   returns the same text should the SDK ever call it.
 *
 * @param boundary The boundary whose tools the agent may call.
 * @param run The run context, or a function that reads it from the SDK's run context.
 * @returns The function tools, in the boundary's order.
 * @throws {TypeError} When two tool names become the same SDK name (the SDK replaces every
 * character outside `[A-Za-z0-9]` with `_`).
 */
export function openaiAgentsTools<TContext = unknown>(
  boundary: Boundary,
  run: RunSource<TContext>,
): AgentsTool<TContext>[] {
  const sdkNames = new Map<string, string>();
  return boundary.describeTools().map(({ name, description, inputSchema }) => {
    const functionTool = tool<NonStrictParameters, TContext, string>({
      name,
      description: description ?? "",
      parameters: inputSchema as unknown as NonStrictParameters,
      strict: false,
      execute: async (input, runContext, details) => {
        let result: BoundaryResult;
        try {
          const runOfCall = typeof run === "function"
            ? run(runContext as AgentsRunContext<TContext>)
            : run;
          result = await boundary.invoke(runOfCall, {
            toolCallId: details?.toolCall?.callId,
            runId: runOfCall?.runId,
            toolName: name,
            input,
          }, details?.signal === undefined ? {} : { signal: details.signal });
        } catch {
          // Not thrown on to the SDK: it would record the exception text in its trace span.
          return FAILED_TEXT;
        }
        return modelViewText(result);
      },
      errorFunction: () => FAILED_TEXT,
    });
    const clash = sdkNames.get(functionTool.name);
    if (clash !== undefined) {
      throw new TypeError(
        `Cannot make the tools: "${clash}" and "${name}" both become "${functionTool.name}"`,
      );
    }
    sdkNames.set(functionTool.name, name);
    return functionTool;
  });
}
