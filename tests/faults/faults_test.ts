/**
 * Faults through the Upstash-compatible endpoint and the redis-server process: bursts of 5xx,
 * responses dropped after the command ran, responses slower than the store timeout, redis-server
 * paused (SIGSTOP), killed (SIGKILL) and restarted with its script cache gone. Each fault is
 * aimed at the begin or at the complete of a call (the tool itself triggers it while it runs).
 *
 * After every call: the agent got STORE_UNAVAILABLE or the outcome that truly happened; no
 * executor ran twice for one key; no READY record lacks its agent result; no result carries the
 * canary, the endpoint URL or its token; no call took longer than its bound (3 x store timeoutMs
 * + the boundary's storeRetryMs, within which a failed complete is tried again, + the tool's own
 * time + 300 ms of scheduling slack).
 *
 * The store packs begins and completes issued together into one pipeline request (its default
 * `batch`): the program runs once so, each step with a twin call started at the same time (one
 * request carries both begins, one both completes, and the fault hits both), and once with
 * `batch: false`, each call alone.
 *
 * RELIABILITY_FAULT_RUNS sets the number of generated fault programs (default 12).
 */
import fc from "fast-check";
import {
  BoundaryError,
  type BoundaryResult,
  defineTool,
  ERROR_MESSAGES,
  type RunContext,
  ToolBoundary,
} from "../../src/mod.ts";
import { UpstashStore } from "../../src/stores/upstash/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import {
  check,
  checkEqual,
  envInt,
  type Figures,
  figures,
  report,
} from "../reliability/figures.ts";
import { checkPrototypes } from "../reliability/model.ts";
import { startUpstashFixture, type UpstashFixture } from "../support/upstash_fixture.ts";

const RUNS = envInt("RELIABILITY_FAULT_RUNS", 12);
const STORE_TIMEOUT_MS = 300;
/** The boundary's window for trying a failed complete again. */
const STORE_RETRY_MS = 600;
/** The longest a call may take: begin, a complete and its tries, the last try. */
const BOUND_MS = 3 * STORE_TIMEOUT_MS + STORE_RETRY_MS;
const RETRIES = 3;
const SLACK_MS = 300;
const TOKEN = `tok_${CANARY_SECRET}`;

type Phase = "begin" | "complete";
type Fault =
  | { kind: "none" }
  | { kind: "5xx"; count: number; status: 500 | 502 | 503 }
  | { kind: "drop"; count: number }
  | { kind: "slow"; ms: number }
  | { kind: "sigstop" };

interface Step {
  phase: Phase;
  fault: Fault;
  tool: "t_found" | "t_throw";
  /** Resubmit an earlier step's key instead of a new one. */
  repeat: number | null;
}

const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: "none" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("5xx" as const),
      count: fc.integer({ min: 1, max: 4 }),
      status: fc.constantFrom(500 as const, 502 as const, 503 as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("drop" as const),
      // Past the client's retries (and a re-send of Deno's own fetch), the drops win.
      count: fc.integer({ min: 1, max: RETRIES + 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("slow" as const),
      ms: fc.constantFrom(50, STORE_TIMEOUT_MS + 150),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "sigstop" as const }) },
);

const stepArb: fc.Arbitrary<Step> = fc.record({
  phase: fc.constantFrom<Phase>("begin", "complete"),
  fault: faultArb,
  tool: fc.constantFrom("t_found" as const, "t_throw" as const),
  repeat: fc.option(fc.nat(20), { nil: null, freq: 5 }),
});

/** Everything a fault test needs: the fixture, a boundary on it, fault controls. */
async function setup(f: Figures, batch = true) {
  const fixture = await startUpstashFixture({ token: TOKEN });
  const executions = new Map<string, number>();
  let armed: (() => void) | null = null;
  const heal = () => {
    fixture.endpoint.failNext(0);
    fixture.endpoint.dropNext(0);
    fixture.endpoint.setDelay(0);
  };
  const inject = (fault: Fault) => {
    if (fault.kind === "none") return;
    f.faults++;
    if (fault.kind === "5xx") fixture.endpoint.failNext(fault.count, fault.status);
    if (fault.kind === "drop") fixture.endpoint.dropNext(fault.count);
    if (fault.kind === "slow") fixture.endpoint.setDelay(fault.ms);
    if (fault.kind === "sigstop") fixture.server.pause();
  };
  const tool = (name: string, fail: boolean) =>
    defineTool({
      name,
      readOnly: true,
      execute: (_input, ctx) => {
        const key = `${ctx.run.runId}/${ctx.toolCallId}`;
        executions.set(key, (executions.get(key) ?? 0) + 1);
        armed?.(); // a fault aimed at the complete is injected here, between begin and complete
        armed = null;
        if (fail) throw new Error(`backend refused ${CANARY_SECRET}`);
        return { id: ctx.toolCallId, credential: CANARY_SECRET };
      },
      project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "faults", content: raw.id }),
    });
  const store = new UpstashStore({
    redis: fixture.createRedis({ retry: { retries: RETRIES, backoff: () => 20 } }),
    timeoutMs: STORE_TIMEOUT_MS,
    ...(batch ? {} : { batch: false as const }),
  });
  const boundary = new ToolBoundary({
    store,
    tools: [tool("t_found", false), tool("t_throw", true)],
    storeRetryMs: STORE_RETRY_MS,
  });
  return {
    fixture,
    boundary,
    executions,
    heal,
    inject,
    arm: (fn: () => void) => {
      armed = fn;
    },
  };
}

