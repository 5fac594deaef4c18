/**
 * The Upstash store through the Upstash-compatible endpoint and a real redis-server:
 * - model-based programs run on MemoryStore and UpstashStore side by side; both agree with the
 *   reference model after every step, and with each other (their traces are equal);
 * - 1,000 concurrent invocations on one run from four store instances keep budgets exact, one
 *   record per key, and leave no PROJECTING record behind for a completed call;
 * - one key raced 200 times runs its executor exactly once.
 *
 * Needs redis-server on PATH (fails loudly without it). RELIABILITY_UPSTASH_RUNS sets the number
 * of programs (default 60).
 */
import fc from "fast-check";
import { type BoundaryResult, defineTool, ToolBoundary } from "../../src/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import { programArb } from "./arbitraries.ts";
import { check, checkEqual, envInt, figures, report } from "./figures.ts";
import { checkResultSafe, comparable, memorySystem, realTimeSystem, runProgram } from "./model.ts";
import { startSharedUpstashFixture } from "../support/upstash_fixture.ts";

const RUNS = envInt("RELIABILITY_UPSTASH_RUNS", 60);
const LONG_TTL_MS = 600_000;

Deno.test("model: UpstashStore and MemoryStore agree with the model and with each other", async () => {
  const f = figures("model", "upstash+memory");
  const fixture = await startSharedUpstashFixture();
  const started = performance.now();
  let program = 0;
  let compared = 0;
  try {
    const redis = fixture.createRedis();
    await fc.assert(
      fc.asyncProperty(programArb({ time: false }, 40), async (commands) => {
        f.cases++;
        // A fresh key prefix per program: the same run IDs, no state shared between programs.
        const store = new UpstashStore({ redis, prefix: `model${program++}`, timeoutMs: 5_000 });
        const upstash = await runProgram(
          realTimeSystem("upstash", store, LONG_TTL_MS),
          commands,
          f,
        );
        const memory = await runProgram(memorySystem(LONG_TTL_MS), commands, f);
        const a = comparable(upstash);
        const b = comparable(memory);
        const n = Math.min(a.length, b.length);
        checkEqual(f, a.slice(0, n), b.slice(0, n), "the stores' traces differ");
        compared += n;
      }),
      { numRuns: RUNS },
    );
  } finally {
    await fixture.stop();
  }
  report(f, {
    runs: RUNS,
    comparedSteps: compared,
    ms: Math.round(performance.now() - started),
  });
});

/** Four boundaries on four clients of one endpoint: four instances of one application. */
function instances(fixture: Awaited<ReturnType<typeof startSharedUpstashFixture>>, prefix: string) {
  const executions = new Map<string, number>();
  const tool = (name: string, fail: boolean) =>
    defineTool({
      name,
      readOnly: true,
      execute: async (_input, ctx) => {
        executions.set(ctx.toolCallId, (executions.get(ctx.toolCallId) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, Math.random() * 5));
        if (fail) throw new Error(`backend said ${CANARY_SECRET}`);
        return { id: ctx.toolCallId, credential: CANARY_SECRET };
      },
      project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "race", content: raw.id }),
    });
  const tools = [tool("t_found", false), tool("t_limited", false), tool("t_throw", true)];
  const boundaries = Array.from({ length: 4 }, () =>
    new ToolBoundary({
      store: new UpstashStore({ redis: fixture.createRedis(), prefix, timeoutMs: 20_000 }),
      tools,
      recordTtlMs: LONG_TTL_MS,
    }));
  return { boundaries, executions };
}

