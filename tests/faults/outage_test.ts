/**
 * Redis down for one second mid-load, while 640 calls run on 16 workers: unreachable (the REST
 * endpoint answers 503 without running anything, as it does when it cannot reach Redis; the data
 * stays), or paused (SIGSTOP: requests hang, then run late). Calls whose tool was running when it
 * went down complete once it is back (a complete that failed is tried again with its attempt,
 * within `storeRetryMs`), so no call is left PROJECTING whose tool ran, and every answer the agent
 * got is what its record says.
 *
 * Prints `RELIABILITY {...}` with the outcomes.
 */
import { type BoundaryResult, defineTool, ToolBoundary } from "../../src/mod.ts";
import { UpstashStore } from "../../src/stores/upstash/mod.ts";
import { check, checkEqual, figures, report } from "../reliability/figures.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";

const WORKERS = 16;
const CALLS_PER_WORKER = 40;
const STORE_TIMEOUT_MS = 300;
/** Redis goes down as the tool of this call (counted from 1) starts. */
const DOWN_AT_CALL = 200;
const OUTAGE_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Outage = "unreachable" | "paused";

for (const kind of ["unreachable", "paused"] as const) {
  Deno.test(`faults: Redis ${kind} for one second mid-load leaves no call PROJECTING whose tool ran, and every answer matches its record`, () =>
    outageUnderLoad(kind));
}

async function outageUnderLoad(kind: Outage): Promise<void> {
  const f = figures(`outage-${kind}`, "upstash");
  const fixture = await startUpstashFixture();
  const executions = new Map<string, number>();
  let down = false;
  let doneWhileDown = 0;
  let started = 0;
  let goDown: () => void = () => {};
  const wentDown = new Promise<void>((resolve) => goDown = resolve);
  const tool = (name: string, fail: boolean) =>
    defineTool({
      name,
      readOnly: true,
      execute: async (_input, ctx) => {
        executions.set(ctx.toolCallId, (executions.get(ctx.toolCallId) ?? 0) + 1);
        // Down while this tool and the others in flight run: their completes meet the outage.
        if (++started === DOWN_AT_CALL) goDown();
        await sleep(20 + Math.floor(Math.random() * 100));
        // Its complete goes to a Redis that does not answer.
        if (down) doneWhileDown++;
        if (fail) throw new Error("backend refused");
        return { id: ctx.toolCallId };
      },
      project: (raw: { id: string }) => ({
        evidence: "EVIDENCE_FOUND",
        scope: "outage",
        content: raw.id,
      }),
    });
  const store = new UpstashStore({
    redis: fixture.createRedis({ retry: { retries: 3, backoff: () => 20 } }),
    timeoutMs: STORE_TIMEOUT_MS,
  });
  // The default storeRetryMs (5 s) outlasts the outage.
  const boundary = new ToolBoundary({
    store,
    tools: [tool("t_found", false), tool("t_throw", true)],
  });
  const answers = new Map<string, { tool: string; result: BoundaryResult }>();
  const outcomes: Record<string, number> = {};
  try {
    const run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: 10_000 } });
    const outage = (async () => {
      await wentDown;
      f.faults++;
      if (kind === "paused") fixture.server.pause();
      else fixture.endpoint.failNext(Number.MAX_SAFE_INTEGER, 503);
      down = true;
      await sleep(OUTAGE_MS);
      down = false;
      if (kind === "paused") fixture.server.resume();
      else fixture.endpoint.failNext(0);
    })();
    await Promise.all(Array.from({ length: WORKERS }, async (_, worker) => {
      for (let i = 0; i < CALLS_PER_WORKER; i++) {
        const toolCallId = `call_${worker}_${i}`;
        const toolName = i % 5 === 4 ? "t_throw" : "t_found";
        const result = await boundary.invoke(run, {
          toolCallId,
          runId: run.runId,
          toolName,
          input: { worker, i },
        });
        answers.set(toolCallId, { tool: toolName, result });
        const code = result.status === "READY" ? "READY" : result.code;
        outcomes[code] = (outcomes[code] ?? 0) + 1;
      }
    }));
    await outage;
    // Requests that timed out while Redis was stopped land once it runs again.
    await fixture.endpoint.idle();
    await sleep(2 * STORE_TIMEOUT_MS);

    const records = new Map<string, Awaited<ReturnType<typeof boundary.inspect>>>();
    for (const id of answers.keys()) records.set(id, await boundary.inspect(run.runId, id));
    const projectingAfterRun = [...answers.keys()].filter((id) =>
      (executions.get(id) ?? 0) > 0 && records.get(id)?.status === "PROJECTING"
    );
    checkEqual(f, projectingAfterRun, [], "calls left PROJECTING although their tool ran");
    for (const [toolCallId, { tool: toolName, result }] of answers) {
      f.cases++;
      const at = `${toolCallId} ${JSON.stringify(result)}`;
      const ran = executions.get(toolCallId) ?? 0;
      const record = records.get(toolCallId) ?? null;
      check(f, ran <= 1, `${at}: ran ${ran} times`);
      if (ran === 1) {
        const truth = toolName === "t_found" ? "READY" : "ERROR";
        checkEqual(f, record?.status, truth, `${at}: the record of a tool that ran`);
      }
      if (result.status === "READY") {
        checkEqual(f, ran, 1, at);
        checkEqual(f, record?.agentResult, {
          evidence: result.evidence,
          scope: result.scope,
          content: result.content,
        }, at);
      } else if (result.code === "EXECUTION_FAILED") {
        checkEqual(
          f,
          [ran, record?.status, record?.errorCode],
          [1, "ERROR", "EXECUTION_FAILED"],
          at,
        );
      } else {
        // The begin failed while Redis was down: the tool never ran (a begin that landed late
        // left a PROJECTING record of a call that never ran).
        checkEqual(f, result.code, "STORE_UNAVAILABLE", at);
        checkEqual(f, ran, 0, `${at}: a call told STORE_UNAVAILABLE ran`);
        check(f, record === null || record.status === "PROJECTING", `${at}: ${record?.status}`);
      }
    }
    checkEqual(f, answers.size, WORKERS * CALLS_PER_WORKER, "calls answered");
    // The outage hit calls between their tool and their complete.
    check(f, doneWhileDown > 0, "no tool finished while Redis was down");
    const keys = (await fixture.direct(["KEYS", `tb:{${run.runId}}:call:*`])) as string[];
    checkEqual(f, (await store.getRun(run.runId))?.used.calls, keys.length, "budget vs records");
  } finally {
    try {
      fixture.server.resume();
    } catch {
      // not paused
    }
    await fixture.stop();
  }
  report(f, { doneWhileDown, outcomes });
}