/** Nothing agent-facing may carry the canary, the token, the endpoint URL or the command. */
function checkNoLeak(f: Figures, fixture: UpstashFixture, value: unknown, at: string): void {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  for (const secret of [CANARY_SECRET, TOKEN, fixture.endpoint.url, "command was", "EVALSHA"]) {
    check(f, !text.includes(secret), () => `${at}: leaked ${secret}: ${text.slice(0, 300)}`);
  }
}

function agentResult(result: BoundaryResult) {
  return result.status === "READY"
    ? { evidence: result.evidence, scope: result.scope, content: result.content }
    : null;
}

/** Waits until a delayed or paused request has had its chance to land in Redis. */
const settle = (ms = 60) => new Promise((r) => setTimeout(r, ms));

for (const batch of [true, false]) {
  Deno.test(`faults: 5xx bursts, dropped and slow responses, SIGSTOP, aimed at begin or complete (${batch ? "batched, with a twin call" : "batch: false"})`, async () => {
    const f = figures(batch ? "faults-batched" : "faults", "upstash");
    const started = performance.now();
    const ctx = await setup(f, batch);
    const { fixture, boundary, executions } = ctx;
    let program = 0;
    const outcomes: Record<string, number> = {};
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 4, maxLength: 10 }), async (steps) => {
          f.cases++;
          ctx.heal();
          const run: RunContext = await boundary.startRun({
            runId: `run-faults-${program++}`,
            ttlMs: 600_000,
            budget: { calls: 100 },
          });
          const told = new Map<string, BoundaryResult>();
          const ids: string[] = [];
          for (const [i, step] of steps.entries()) {
            f.steps++;
            const repeat = step.repeat !== null && step.repeat < ids.length
              ? ids[step.repeat]!
              : null;
            const toolCallId = repeat ?? `call_${i}`;
            ids.push(toolCallId);
            const at = `${run.runId} step ${i} ${JSON.stringify(step)}`;
            const key = `${run.runId}/${toolCallId}`;
            const executedBefore = executions.get(key) ?? 0;
            const recordBefore = await boundary.inspect(run.runId, toolCallId);
            if (step.phase === "begin") ctx.inject(step.fault);
            else ctx.arm(() => ctx.inject(step.fault));
            const t0 = performance.now();
            const twinId = `twin_${i}`;
            const [result, twin] = await Promise.all([
              boundary.invoke(run, {
                toolCallId,
                runId: run.runId,
                toolName: step.tool,
                input: { i },
              }),
              batch
                ? boundary.invoke(run, {
                  toolCallId: twinId,
                  runId: run.runId,
                  toolName: "t_found",
                  input: {},
                })
                : null,
            ]);
            const ms = performance.now() - t0;
            ctx.arm(() => {});
            if (step.fault.kind === "sigstop") fixture.server.resume();
            ctx.heal();
            await settle(step.fault.kind === "slow" ? step.fault.ms + 60 : 60);

            const tally = `${step.phase}/${step.fault.kind}${
              step.fault.kind === "slow" ? step.fault.ms : ""
            }:${result.status === "READY" ? "READY" : result.code}`;
            outcomes[tally] = (outcomes[tally] ?? 0) + 1;
            checkNoLeak(f, fixture, result, at);
            checkPrototypes(f, at);
            check(
              f,
              ms <= BOUND_MS + SLACK_MS,
              () => `${at}: took ${Math.round(ms)} ms`,
            );
            if (twin !== null) {
              // The twin shared the requests and the fault: told the truth or STORE_UNAVAILABLE.
              const twinAt = `${at} twin`;
              checkNoLeak(f, fixture, twin, twinAt);
              check(f, (executions.get(`${run.runId}/${twinId}`) ?? 0) <= 1, `${twinAt}: twice`);
              const twinRecord = await boundary.inspect(run.runId, twinId);
              if (twin.status === "READY") {
                checkEqual(f, twinRecord?.status, "READY", twinAt);
                checkEqual(f, twinRecord?.agentResult, agentResult(twin), twinAt);
              } else {
                checkEqual(f, twin.code, "STORE_UNAVAILABLE", twinAt);
                check(
                  f,
                  twinRecord === null || twinRecord.status !== "ERROR",
                  () => `${twinAt}: record ${twinRecord?.status}`,
                );
              }
            }
            const executed = (executions.get(key) ?? 0) - executedBefore;
            check(f, (executions.get(key) ?? 0) <= 1, `${at}: executed twice`);
            const record = await boundary.inspect(run.runId, toolCallId);
            if (record?.status === "READY") {
              check(f, record.agentResult !== null, `${at}: READY without result`);
            }

            if (recordBefore !== null) {
              // The key was used: refused (or the store was unreachable), never run. The input
              // `{ i }` is the step's, so another request than the recorded one: a conflict.
              check(
                f,
                result.status === "ERROR" &&
                  (result.code === "TOOL_CALL_CONFLICT" || result.code === "STORE_UNAVAILABLE"),
                () => `${at}: resubmission got ${JSON.stringify(result)}`,
              );
              checkEqual(f, executed, 0, `${at}: resubmission executed`);
              checkEqual(f, record, recordBefore, `${at}: resubmission changed the record`);
              continue;
            }
            const truth = step.tool === "t_found" ? "READY" : "EXECUTION_FAILED";
            if (result.status === "READY" || result.code !== "STORE_UNAVAILABLE") {
              // Told an outcome: it is the one that happened and the one recorded.
              checkEqual(f, result.status === "READY" ? "READY" : result.code, truth, at);
              checkEqual(f, executed, 1, `${at}: executions`);
              checkEqual(f, record?.status, truth === "READY" ? "READY" : "ERROR", `${at}: record`);
              checkEqual(f, record?.agentResult, agentResult(result), `${at}: recorded result`);
              told.set(toolCallId, result);
              continue;
            }
            checkEqual(f, result.message, ERROR_MESSAGES.STORE_UNAVAILABLE, at);
            // STORE_UNAVAILABLE: the begin failed (nothing ran), or the complete failed after the
            // tool ran once. Either way the record is absent, PROJECTING, or what truly happened.
            if (executed === 0) {
              check(
                f,
                record === null || record.status === "PROJECTING",
                () => `${at}: ${record?.status}`,
              );
            } else {
              checkEqual(f, executed, 1, at);
              check(
                f,
                record !== null &&
                  (record.status === "PROJECTING" ||
                    record.status === (truth === "READY" ? "READY" : "ERROR")),
                () => `${at}: record ${record?.status} after the tool ran`,
              );
            }
            if (step.fault.kind === "none") {
              check(f, false, `${at}: STORE_UNAVAILABLE with no fault`);
            }
            if (step.fault.kind === "drop" && step.fault.count <= RETRIES) {
              check(
                f,
                false,
                `${at}: a dropped response within the client's retries was not retried`,
              );
            }
          }
          // Budgets count exactly the begins that ran: one per record.
          const keys = (await fixture.direct(["KEYS", `tb:{${run.runId}}:call:*`])) as string[];
          const state = await boundary.store.getRun(run.runId);
          checkEqual(f, state?.used.calls, keys.length, `${run.runId}: budget vs records`);
          // Every told outcome is still what the record says.
          for (const [id, result] of told) {
            const record = await boundary.inspect(run.runId, id);
            checkEqual(f, record?.agentResult ?? null, agentResult(result), `${id} at the end`);
          }
          const facts = await boundary.endRun(run);
          checkNoLeak(f, fixture, facts, "facts");
        }),
        { numRuns: RUNS },
      );
    } finally {
      ctx.heal();
      try {
        fixture.server.resume();
      } catch {
        // not paused or not running
      }
      await fixture.stop();
    }
    report(f, {
      runs: RUNS,
      storeTimeoutMs: STORE_TIMEOUT_MS,
      boundMs: BOUND_MS + SLACK_MS,
      ms: Math.round(performance.now() - started),
      outcomes: Object.fromEntries(Object.entries(outcomes).sort()),
    });
  });
}

