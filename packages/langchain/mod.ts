/**
 * The tools of a {@linkcode ToolBoundary} as LangChain tools (`@langchain/core` 1.x), for
 * `createAgent` of `langchain` v1 and LangGraph's `ToolNode`: every call goes through
 * `boundary.invoke` with the call's exact `tool_call_id` and the run's abort signal, and is
 * answered by a ToolMessage with that `tool_call_id`, `status: "error"` for ERROR, the bounded
 * result (or the safe error code) as JSON content and the whole boundary result as `artifact`.
 *
 * The middleware for `createAgent` is in `@tool-boundary/langchain/middleware`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { AIMessage, createAgent } from "langchain";
 * import { fakeModel } from "@langchain/core/testing";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { langchainTools } from "@tool-boundary/langchain";
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
 * const model = fakeModel()
 *   .respondWithTools([{ name: "search_logs", args: { query: "timeout" }, id: "call_1" }])
 *   .respond(new AIMessage("The API timed out upstream."));
 * const agent = createAgent({ model, tools: langchainTools(boundary, run) });
 * const { messages } = await agent.invoke({ messages: [{ role: "user", content: "Why?" }] });
 *
 * const answer = messages.find((message) => message.getType() === "tool");
 * assert.equal(answer?.content, JSON.stringify({
 *   evidence: "EVIDENCE_FOUND",
 *   scope: 'logs for "timeout"',
 *   content: ["api 12:01 upstream timeout"],
 * }));
 * assert.equal((await boundary.inspect(run.runId, "call_1"))?.status, "READY");
 * ```
 *
 * @module
 */
import { CallbackManager } from "@langchain/core/callbacks/manager";
import type { ToolCall, ToolMessage } from "@langchain/core/messages";
import { ensureConfig, mergeConfigs } from "@langchain/core/runnables";
import {
  StructuredTool,
  type StructuredToolCallInput,
  type StructuredToolInterface,
  type ToolReturnType,
  type ToolRunnableConfig,
} from "@langchain/core/tools";
import { modelViewText, type ToolBoundary } from "@tool-boundary/core";
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
 * `StructuredToolInterface` of `@langchain/core/tools`, for JSON Schema input.
 * @internal
 */
type LangChainTool<T> = StructuredToolInterface<JsonSchema, unknown, T>;

/** A tool's JSON Schema, the `schema` of each tool. */
export type JsonSchema = Record<string, unknown>;

/**
 * Makes one LangChain tool per tool of the boundary, writable tools included (they answer
 * NOT_READ_ONLY, so the model learns it may not use them).
 *
 * - `schema` is the tool's JSON Schema from `describeTools()`, bound to the model as it is.
 *   LangChain's own tools validate JSON schemas before their function runs (and put a stack
 *   trace in the message on failure); these override `invoke` so that only the boundary
 *   validates.
 * - A ToolCall input (`{ id, name, args, type: "tool_call" }`, as ToolNode sends) gives a
 *   ToolMessage with `tool_call_id: id`; plain arguments give the content text alone and, with
 *   no call ID, INVALID_TOOL_CALL_ID.
 * - `config.signal` becomes the invoke signal; tool start and end reach the config's callbacks.
 *
 * @param boundary The boundary whose tools the agent may call.
 * @param run The run context, or a function that reads it from the tool's config (its
 * `context` is LangGraph's runtime context).
 * @returns The tools, in the boundary's order.
 */
export function langchainTools<TContext = unknown>(
  boundary: Boundary,
  run: RunSource<TContext>,
): LangChainTool<string>[] {
  return boundary.describeTools().map((described) =>
    new BoundaryTool(boundary, run, described.name, described.description ?? "", {
      ...described.inputSchema,
    })
  );
}

class BoundaryTool<TContext> extends StructuredTool<JsonSchema, unknown, unknown, string> {
  override name: string;
  override description: string;
  override schema: JsonSchema;
  readonly #boundary: ToolBoundary;
  readonly #run: RunSource<TContext>;

  constructor(
    boundary: ToolBoundary,
    run: RunSource<TContext>,
    name: string,
    description: string,
    schema: JsonSchema,
  ) {
    super();
    this.name = name;
    this.description = description;
    this.schema = schema;
    this.#boundary = boundary;
    this.#run = run;
  }

  static override lc_name(): string {
    return "BoundaryTool";
  }

  override async invoke<
    TInput extends StructuredToolCallInput<JsonSchema, unknown>,
    TConfig extends ToolRunnableConfig | undefined,
  >(input: TInput, config?: TConfig): Promise<ToolReturnType<TInput, TConfig, string>> {
    const merged: ToolRunnableConfig = ensureConfig(mergeConfigs(this.defaultConfig, config));
    const toolCall = isToolCall(input) ? input : undefined;
    const toolCallId = toolCall !== undefined ? toolCall.id : merged.toolCall?.id;
    const args = toolCall !== undefined ? toolCall.args : input;

    const callbacks = CallbackManager.configure(
      merged.callbacks,
      this.callbacks,
      merged.tags,
      this.tags,
      merged.metadata,
      this.metadata,
      { verbose: this.verbose },
    );
    const runManager = await callbacks?.handleToolStart(
      this.toJSON(),
      typeof args === "string" ? args : JSON.stringify(args) ?? "",
      merged.runId,
      undefined,
      undefined,
      undefined,
      merged.runName,
      toolCallId,
    );
    const result = await invokeCall(
      this.#boundary,
      this.#run,
      merged as ToolRunnableConfig<Record<string, unknown>, TContext>,
      { id: toolCallId, name: this.name, args },
      merged.signal,
    );
    const output: ToolMessage | string = typeof toolCallId === "string"
      ? toToolMessage(result, toolCallId, this.name)
      : modelViewText(result);
    await runManager?.handleToolEnd(output);
    return output as ToolReturnType<TInput, TConfig, string>;
  }

  /** The deprecated entry point: the same path as {@linkcode invoke}, never the validating one. */
  override call<
    TArg extends StructuredToolCallInput<JsonSchema, unknown>,
    TConfig extends ToolRunnableConfig | undefined,
  >(arg: TArg, configArg?: TConfig): Promise<ToolReturnType<TArg, TConfig, string>> {
    return this.invoke(arg, configArg);
  }

  protected override _call(): Promise<string> {
    // Never reached: invoke and call above do not use it.
    return Promise.reject(new TypeError("BoundaryTool runs through invoke()"));
  }
}

function isToolCall(input: unknown): input is ToolCall {
  return typeof input === "object" && input !== null && "type" in input &&
    input.type === "tool_call";
}
