/**
 * `endRun` fixes the facts: a call still in flight when the run ends is recorded when it
 * completes, but every later `endRun` returns exactly what the first returned. On both stores,
 * through the boundary and over HTTP.
 */
import fc from "fast-check";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import type { CompleteOutcome, Store } from "../../src/store/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { check, checkEqual, figures, report } from "./figures.ts";
import { httpOver, namedTool, onBothStores } from "./stores.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";

const f = figures("end-run", "MemoryStore+UpstashStore");
globalThis.addEventListener("unload", () => report(f));

let seq = 0;
const uid = (prefix: string) => `${prefix}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;

const READY: CompleteOutcome = {
  status: "READY",
  evidence: "NO_EVIDENCE",
  rawJson: "{}",
  agentResultJson: '{"evidence":"NO_EVIDENCE","scope":"s","content":[]}',
};
const FAILED: CompleteOutcome = { status: "ERROR", errorCode: "EXECUTION_FAILED", rawJson: null };

/** A run on `store` and ways to begin, complete and end it. */
async function storeRun(store: Store, clock: () => number) {
  const runId = uid("run");
  const now = clock();
  const started = await store.startRun({
    runId,
    deadline: now + 600_000,
    budget: { calls: 100, perTool: {} },
    ttlMs: 1_200_000,
    attemptId: uid("start"),
    now,
  });
  check(f, started.ok, "started");
  const attempts = new Map<string, string>();
  return {
    runId,
    /** Begins a call; `expected` is what the store must answer. */
    begin: async (toolCallId: string, expected: "ok" | "RUN_INACTIVE" = "ok") => {
      const attemptId = uid("attempt");
      attempts.set(toolCallId, attemptId);
      const begun = await store.begin({
        runId,
        toolCallId,
        toolName: "search",
        requestJson: "{}",
        requestDigest: "test-digest",
        attemptId,
        ttlMs: 600_000,
        now: clock(),
      });
      checkEqual(f, begun.ok ? "ok" : begun.code, expected, `begin ${toolCallId}`);
    },
    complete: (toolCallId: string, outcome: CompleteOutcome = READY) =>
      store.complete({
        runId,
        toolCallId,
        attemptId: attempts.get(toolCallId)!,
        outcome,
        now: clock(),
      }),
    end: async () => {
      const ended = await store.endRun({ runId, now: clock() });
      check(f, ended.ok, "ended");
      return ended.ok ? ended : null;
    },
  };
}

onBothStores(
  "a call in flight when the run ends is recorded when it completes, and every later endRun returns the facts of the first",
  async ({ store, clock }) => {
    const run = await storeRun(store, clock);
    await run.begin("call_done");
    checkEqual(f, (await run.complete("call_done")).ok, true, "completed before the end");
    await run.begin("call_late");
    await run.begin("call_late_error");
    const first = await run.end();
    checkEqual(f, first?.toolCallIds, ["call_done"], "the first end: what had completed");

    const late = await run.complete("call_late");
    checkEqual(f, late.ok && late.record.status, "READY", "the late call's complete succeeds");
    const lateError = await run.complete("call_late_error", FAILED);
    checkEqual(f, lateError.ok && lateError.record.status, "ERROR", "and records an ERROR too");
    checkEqual(f, (await store.get(run.runId, "call_late"))?.status, "READY", "recorded");

    for (let i = 0; i < 3; i++) {
      f.cases++;
      const again = await run.end();
      checkEqual(f, again?.toolCallIds, ["call_done"], `end #${i + 2}: the same IDs`);
      checkEqual(f, again?.run, first?.run, `end #${i + 2}: the same run (endedAt of the first)`);
    }
  },
);

onBothStores(
  "endRun reads only the records its caps can use, page by page, and counts the READY calls past them",
  async ({ store, clock }) => {
    const run = await storeRun(store, clock);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const id = `call_${i}`;
      await run.begin(id);
      const failed = i % 3 === 1;
      checkEqual(f, (await run.complete(id, failed ? FAILED : READY)).ok, true, id);
      if (!failed) ids.push(id);
    }
    // The store as it is, with its reads of records counted.
    const read: string[][] = [];
    const counted = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name !== "readFacts") return typeof value === "function" ? value.bind(target) : value;
        return (request: Parameters<Store["readFacts"]>[0]) => {
          read.push(request.identities.map((identity) => identity.toolCallId));
          return target.readFacts(request);
        };
      },
    });
    for (const factCount of [1, 3, 20, 100]) {
      read.length = 0;
      const boundary = new ToolBoundary({ store: counted, tools: [], limits: { factCount } });
      const ended = await boundary.endRunReport(run.runId);
      const shown = Math.min(factCount, ids.length);
      checkEqual(
        f,
        ended.facts.map((fact) => fact.toolCallId),
        ids.slice(0, shown),
        `${factCount}`,
      );
      checkEqual(f, ended.omitted, ids.length - shown, `${factCount}: omitted`);
      // No ERROR call is read, and no READY call past the caps.
      checkEqual(f, read.flat(), ids.slice(0, shown), `${factCount}: records read`);
      f.cases++;
    }
  },
);