Deno.test("faults: redis-server killed (SIGKILL) and restarted with its data and script cache gone", async () => {
  const f = figures("faults-kill", "upstash");
  const ctx = await setup(f);
  const { fixture, boundary, executions } = ctx;
  const call = async (run: RunContext, toolCallId: string) => {
    const t0 = performance.now();
    const result = await boundary.invoke(run, {
      toolCallId,
      runId: run.runId,
      toolName: "t_found",
      input: {},
    });
    check(
      f,
      performance.now() - t0 <= BOUND_MS + SLACK_MS,
      `${toolCallId} took too long`,
    );
    checkNoLeak(f, fixture, result, toolCallId);
    f.cases++;
    return result;
  };
  const code = (r: BoundaryResult) => (r.status === "ERROR" ? r.code : r.status);
  try {
    for (let round = 0; round < 3; round++) {
      const run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: 10 } });
      checkEqual(f, code(await call(run, "call_before")), "READY", "before the kill");

      // Killed between calls: the endpoint cannot reach Redis.
      await fixture.server.kill();
      f.faults++;
      checkEqual(f, code(await call(run, "call_down")), "STORE_UNAVAILABLE", "while down");
      checkEqual(f, executions.get(`${run.runId}/call_down`), undefined, "nothing ran");
      await assertBoundaryError(
        f,
        fixture,
        boundary.startRun({ ttlMs: 1_000 }),
        "STORE_UNAVAILABLE",
      );
      await assertBoundaryError(f, fixture, boundary.endRun(run), "STORE_UNAVAILABLE");

      // Restarted empty: the run is gone, and the agent is told so.
      await fixture.server.restart();
      checkEqual(f, code(await call(run, "call_after")), "RUN_NOT_FOUND", "after the restart");
      await assertBoundaryError(f, fixture, boundary.endRun(run), "RUN_NOT_FOUND");

      // A new run works again: EVALSHA finds no script, EVAL loads it.
      fixture.endpoint.reset();
      const fresh = await boundary.startRun({ ttlMs: 600_000, budget: { calls: 10 } });
      checkEqual(f, code(await call(fresh, "call_fresh")), "READY", "after the restart");
      const names = fixture.endpoint.commands().map((c) => c[0]?.toUpperCase());
      check(f, names.includes("EVAL") && names.includes("EVALSHA"), `NOSCRIPT fallback: ${names}`);

      // Killed while the tool runs: the tool ran once, the complete cannot land.
      ctx.arm(() => void fixture.server.kill());
      f.faults++;
      checkEqual(f, code(await call(fresh, "call_mid")), "STORE_UNAVAILABLE", "killed mid-call");
      checkEqual(f, executions.get(`${fresh.runId}/call_mid`), 1, "the tool ran once");
      await fixture.server.restart();
      checkEqual(f, await boundary.inspect(fresh.runId, "call_mid"), null, "the data is gone");
    }
  } finally {
    await fixture.stop();
  }
  report(f);
});

