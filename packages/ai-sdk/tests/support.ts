/** Scripted model steps for the AI SDK's mock language models, and the tools the tests use. */
import * as v from "valibot";
import { type AnyToolDefinition, defineTool } from "@tool-boundary/core";
// fakes.ts itself: the testing entry also loads the conformance suite (node:assert), which the
// workerd bundle of worker.ts cannot import.
import { CANARY_SECRET } from "../../../src/testing/fakes.ts";

/** Token usage a mock step reports (the SDK requires one). */
export const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A tool call as a model emits it: the input is JSON text. */
export function toolCall(toolCallId: string, toolName: string, input: string) {
  return { type: "tool-call" as const, toolCallId, toolName, input };
}

/** A model step that calls tools. */
export function callStep(...calls: ReturnType<typeof toolCall>[]) {
  return {
    content: calls,
    finishReason: { unified: "tool-calls" as const, raw: undefined },
    usage,
    warnings: [],
  };
}

/** A model step that answers. */
export function textStep(text: string) {
  return {
    content: [{ type: "text" as const, text }],
    finishReason: { unified: "stop" as const, raw: undefined },
    usage,
    warnings: [],
  };
}

/** Resolves when `count` calls are in flight at once; each call waits for that. */
export function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === count) open();
    return opened;
  };
}

/**
 * The tools: `search_logs` (validated input; waits for `gate` when given), `crash` (throws an
 * error carrying the canary), `restart_service` (writable) and `wait_for_abort` (runs until its
 * signal fires, after calling `onStart`).
 */
export function testTools(
  options: { gate?: () => Promise<void>; onStart?: () => void } = {},
): AnyToolDefinition[] {
  const searchLogs = defineTool({
    name: "search_logs",
    description: "Searches the service logs.",
    readOnly: true,
    timeoutMs: 2_000,
    input: v.object({ query: v.string(), limit: v.optional(v.number()) }),
    execute: async ({ query }) => {
      await options.gate?.();
      return { query, hits: [`12:01 ${query}`], token: CANARY_SECRET };
    },
    project: (raw) => ({
      evidence: "EVIDENCE_FOUND",
      scope: `logs, query "${raw.query}"`,
      content: raw.hits,
    }),
  });
  const crash = defineTool({
    name: "crash",
    readOnly: true,
    execute: (): null => {
      throw new Error(`backend refused credential ${CANARY_SECRET}`);
    },
    project: () => ({ evidence: "NO_EVIDENCE", scope: "", content: null }),
  });
  const restart = defineTool({
    name: "restart_service",
    description: "Restarts a service.",
    readOnly: false,
    execute: () => ({ restarted: true, token: CANARY_SECRET }),
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "", content: null }),
  });
  const waitForAbort = defineTool({
    name: "wait_for_abort",
    readOnly: true,
    timeoutMs: 10_000,
    execute: (_input, { signal }) =>
      new Promise<null>((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        options.onStart?.();
      }),
    project: () => ({ evidence: "NO_EVIDENCE", scope: "", content: null }),
  });
  return [searchLogs, crash, restart, waitForAbort];
}
