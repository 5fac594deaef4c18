/**
 * The test side of the durable engine tests: the upstream API the tool calls (it counts every
 * execution, by tool call ID, where no crash of the engine's worker can reset it), the crash plan
 * the worker asks at each crash point, and the checks every engine's test makes on the outcome.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { BoundaryResult, ObservedFact, ToolBoundary } from "@tool-boundary/core";
import type { CallSummary } from "@tool-boundary/core/harness";
import { probeToolCallId, stepToolCallId } from "@tool-boundary/durable";
import type { Crash, LookupsInput } from "./lookups.ts";

/** What the worker hears at a crash point: carry on, exit the process, or throw from the step. */
export type CrashAction = "none" | "exit" | "throw";

/** A crash point of a step: before `invokeOnce`, while its tool runs, after it returned. */
export type CrashPoint = "before" | "during" | "after";

/** The harness the test starts. */
export interface Harness {
  /** Its base URL, for the worker (`HARNESS_URL`). */
  readonly url: string;
  /** Tool executions by tool call ID. */
  readonly executions: Map<string, number>;
  /** The crash actions given, as `<step> <point> <action>`, in order. */
  readonly crashes: string[];
  /** The unknown outcomes the worker reported, as `<toolCallId> <action>`, in order. */
  readonly unknowns: string[];
  /** Plans the crashes of a workflow run: step name -> crash. Each crash happens once. */
  plan(crashes: Record<string, Crash>): void;
  /** Stops the server. */
  stop(): Promise<void>;
}

/**
 * Starts the harness on a free loopback port.
 *
 * @param onToolStart Called when the tool of a `kill-during` step starts running (once): kill
 *   the worker here. The tool's answer is sent only after it resolves.
 */
export function startHarness(
  onToolStart: (step: string) => Promise<void> = () => Promise.resolve(),
): Harness {
  const executions = new Map<string, number>();
  const crashes: string[] = [];
  const unknowns: string[] = [];
  let planned = new Map<string, Crash>();
  const done = new Set<string>();
  // A `throw-during` step: its tool has started / may answer (once the retry saw OUTCOME_UNKNOWN).
  const started = new Map<string, PromiseWithResolvers<void>>();
  const released = new Map<string, PromiseWithResolvers<void>>();
  const latch = (map: Map<string, PromiseWithResolvers<void>>, step: string) => {
    if (!map.has(step)) map.set(step, Promise.withResolvers<void>());
    return map.get(step)!;
  };
  const once = (step: string, crash: Crash): boolean => {
    if (planned.get(step) !== crash || done.has(`${step} ${crash}`)) return false;
    done.add(`${step} ${crash}`);
    return true;
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const body = await req.json();
    if (path === "/tool") {
      const { toolCallId, key } = body as { toolCallId: string; key: string };
      executions.set(toolCallId, (executions.get(toolCallId) ?? 0) + 1);
      const step = `lookup-${key}`;
      if (once(step, "kill-during")) await onToolStart(step);
      if (planned.get(step) === "throw-during" && !released.has(`${step}:answered`)) {
        released.set(`${step}:answered`, Promise.withResolvers<void>());
        latch(started, step).resolve();
        await latch(released, step).promise;
      }
      return Response.json({ key, total: [...key].reduce((sum, c) => sum + c.charCodeAt(0), 0) });
    }
    if (path === "/crash") {
      const { step, point } = body as { step: string; point: CrashPoint };
      let action: CrashAction = "none";
      const crash = planned.get(step);
      if (point === "during" && crash === "throw-during" && once(step, crash)) {
        await latch(started, step).promise; // the tool runs: now the step dies
        action = "throw";
      } else if (crash === `exit-${point}` && once(step, crash)) action = "exit";
      else if (crash === `throw-${point}` && once(step, crash)) action = "throw";
      if (action !== "none") crashes.push(`${step} ${point} ${action}`);
      return Response.json({ action });
    }
    if (path === "/unknown") {
      const { step, toolCallId, action } = body as Record<string, string>;
      unknowns.push(`${toolCallId} ${action}`);
      // The retry has seen OUTCOME_UNKNOWN: the first attempt's tool may now answer.
      if (planned.get(step!) === "throw-during") latch(released, step!).resolve();
      return Response.json({});
    }
    return new Response("not found", { status: 404 });
  });
  const { port } = server.addr;
  return {
    url: `http://127.0.0.1:${port}`,
    executions,
    crashes,
    unknowns,
    plan(crashes) {
      planned = new Map(Object.entries(crashes));
    },
    async stop() {
      for (const held of released.values()) held.resolve();
      await server.shutdown();
    },
  };
}

/** What an engine test checks of one workflow run, with crashes or without. */
export interface Outcome {
  /** The run (the workflow's ID). */
  runId: string;
  /** The workflow's value: one step value per lookup. */
  values: BoundaryResult[];
  /** `listCalls(runId)`. */
  calls: CallSummary[];
  /** The record of each value's tool call ID, as `inspect` gives it. */
  records: ({ status: string; agentResult: unknown } | null)[];
  /** `endRun(runId)`. */
  facts: ObservedFact[];
}