Deno.test("concurrency: 1,000 concurrent invocations on one run keep budgets exact and one record per key", async () => {
  const f = figures("concurrency", "upstash");
  const fixture = await startSharedUpstashFixture();
  const started = performance.now();
  try {
    const { boundaries, executions } = instances(fixture, "race1000");
    const run = await boundaries[0]!.startRun({
      runId: "run-1000",
      ttlMs: LONG_TTL_MS,
      budget: { calls: 600, perTool: { t_limited: 90 } },
    });
    // 800 distinct keys, 200 repeats of some of them, three tools, four instances.
    const tools = ["t_found", "t_limited", "t_throw"];
    const calls = Array.from({ length: 1_000 }, (_, i) => {
      const key = i < 800 ? i : (i * 7) % 800;
      return { toolCallId: `call_${key}`, toolName: tools[key % 3]! };
    });
    const results = await Promise.all(
      calls.map((call, i) =>
        boundaries[i % 4]!.invoke(run, { ...call, runId: run.runId, input: { i } })
      ),
    );
    f.races += calls.length;
    f.cases++;
    const begun = new Map<string, BoundaryResult>();
    const byTool: Record<string, number> = {};
    for (const [i, result] of results.entries()) {
      checkResultSafe(f, result, `call ${i}`);
      const { toolCallId, toolName } = calls[i]!;
      if (
        result.status === "READY" ||
        (result.status === "ERROR" && result.code === "EXECUTION_FAILED")
      ) {
        check(f, !begun.has(toolCallId), `${toolCallId} began twice`);
        begun.set(toolCallId, result);
        byTool[toolName] = (byTool[toolName] ?? 0) + 1;
        checkEqual(f, result.status === "READY", toolName !== "t_throw", `${toolCallId} outcome`);
      } else {
        check(
          f,
          // A repeat carries another input (`{ i }`): a conflict, never a second run.
          ["TOOL_CALL_CONFLICT", "RUN_BUDGET_EXHAUSTED", "TOOL_BUDGET_EXHAUSTED"].includes(
            result.code,
          ),
          `${toolCallId}: unexpected ${result.code}`,
        );
      }
    }
    // Budgets exact: 800 distinct keys want more than 600 calls, so exactly 600 began.
    checkEqual(f, begun.size, 600, "calls begun");
    check(f, (byTool.t_limited ?? 0) <= 90, "tool budget exceeded");
    const state = await boundaries[1]!.store.getRun(run.runId);
    checkEqual(f, state?.used.calls, 600, "run budget used");
    checkEqual(f, state?.used.perTool, byTool, "tool budgets used");
    // One execution per begun key, none for the others.
    checkEqual(f, executions.size, 600, "executed keys");
    for (const [id, n] of executions) {
      checkEqual(f, [id, n, begun.has(id)], [id, 1, true], "executions");
    }
    // One record per key; every completed call's record is READY or ERROR exactly as told.
    const keys = (await fixture.direct(["KEYS", "race1000:{run-1000}:call:*"])) as string[];
    checkEqual(f, keys.length, 600, "records stored");
    for (const [id, result] of begun) {
      const record = await boundaries[2]!.inspect(run.runId, id);
      check(f, record !== null && record.status !== "PROJECTING", `${id}: ${record?.status}`);
      if (result.status === "READY") {
        checkEqual(f, record!.status, "READY", id);
        checkEqual(f, record!.agentResult, {
          evidence: result.evidence,
          scope: result.scope,
          content: result.content,
        }, id);
      } else {
        checkEqual(f, [record!.status, record!.errorCode], ["ERROR", "EXECUTION_FAILED"], id);
      }
    }
    const facts = await boundaries[3]!.endRunReport(run);
    checkEqual(
      f,
      facts.facts.length + facts.omitted,
      [...begun.values()].filter((r) => r.status === "READY").length,
      "facts",
    );
    checkEqual(
      f,
      new Set(facts.facts.map((x) => x.toolCallId)).size,
      facts.facts.length,
      "facts twice",
    );
  } finally {
    await fixture.stop();
  }
  report(f, { ms: Math.round(performance.now() - started) });
});

Deno.test("concurrency: one key raced 200 times from four instances runs its executor exactly once", async () => {
  const f = figures("concurrency-one-key", "upstash");
  const fixture = await startSharedUpstashFixture();
  try {
    const { boundaries, executions } = instances(fixture, "race200");
    for (let round = 0; round < 3; round++) {
      const run = await boundaries[0]!.startRun({ ttlMs: LONG_TTL_MS, budget: { calls: 50 } });
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          boundaries[i % 4]!.invoke(run, {
            toolCallId: "call_same",
            runId: run.runId,
            toolName: "t_found",
            // Two requests: the winner's own again is a duplicate, the other a conflict.
            input: { parity: i % 2 },
          })),
      );
      f.races += 200;
      f.cases++;
      const ready = results.filter((r) => r.status === "READY");
      checkEqual(f, ready.length, 1, "one winner");
      const refused = (code: string) =>
        results.filter((r) => r.status === "ERROR" && r.code === code).length;
      checkEqual(f, refused("DUPLICATE_TOOL_CALL"), 99, "99 duplicates (the winner's request)");
      checkEqual(f, refused("TOOL_CALL_CONFLICT"), 100, "100 conflicts (the other request)");
      checkEqual(f, executions.get("call_same"), round + 1, "executed once per run");
      checkEqual(f, (await boundaries[1]!.store.getRun(run.runId))?.used.calls, 1, "budget");
      const record = await boundaries[2]!.inspect(run.runId, "call_same");
      checkEqual(f, record?.status, "READY", "record");
      const winner = ready[0]!;
      const parity = results.indexOf(winner) % 2;
      checkEqual(f, record?.request, { parity }, "the winner's request kept");
    }
  } finally {
    await fixture.stop();
  }
  report(f);
});