onBothStores(
  "endRun reads no record once the facts can take no more, and counts every READY call past them",
  async ({ store, clock }) => {
    const run = await storeRun(store, clock);
    const ready: string[] = [];
    // READY calls of two sizes with ERROR ones between; a small one after the big ones.
    const big: CompleteOutcome = {
      ...READY,
      agentResultJson: JSON.stringify({
        evidence: "NO_EVIDENCE",
        scope: "s".repeat(50),
        content: [],
      }),
    };
    const sizeOf = (outcome: CompleteOutcome) =>
      new TextEncoder().encode(outcome.status === "READY" ? outcome.agentResultJson : "").length;
    for (let i = 0; i < 40; i++) {
      const id = `call_${i}`;
      await run.begin(id);
      const outcome: CompleteOutcome = i % 4 === 3 ? FAILED : i === 12 ? READY : big;
      checkEqual(f, (await run.complete(id, outcome)).ok, true, id);
      if (outcome !== FAILED) ready.push(id);
    }
    // Each readFacts, with what it read: the identities given less those left unread.
    const reads: { given: string[]; read: number }[] = [];
    const counted = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name !== "readFacts") return typeof value === "function" ? value.bind(target) : value;
        return async (request: Parameters<Store["readFacts"]>[0]) => {
          const reply = await target.readFacts(request);
          const given = request.identities.map((identity) => identity.toolCallId);
          reads.push({ given, read: given.length - (reply.unread ?? 0) });
          return reply;
        };
      },
    });
    const end = async (factBytes: number) => {
      reads.length = 0;
      const boundary = new ToolBoundary({
        store: counted,
        tools: [],
        limits: { factCount: 1_000, factBytes },
      });
      return await boundary.endRunReport(run.runId);
    };
    // Room for 3 big results and less than the smallest after them: 3 records read, no more.
    const full = await end(3 * sizeOf(big) + 49);
    checkEqual(f, full.facts.map((fact) => fact.toolCallId), ready.slice(0, 3), "3 facts");
    checkEqual(f, full.omitted, ready.length - 3, "every READY call past them omitted");
    checkEqual(f, reads.map(({ read }) => read), [3], "3 records read, in one page");
    // Room left for a small result, not a big one: read on, and the small one is a fact.
    const roomy = await end(3 * sizeOf(big) + sizeOf(READY));
    checkEqual(
      f,
      roomy.facts.map((fact) => fact.toolCallId),
      [...ready.slice(0, 3), "call_12"],
      "a smaller later result still fits",
    );
    checkEqual(f, roomy.omitted, ready.length - 4, "the rest omitted");
    // The count cap: the page holds only what it can take.
    const two = new ToolBoundary({ store: counted, tools: [], limits: { factCount: 2 } });
    reads.length = 0;
    const capped = await two.endRunReport(run.runId);
    checkEqual(f, capped.omitted, ready.length - 2, "factCount: the rest omitted");
    checkEqual(f, reads.map(({ given, read }) => [given.length, read]), [[2, 2]], "2 read");
    f.cases++;
  },
);

onBothStores(
  "a run ended before any call completed still lists none after its calls complete",
  async ({ store, clock }) => {
    const run = await storeRun(store, clock);
    await run.begin("call_1");
    checkEqual(f, (await run.end())?.toolCallIds, [], "nothing had completed");
    checkEqual(f, (await run.complete("call_1")).ok, true, "the late complete succeeds");
    checkEqual(f, (await run.end())?.toolCallIds, [], "still nothing");
    f.cases++;
  },
);