/**
 * What the boundary recorded for a workflow run that ended with `values`: each value's record,
 * the run's calls, and the facts of its end.
 *
 * @param boundary The boundary the workflow's steps called.
 * @param runId The run.
 * @param values The workflow's value.
 */
export async function outcomeOf(
  boundary: ToolBoundary,
  runId: string,
  values: BoundaryResult[],
): Promise<Outcome> {
  const records = [];
  for (const value of values) records.push(await boundary.inspect(runId, value.toolCallId ?? ""));
  return {
    runId,
    values,
    calls: await boundary.listCalls(runId),
    records,
    facts: await boundary.endRun(runId),
  };
}

/**
 * The facts of a run with what differs between two runs of one workflow taken out: the run ID
 * inside each tool call ID, the time, and the probe suffix a settled unknown outcome adds.
 */
export function comparableFacts(runId: string, facts: ObservedFact[]): unknown[] {
  return facts.map(({ observedAt: _, toolCallId, ...fact }) => ({
    ...fact,
    toolCallId: toolCallId.replace(runId, "<run>").replace(/::p\d+$/, ""),
  }));
}

/**
 * The checks every engine's test makes: each step's value is its recorded result, every call
 * (probes too) has one record and its tool ran once, and the facts are those of the run without
 * crashes.
 *
 * @param harness The harness, after the crashed run.
 * @param crashed The run with crashes.
 * @param clean The same workflow without crashes.
 */
export function assertOnce(harness: Harness, crashed: Outcome, clean: Outcome): void {
  for (const [i, value] of crashed.values.entries()) {
    assert.equal(value.status, "READY", JSON.stringify(value));
    const record = crashed.records[i];
    assert.equal(record?.status, "READY");
    if (value.status === "READY") {
      const { evidence, scope, content } = value;
      assert.deepEqual(record?.agentResult, { evidence, scope, content });
    }
  }
  const ids = crashed.calls.map((call) => call.toolCallId);
  assert.equal(new Set(ids).size, ids.length, `one record per call: ${ids}`);
  for (const id of ids) assert.equal(harness.executions.get(id), 1, `${id} ran once`);
  assert.deepEqual(
    comparableFacts(crashed.runId, crashed.facts),
    comparableFacts(clean.runId, clean.facts),
  );
  assert.equal(crashed.facts.length, crashed.values.length);
}

/**
 * The crash scenario of the engines whose worker process can be killed (Restate, DBOS): four
 * steps, one per crash point, run once clean and once with the crashes, then every assertion of
 * {@linkcode assertOnce} and of what each OUTCOME_UNKNOWN policy did.
 *
 * @param harness The test's harness.
 * @param runWorkflow Runs the workflow of `lookups` to its end in the engine.
 */
export async function assertCrashScenario(
  harness: Harness,
  runWorkflow: (lookups: LookupsInput["lookups"]) => Promise<Outcome>,
): Promise<void> {
  const lookups: LookupsInput["lookups"] = [
    { key: "a", onUnknown: "retry" },
    { key: "b", onUnknown: "probe" },
    { key: "c", onUnknown: "retry" },
    { key: "d", onUnknown: "retry" },
  ];
  harness.plan({});
  const clean = await runWorkflow(lookups);
  harness.plan({
    "lookup-a": "exit-before",
    "lookup-b": "kill-during",
    "lookup-c": "exit-after",
    "lookup-d": "throw-during",
  });
  const crashed = await runWorkflow(lookups);

  assertOnce(harness, crashed, clean);
  const [a, b, c, d] = await Promise.all(
    ["a", "b", "c", "d"].map((key) => stepToolCallId([crashed.runId, `lookup-${key}`])),
  );
  const probe = probeToolCallId(b!, 1);
  assert.deepEqual(crashed.calls.map((call) => call.toolCallId), [a, b, probe, c, d]);
  // b died with its tool running: its record stays PROJECTING; the probe gave the value.
  assert.equal(crashed.calls[1]?.status, "PROJECTING");
  assert.deepEqual(crashed.values.map((value) => value.toolCallId), [a, probe, c, d]);
  assert.deepEqual(harness.crashes, [
    "lookup-a before exit",
    "lookup-c after exit",
    "lookup-d during throw",
  ]);
  assert.deepEqual(harness.unknowns.filter((line) => line.startsWith(b!)), [`${b} probe`]);
  assert.ok(harness.unknowns.some((line) => line === `${d} retry`));
  assert.ok(harness.unknowns.every((line) => line === `${b} probe` || line === `${d} retry`));
  assert.deepEqual(crashed.values.map((value) => value.replayed === true), [
    false,
    false,
    true,
    true,
  ]);
}
