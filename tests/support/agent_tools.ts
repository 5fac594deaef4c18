/**
 * The boundary the framework adapter tests drive (packages/*\/tests): a read-only search whose
 * raw data carries the canary, a tool that throws the canary, a writable tool, two tools that
 * finish only when both run at once, and a tool that waits until its call is aborted. Each
 * fixture is fresh: its own MemoryStore, counters and observed events.
 */
import * as v from "valibot";
import { type BoundaryEvent, defineTool, ToolBoundary } from "../../src/mod.ts";
import { CANARY_SECRET } from "../../src/testing/fakes.ts";

export { CANARY_SECRET };

/** The message the throwing tool throws: the model must never see it. */
export const THROWN_TEXT = `upstream refused the token ${CANARY_SECRET}`;

/** How long the paired tools wait for each other before TOOL_TIMEOUT: only a failure waits. */
const PAIR_TIMEOUT_MS = 5_000;

/** A fresh fixture. */
export interface AgentFixture {
  boundary: ToolBoundary;
  /** Executions per tool name. */
  executions: Record<string, number>;
  /** Everything the boundary's observer got. */
  events: BoundaryEvent[];
  /** Resolves when `wait_for_abort` has started. */
  slowStarted: Promise<void>;
  /** Resolves with the `call.finished` event of a tool call ID. */
  finished(toolCallId: string): Promise<BoundaryEvent>;
}

/** Makes a fresh fixture. */
export function agentFixture(): AgentFixture {
  const executions: Record<string, number> = {};
  const count = (name: string) => executions[name] = (executions[name] ?? 0) + 1;
  const events: BoundaryEvent[] = [];
  const waiting = new Map<string, (event: BoundaryEvent) => void>();
  let arrived = 0;
  let bothArrived!: () => void;
  const pairMet = new Promise<void>((resolve) => bothArrived = resolve);
  let startSlow!: () => void;
  const slowStarted = new Promise<void>((resolve) => startSlow = resolve);

  const pairTool = (name: string) =>
    defineTool({
      name,
      readOnly: true,
      timeoutMs: PAIR_TIMEOUT_MS,
      execute: async (_input, { signal }) => {
        count(name);
        if (++arrived === 2) bothArrived();
        await Promise.race([pairMet, aborted(signal)]);
        return { met: true, token: CANARY_SECRET };
      },
      project: () => ({
        evidence: "EVIDENCE_FOUND",
        scope: `${name} ran beside its pair`,
        content: name,
      }),
    });

  const boundary = new ToolBoundary({
    tools: [
      defineTool({
        name: "search_logs",
        description: "Searches the service logs.",
        readOnly: true,
        input: v.object({ query: v.string() }),
        execute: ({ query }) => {
          count("search_logs");
          const lines = query === "timeout" ? ["api 12:01:07 upstream timeout after 30s"] : [];
          return { query, lines, token: CANARY_SECRET };
        },
        project: (raw) => ({
          evidence: raw.lines.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
          scope: `logs matching "${raw.query}", last 24 hours`,
          content: raw.lines,
        }),
      }),
      defineTool({
        name: "read_config",
        readOnly: true,
        execute: (): null => {
          count("read_config");
          throw new Error(THROWN_TEXT);
        },
        project: () => ({ evidence: "NO_EVIDENCE", scope: "never projected", content: null }),
      }),
      defineTool({
        name: "restart_service",
        readOnly: false,
        execute: () => {
          count("restart_service");
          return { restarted: true };
        },
        project: () => ({ evidence: "EVIDENCE_FOUND", scope: "restart", content: null }),
      }),
      pairTool("pair_left"),
      pairTool("pair_right"),
      defineTool({
        name: "wait_for_abort",
        readOnly: true,
        execute: async (_input, { signal }): Promise<null> => {
          count("wait_for_abort");
          startSlow();
          await aborted(signal);
          throw signal.reason;
        },
        project: () => ({ evidence: "NO_EVIDENCE", scope: "never projected", content: null }),
      }),
    ],
    observe: (event) => {
      events.push(event);
      if (event.type === "call.finished") waiting.get(event.toolCallId)?.(event);
    },
  });

  return {
    boundary,
    executions,
    events,
    slowStarted,
    finished: (toolCallId) => {
      const done = events.find((e) => e.type === "call.finished" && e.toolCallId === toolCallId);
      if (done !== undefined) return Promise.resolve(done);
      return new Promise((resolve) => waiting.set(toolCallId, resolve));
    },
  };
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