onBothStores(
  "every endRun returns the calls completed before the first, in completion order, whatever the interleaving (generated)",
  async ({ store, clock, name }) => {
    // Each step: begin a new call, complete one in flight, or end the run.
    const step = fc.oneof(
      fc.constant({ t: "begin" as const }),
      fc.record({ t: fc.constant("complete" as const), pick: fc.nat(), ok: fc.boolean() }),
      fc.constant({ t: "end" as const }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        f.cases++;
        f.steps += steps.length;
        const run = await storeRun(store, clock);
        const inFlight: string[] = [];
        const completed: string[] = [];
        let fixed: string[] | null = null;
        let n = 0;
        for (const s of steps) {
          if (s.t === "begin") {
            const id = `call_${n++}`;
            await run.begin(id, fixed === null ? "ok" : "RUN_INACTIVE");
            if (fixed === null) inFlight.push(id);
          } else if (s.t === "complete" && inFlight.length > 0) {
            const [id] = inFlight.splice(s.pick % inFlight.length, 1);
            const done = await run.complete(id!, s.ok ? READY : FAILED);
            checkEqual(f, done.ok, true, `${id} completes, before or after the end`);
            completed.push(id!);
          } else if (s.t === "end") {
            fixed ??= [...completed];
            checkEqual(f, (await run.end())?.toolCallIds, fixed, "the facts of the first end");
          }
        }
        const last = await run.end();
        checkEqual(f, last?.toolCallIds, fixed ?? completed, "a final end agrees");
      }),
      { numRuns: name === "MemoryStore" ? 300 : 15 },
    );
  },
);

/** A tool that waits, once started, until released. */
function heldTool() {
  let started!: () => void;
  let release!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const tool = defineTool({
    name: "held",
    readOnly: true,
    execute: async () => {
      started();
      await released;
      return { held: true };
    },
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "held", content: raw }),
  });
  return { tool, running, release };
}

onBothStores(
  "through the boundary, a tool still running when the run ends completes READY, and endRun again returns the first facts",
  async ({ store, clock }) => {
    const held = heldTool();
    const boundary = new ToolBoundary({ store, clock, tools: [held.tool, namedTool("quick")] });
    const run = await boundary.startRun({ ttlMs: 60_000 });
    const call = (toolCallId: string, toolName: string) =>
      boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input: {} });
    checkEqual(f, (await call("call_quick", "quick")).status, "READY", "a call before the end");
    const pending = call("call_held", "held");
    await held.running;
    const first = await boundary.endRunReport(run.runId);
    checkEqual(f, first.facts.map((fact) => fact.toolCallId), ["call_quick"], "first end");
    held.release();
    checkEqual(f, (await pending).status, "READY", "the call in flight still gets its result");
    checkEqual(f, (await boundary.inspect(run.runId, "call_held"))?.status, "READY", "recorded");
    checkEqual(f, await boundary.endRunReport(run.runId), first, "a later end: the same facts");
    checkEqual(f, await boundary.endRunReport(run), first, "through the context too");
    f.cases++;
  },
);

onBothStores(
  "over HTTP, ending a run twice returns the same facts after a call in flight completed",
  async ({ store, clock }) => {
    const held = heldTool();
    const boundary = new ToolBoundary({ store, clock, tools: [held.tool] });
    const { send } = httpOver(boundary);
    const started = await send("POST", "/v1/runs", { text: '{"ttlMs":60000}' });
    const runId = String(started.body.runId);
    const pending = send("POST", `/v1/runs/${runId}/tool-calls`, {
      as: "agent",
      text: '{"toolCallId":"call_held","toolName":"held","input":{}}',
    });
    await held.running;
    const first = await send("POST", `/v1/runs/${runId}/end`);
    checkEqual(f, [first.status, first.body], [200, { facts: [], omitted: 0 }], "first end");
    held.release();
    const late = await pending;
    checkEqual(f, [late.status, late.body.status], [200, "READY"], "the late call's answer");
    const again = await send("POST", `/v1/runs/${runId}/end`);
    checkEqual(f, [again.status, again.body], [200, first.body], "the same facts");
    f.cases++;
  },
);

Deno.test("UpstashStore: a run ended before the first end was kept in the run hash lists its whole progress index", async () => {
  const fixture = await startUpstashFixture();
  try {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const run = await storeRun(store, Date.now);
    await run.begin("call_1");
    await run.begin("call_2");
    await run.complete("call_1");
    checkEqual(f, (await run.end())?.toolCallIds, ["call_1"], "ended");
    checkEqual(f, (await run.complete("call_2")).ok, true, "a late call");
    // As a run ended by an earlier version of the script looks.
    await fixture.direct(["HDEL", store.keys(run.runId).run, "endedProgress"]);
    checkEqual(f, (await run.end())?.toolCallIds, ["call_1", "call_2"], "the whole index");
    f.cases++;
  } finally {
    await fixture.stop();
  }
});
