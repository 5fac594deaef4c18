/**
 * The workflow every engine test runs, the same in each engine: for each key, one step that calls
 * the read-only tool `lookup_total` through the boundary with `invokeOnce`, under a tool call ID
 * made from the workflow's ID and the step's name. The tool asks the harness (the upstream API,
 * which counts executions); the crash points ask the harness what to do, so that the test decides
 * where each attempt dies.
 *
 * @module
 */
import * as v from "valibot";
import {
  type BoundaryResult,
  defineTool,
  type RunContext,
  ToolBoundary,
} from "@tool-boundary/core";
import type { Store } from "@tool-boundary/core/store";
import { invokeOnce, stepToolCallId } from "@tool-boundary/durable";

/** Where a step's first attempt dies, if at all. */
export type Crash =
  | "exit-before"
  | "throw-before"
  | "kill-during"
  | "throw-during"
  | "exit-after"
  | "throw-after";

/** The workflow's input. */
export interface LookupsInput {
  /** The boundary run, started by the harness: the workflow's ID. */
  runId: string;
  /** One step per lookup, in order, each with its OUTCOME_UNKNOWN policy. */
  lookups: { key: string; onUnknown: "retry" | "probe" }[];
}

/** The boundary of the worker: the harness's tool, duplicates replayed. */
export function lookupsBoundary(store: Store, harnessUrl: string): ToolBoundary {
  const lookupTotal = defineTool({
    name: "lookup_total",
    readOnly: true,
    input: v.object({ key: v.string() }),
    execute: async ({ key }, { toolCallId, signal }) => {
      const res = await fetch(`${harnessUrl}/tool`, {
        method: "POST",
        body: JSON.stringify({ toolCallId, key }),
        signal,
      });
      return await res.json() as { key: string; total: number };
    },
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "totals", content: raw }),
  });
  return new ToolBoundary({ store, tools: [lookupTotal], onDuplicate: "replay" });
}

/**
 * One step's body, as the engine runs it on every attempt.
 *
 * @param exit Ends the worker's process at once (where the engine runs in one).
 */
export async function lookupStep(
  boundary: ToolBoundary,
  run: RunContext,
  workflowId: string,
  lookup: LookupsInput["lookups"][number],
  harnessUrl: string,
  exit: () => never,
): Promise<BoundaryResult> {
  const step = `lookup-${lookup.key}`;
  const crash = async (point: string) => {
    const res = await fetch(`${harnessUrl}/crash`, {
      method: "POST",
      body: JSON.stringify({ step, point }),
    });
    const { action } = await res.json();
    if (action === "exit") exit();
    if (action === "throw") throw new Error(`${step} crashed ${point} its tool call`);
  };
  await crash("before");
  const pending = invokeOnce(boundary, run, {
    toolCallId: await stepToolCallId([workflowId, step]), // never the attempt number
    runId: run.runId,
    toolName: "lookup_total",
    input: { key: lookup.key },
  }, {
    onUnknown: lookup.onUnknown,
    onOutcomeUnknown: async ({ toolCallId, action }) => {
      await fetch(`${harnessUrl}/unknown`, {
        method: "POST",
        body: JSON.stringify({ step, toolCallId, action }),
      });
    },
  });
  pending.catch(() => {}); // an attempt that crashes below leaves it running, unawaited
  await crash("during");
  const result = await pending;
  await crash("after");
  return result;
}