async function assertBoundaryError(
  f: Figures,
  fixture: UpstashFixture,
  promise: Promise<unknown>,
  code: string,
): Promise<void> {
  try {
    await promise;
    check(f, false, `expected ${code}`);
  } catch (error) {
    check(f, error instanceof BoundaryError, `not a BoundaryError: ${error}`);
    checkEqual(f, (error as BoundaryError).code, code, "code");
    checkNoLeak(f, fixture, `${String(error)} ${(error as Error).message}`, code);
  }
}

Deno.test("faults: a canary in the Redis URL, the token and store errors reaches no caller", async () => {
  const f = figures("leak-store", "upstash");
  const fixture = await startUpstashFixture({ token: TOKEN });
  try {
    const port = new URL(fixture.endpoint.url).port;
    // A closed port (fetch fails), a path the endpoint does not know (404), a wrong token (401).
    const urls = [
      `http://user:${CANARY_SECRET}@127.0.0.1:1`,
      `http://127.0.0.1:1/${CANARY_SECRET}`,
      `http://127.0.0.1:${port}/${CANARY_SECRET}`,
    ];
    const clients = [
      ...urls.map((url) => fixture.createRedis({ url, retry: false })),
      fixture.createRedis({ token: `wrong_${CANARY_SECRET}`, retry: false }),
    ];
    for (const [i, redis] of clients.entries()) {
      f.cases++;
      const store = new UpstashStore({ redis, timeoutMs: 2_000 });
      const boundary = new ToolBoundary({ store, tools: [] });
      let error: unknown;
      try {
        await boundary.startRun({ ttlMs: 1_000 });
      } catch (thrown) {
        error = thrown;
      }
      check(f, error instanceof BoundaryError, `client ${i}: ${error}`);
      checkEqual(f, (error as BoundaryError).code, "STORE_UNAVAILABLE", `client ${i}`);
      // The cause is for harness logs, and is redacted too.
      const cause = (error as Error).cause;
      for (
        const text of [String(error), JSON.stringify(error), String(cause), JSON.stringify(cause)]
      ) {
        checkNoLeak(f, fixture, text, `client ${i}`);
      }
      // Directly on the store, as a harness would call it.
      try {
        await store.get("run-1", "call_1");
      } catch (thrown) {
        checkNoLeak(f, fixture, `${String(thrown)} ${String((thrown as Error).cause)}`, `get ${i}`);
      }
    }
  } finally {
    await fixture.stop();
  }
  report(f);
});
