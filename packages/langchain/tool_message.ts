/**
 * One LangChain tool call through the boundary, answered as a ToolMessage. Shared by the tools
 * and the middleware; not exported by the package.
 *
 * @module
 */
import { ToolMessage } from "@langchain/core/messages";
import {
  type BoundaryResult,
  ERROR_MESSAGES,
  type ErrorResult,
  modelViewText,
  type RunContext,
  type ToolBoundary,
} from "@tool-boundary/core";

/** What a run resolver gets: the tool's runnable config, or the agent's runtime. */
export interface RunSourceInput<TContext = unknown> {
  /** LangGraph's runtime context (`invoke(input, { context })`). */
  readonly context?: TContext;
}

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * `RunContext` of `@tool-boundary/core`.
 * @internal
 */
type Run = RunContext;

/**
 * Where the tools find the boundary's run: the `RunContext` itself, or a function that
 * reads it on every call, for example from LangGraph's runtime context after
 * `agent.invoke(input, { context: { run } })`: `({ context }) => context.run`.
 */
export type RunSource<TContext = unknown> =
  | Run
  | ((source: RunSourceInput<TContext>) => Run);

/** A tool call as LangChain gives it. */
export interface LangChainCall {
  /** The model's tool call ID, `tool_call_id` of the answer. */
  id: unknown;
  /** The name the boundary looks up. */
  name: string;
  /** The arguments, unvalidated. */
  args: unknown;
}

/**
 * Runs one call through the boundary. A run that cannot be resolved, or an `invoke` that throws
 * (misuse only), gives a fixed EXECUTION_FAILED answer without the exception; no record exists.
 *
 * @param boundary The boundary.
 * @param run Where the run comes from.
 * @param source What a run resolver gets.
 * @param call The call.
 * @param signal The framework's abort signal for the call.
 * @returns The boundary's result.
 */
export async function invokeCall<TContext>(
  boundary: ToolBoundary,
  run: RunSource<TContext>,
  source: RunSourceInput<TContext>,
  call: LangChainCall,
  signal: AbortSignal | undefined,
): Promise<BoundaryResult> {
  try {
    const runOfCall = typeof run === "function" ? run(source) : run;
    return await boundary.invoke(runOfCall, {
      toolCallId: call.id,
      runId: runOfCall?.runId,
      toolName: call.name,
      input: call.args,
    }, signal === undefined ? {} : { signal });
  } catch {
    return failed(call.id);
  }
}

/**
 * The answer the model gets: JSON of `{ evidence, scope, content }` or `{ code, message }` (plus
 * `issues` for INVALID_INPUT), `status: "error"` for ERROR, the whole result as `artifact`.
 *
 * @param result The boundary's result.
 * @param toolCallId The call's ID.
 * @param name The tool name the model used.
 * @returns The ToolMessage.
 */
export function toToolMessage(
  result: BoundaryResult,
  toolCallId: string,
  name: string,
): ToolMessage {
  return new ToolMessage({
    tool_call_id: toolCallId,
    name,
    status: result.status === "READY" ? "success" : "error",
    content: modelViewText(result),
    artifact: result,
  });
}

function failed(toolCallId: unknown): ErrorResult {
  return {
    status: "ERROR",
    toolCallId: typeof toolCallId === "string" ? toolCallId : null,
    code: "EXECUTION_FAILED",
    message: ERROR_MESSAGES.EXECUTION_FAILED,
  };
}
