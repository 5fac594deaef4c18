/**
 * The tools of a tool-boundary `ToolBoundary` as an AI SDK `ToolSet`, for `generateText`,
 * `streamText` and `ToolLoopAgent` of the `ai` package (7, and 6). Every call goes through
 * `boundary.invoke` with the SDK's own tool call ID and abort signal; the model gets the bounded
 * result, or an error tool result with a safe code, never raw data or exception text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateText, isStepCount } from "ai";
 * import { MockLanguageModelV4 } from "ai/test";
 * import { defineTool, ToolBoundary } from "@tool-boundary/core";
 * import { aiSdkTools } from "@tool-boundary/ai-sdk";
 *
 * const lookup = defineTool({
 *   name: "lookup",
 *   description: "Looks a key up.",
 *   readOnly: true,
 *   execute: (input) => ({ value: input.key === "a" ? 1 : null, token: "raw, harness-only" }),
 *   project: (raw) => ({
 *     evidence: raw.value === null ? "NO_EVIDENCE" : "EVIDENCE_FOUND",
 *     scope: "the lookup table",
 *     content: raw.value,
 *   }),
 * });
 * const boundary = new ToolBoundary({ tools: [lookup] });
 * const run = await boundary.startRun({ ttlMs: 60_000 });
 *
 * const usage = {
 *   inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
 *   outputTokens: { total: 1, text: 1, reasoning: 0 },
 * };
 * const model = new MockLanguageModelV4({
 *   doGenerate: [
 *     {
 *       content: [{ type: "tool-call", toolCallId: "call_1", toolName: "lookup", input: '{"key":"a"}' }],
 *       finishReason: { unified: "tool-calls", raw: undefined },
 *       usage,
 *       warnings: [],
 *     },
 *     {
 *       content: [{ type: "text", text: "a is 1" }],
 *       finishReason: { unified: "stop", raw: undefined },
 *       usage,
 *       warnings: [],
 *     },
 *   ],
 * });
 * const { text } = await generateText({
 *   model,
 *   tools: aiSdkTools(boundary, run),
 *   prompt: "What is a?",
 *   stopWhen: isStepCount(2),
 * });
 * assert.equal(text, "a is 1");
 * // What the model got for the call, in its next request:
 * const message = model.doGenerateCalls[1]?.prompt.at(-1);
 * const part = message?.role === "tool" ? message.content[0] : undefined;
 * assert.deepEqual(part?.type === "tool-result" ? part.output : null, {
 *   type: "json",
 *   value: { evidence: "EVIDENCE_FOUND", scope: "the lookup table", content: 1 },
 * });
 * assert.equal((await boundary.inspect(run.runId, "call_1"))?.status, "READY");
 * ```
 *
 * @module
 */
import {
  jsonSchema,
  type JSONSchema7,
  type JSONValue,
  tool,
  type ToolResultPart,
  type ToolSet,
} from "ai";
import {
  type BoundaryResult,
  modelView,
  type RunContext,
  type ToolBoundary,
} from "@tool-boundary/core";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * `ToolBoundary` of `@tool-boundary/core`.
 * @internal
 */
type Boundary = ToolBoundary;
/**
 * `RunContext` of `@tool-boundary/core`: the run every call belongs to.
 * @internal
 */
type Run = RunContext;
/**
 * `BoundaryResult` of `@tool-boundary/core`: what `invoke` returned.
 * @internal
 */
type Result = BoundaryResult;
/**
 * `ToolSet` of the `ai` package.
 * @internal
 */
type Tools = ToolSet;
/**
 * The `output` of the `ai` package's `ToolResultPart`: what the model is given.
 * @internal
 */
type ModelOutput = ToolResultPart["output"];

/** What the adapter uses of a `ToolBoundary`: its tool list and `invoke`. */
export type AdaptedBoundary = Pick<Boundary, "describeTools" | "invoke">;

/**
 * The boundary's tools as an AI SDK `ToolSet`: pass it as `tools` to `generateText`,
 * `streamText` or `new ToolLoopAgent(...)`.
 *
 * Every tool of the boundary is offered, writable ones included (they answer NOT_READ_ONLY).
 * Each input schema is the boundary's JSON Schema, given to the SDK without a validator: only
 * the boundary validates, so wrong input reaches it and comes back as INVALID_INPUT (with the
 * failing paths in `issues`). Each call is `boundary.invoke(run, ...)` with the SDK's
 * `toolCallId` and `abortSignal`. The model gets READY as JSON `{ evidence, scope, content }`
 * and ERROR as an error tool result `{ code, message }` (`error-json`, see
 * {@linkcode toModelOutput}); `execute` never throws. The SDK's own step results hold the whole
 * `BoundaryResult` (with `status` and `toolCallId`), which carries no raw data either.
 *
 * @param boundary The boundary (a `ToolBoundary`).
 * @param run The run every call belongs to, from `boundary.startRun()`.
 * @returns The tool set, keyed by tool name (an object without prototype).
 */
export function aiSdkTools(boundary: AdaptedBoundary, run: Run): Tools {
  // No prototype: a tool named like an Object.prototype member (or "__proto__") is an own key.
  const tools: ToolSet = Object.create(null);
  for (const described of boundary.describeTools()) {
    const toolName = described.name;
    tools[toolName] = tool({
      ...(described.description === undefined ? {} : { description: described.description }),
      // Without `validate` the SDK only parses the JSON: the boundary checks the input.
      inputSchema: jsonSchema(described.inputSchema as JSONSchema7),
      execute: (input, { toolCallId, abortSignal }): Promise<BoundaryResult> =>
        boundary.invoke(
          run,
          { toolCallId, runId: run.runId, toolName, input },
          abortSignal === undefined ? {} : { signal: abortSignal },
        ),
      toModelOutput,
    });
  }
  return tools;
}

/**
 * What the model gets for a boundary result: READY as `{ type: "json", value: { evidence,
 * scope, content } }`, ERROR as `{ type: "error-json", value: { code, message } }` (plus
 * `issues` for INVALID_INPUT). The tools of {@linkcode aiSdkTools} use it as their
 * `toModelOutput`.
 *
 * It takes the SDK's `{ output }` (ai 6 and 7) or the result itself, as Mastra passes it.
 * Anything that is not a boundary result becomes EXECUTION_FAILED, so that nothing foreign is
 * shown to the model.
 *
 * @param arg `{ output }` with a `BoundaryResult`, or the `BoundaryResult`.
 * @returns The tool result output for the model.
 */
export function toModelOutput(
  arg: { output: unknown } | Result,
): ModelOutput {
  const result = isResult(arg)
    ? arg
    : isResult((arg as { output?: unknown })?.output)
    ? (arg as { output: BoundaryResult }).output
    : undefined;
  const view = modelView(result);
  return "evidence" in view
    ? { type: "json", value: { ...view, content: view.content as JSONValue } }
    : { type: "error-json", value: view as unknown as JSONValue };
}

function isResult(value: unknown): value is BoundaryResult {
  if (typeof value !== "object" || value === null) return false;
  const status = (value as { status?: unknown }).status;
  return status === "READY" || status === "ERROR";
}
