/**
 * A `createAgent` middleware (`langchain` v1) that routes every tool call of the agent through
 * a {@linkcode ToolBoundary}: it binds the boundary's tools to the model and answers each call
 * in `wrapToolCall` without calling LangChain's handler, so no tool of the agent runs outside
 * the boundary and only the boundary validates.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { AIMessage, createAgent, type ToolMessage } from "langchain";
 * import { fakeModel } from "@langchain/core/testing";
 * import { defineTool, type RunContext, ToolBoundary } from "@tool-boundary/core";
 * import { langchainMiddleware } from "@tool-boundary/langchain/middleware";
 *
 * const boundary = new ToolBoundary({
 *   tools: [defineTool({
 *     name: "search_logs",
 *     readOnly: true,
 *     input: v.object({ query: v.string() }),
 *     execute: ({ query }) => ({ query, lines: [] }),
 *     project: (raw) => ({ evidence: "NO_EVIDENCE", scope: `logs for "${raw.query}"`, content: raw.lines }),
 *   })],
 * });
 * const model = fakeModel()
 *   .respondWithTools([{ name: "search_logs", args: { query: 7 }, id: "call_1" }])
 *   .respond(new AIMessage("I could not search."));
 * // One agent for many runs: the run comes from the runtime context of each invoke.
 * const agent = createAgent({
 *   model,
 *   tools: [],
 *   middleware: [langchainMiddleware<{ run: RunContext }>(boundary, ({ context }) => context!.run)],
 * });
 * const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
 * const { messages } = await agent.invoke(
 *   { messages: [{ role: "user", content: "Any errors?" }] },
 *   { context: { run } },
 * );
 *
 * const answer = messages.find((message) => message.getType() === "tool") as ToolMessage;
 * assert.equal(answer.status, "error");
 * assert.equal(JSON.parse(String(answer.content)).code, "INVALID_INPUT");
 * ```
 *
 * @module
 */
import { type AgentMiddleware, createMiddleware } from "langchain";
import type { ToolBoundary } from "@tool-boundary/core";
import { langchainTools } from "./mod.ts";
import { invokeCall, type RunSource, toToolMessage } from "./tool_message.ts";

export type { RunSource, RunSourceInput } from "./tool_message.ts";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * `ToolBoundary` of `@tool-boundary/core`.
 * @internal
 */
type Boundary = ToolBoundary;
/**
 * `AgentMiddleware` of `langchain`: what `createAgent({ middleware })` takes.
 * @internal
 */
type Middleware = AgentMiddleware;

/**
 * Makes the middleware. Its `tools` are {@linkcode langchainTools} of the boundary, so the model
 * sees each tool's JSON Schema; its `wrapToolCall` sends every call the model makes, whatever
 * its name, to `boundary.invoke` with `toolCall.id` and `runtime.signal`, and returns the
 * ToolMessage (`status: "error"` for ERROR, the result as `artifact`). A name the boundary does
 * not know answers UNKNOWN_TOOL, so a tool passed to `createAgent` beside this middleware is
 * never run.
 *
 * @param boundary The boundary whose tools the agent may call.
 * @param run The run context, or a function that reads it from the agent's runtime (its
 * `context` is the `context` given to `agent.invoke`).
 * @returns The middleware for `createAgent({ middleware: [...] })`.
 */
export function langchainMiddleware<TContext = unknown>(
  boundary: Boundary,
  run: RunSource<TContext>,
): Middleware {
  return createMiddleware({
    name: "ToolBoundary",
    tools: langchainTools(boundary, run),
    wrapToolCall: async ({ toolCall, runtime }) => {
      const result = await invokeCall(
        boundary,
        run,
        runtime as { context?: TContext },
        { id: toolCall.id, name: toolCall.name, args: toolCall.args },
        runtime.signal,
      );
      return toToolMessage(result, toolCall.id ?? "", toolCall.name);
    },
  });
}
