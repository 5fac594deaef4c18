/**
 * Numbers and time: deadlines, clock readings, TTLs, budgets and fact caps are accepted in one
 * range (`src/core/limits.ts`) by every store alike, by the boundary and over HTTP, and the
 * Upstash store sends each number to its Lua scripts as a plain integer string.
 */
import fc from "fast-check";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { MAX_BUDGET, MAX_COST, MAX_EPOCH_MS, MAX_TTL_MS } from "../../src/core/limits.ts";
import type { StartRunRequest } from "../../src/store/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { SCRIPTS } from "../../src/upstash/scripts.ts";
import { check, checkEqual, figures, report } from "./figures.ts";
import { httpOver, namedTool, onBothStores } from "./stores.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";
import { sha1Hex } from "../support/sha1.ts";

const f = figures("numbers", "MemoryStore+UpstashStore");
globalThis.addEventListener("unload", () => report(f));

let seq = 0;
const uid = (prefix: string) => `${prefix}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;

function startRequest(clock: () => number, over: Partial<StartRunRequest> = {}): StartRunRequest {
  const now = clock();
  return {
    runId: uid("run"),
    deadline: now + 600_000,
    budget: { calls: 100, perTool: {} },
    ttlMs: 1_200_000,
    attemptId: uid("start"),
    now,
    ...over,
  };
}

function beginRequest(clock: () => number, runId: string, over: Record<string, unknown> = {}) {
  return {
    runId,
    toolCallId: uid("call"),
    toolName: "search",
    requestJson: "{}",
    requestDigest: "test-digest",
    attemptId: uid("attempt"),
    ttlMs: 60_000,
    now: clock(),
    ...over,
  };
}

/** How a call ended: "ok", a refusal code, or the name of what it threw. */
async function outcome(promise: Promise<{ ok: boolean; code?: string } | unknown>) {
  try {
    const result = await promise as { ok?: boolean; code?: string };
    return result?.ok === false ? result.code : "ok";
  } catch (error) {
    return error instanceof RangeError ? "RangeError" : `threw ${String(error)}`;
  }
}

/** Out of range for every store: [what, the start-run request's fields]. */
const BAD_START: [string, (now: number) => Partial<StartRunRequest>][] = [
  ["deadline 1e21", () => ({ deadline: 1e21 })],
  ["deadline MAX_EPOCH_MS + 1", () => ({ deadline: MAX_EPOCH_MS + 1 })],
  ["deadline 2^53", () => ({ deadline: 2 ** 53 })],
  ["fractional deadline", (now) => ({ deadline: now + 0.5 })],
  ["deadline NaN", () => ({ deadline: Number.NaN })],
  ["deadline Infinity", () => ({ deadline: Number.POSITIVE_INFINITY })],
  ["deadline -1", () => ({ deadline: -1 })],
  ["deadline -0", () => ({ deadline: -0 })],
  ["ttlMs 0", () => ({ ttlMs: 0 })],
  ["ttlMs MAX_TTL_MS + 1", () => ({ ttlMs: MAX_TTL_MS + 1 })],
  ["ttlMs 1e21", () => ({ ttlMs: 1e21 })],
  ["fractional ttlMs", () => ({ ttlMs: 1.5 })],
  ["now 1e21", () => ({ now: 1e21 })],
  ["fractional now", (now) => ({ now: now + 0.25 })],
  ["negative now", () => ({ now: -5 })],
  ["calls Infinity", () => ({ budget: { calls: Number.POSITIVE_INFINITY, perTool: {} } })],
  ["calls 2^53", () => ({ budget: { calls: 2 ** 53, perTool: {} } })],
  ["calls -1", () => ({ budget: { calls: -1, perTool: {} } })],
  ["calls 1.5", () => ({ budget: { calls: 1.5, perTool: {} } })],
  ["perTool Infinity", () => ({ budget: { calls: 1, perTool: { a: Number.POSITIVE_INFINITY } } })],
  ["perTool 1e21", () => ({ budget: { calls: 1, perTool: { a: 1e21 } } })],
  ["perTool -1", () => ({ budget: { calls: 1, perTool: { a: -1 } } })],
  ["perTool -0", () => ({ budget: { calls: 1, perTool: { a: -0 } } })],
  ["perTool 5e-7", () => ({ budget: { calls: 1, perTool: { a: 5e-7 } } })],
];

onBothStores(
  "startRun refuses every number outside the one range with RangeError and writes nothing",
  async ({ store, clock, fixture }) => {
    for (const [what, over] of BAD_START) {
      f.cases++;
      const sent = fixture?.endpoint.requests ?? 0;
      const request = startRequest(clock, over(clock()));
      checkEqual(f, await outcome(store.startRun(request)), "RangeError", what);
      checkEqual(f, fixture?.endpoint.requests ?? 0, sent, `${what}: nothing sent to Redis`);
      checkEqual(f, await store.getRun(request.runId), null, `${what}: no run`);
    }
  },
);

onBothStores(
  "startRun takes the ends of the range and reads them back exactly",
  async ({ store, clock }) => {
    const perTool = { zero: 0, max: MAX_BUDGET };
    const request = startRequest(clock, {
      deadline: MAX_EPOCH_MS,
      ttlMs: MAX_TTL_MS,
      budget: { calls: MAX_BUDGET, perTool },
    });
    const started = await store.startRun(request);
    check(f, started.ok, "started");
    if (!started.ok) return;
    checkEqual(
      f,
      [started.run.deadline, started.run.budget],
      [MAX_EPOCH_MS, request.budget],
      "run",
    );
    checkEqual(f, await store.getRun(request.runId), started.run, "read back");
    const begin = beginRequest(clock, request.runId, { toolName: "max", ttlMs: MAX_TTL_MS });
    const begun = await store.begin(begin);
    checkEqual(f, begun.ok && begun.record.expiresAt, begin.now + MAX_TTL_MS, "record TTL");
    checkEqual(
      f,
      await store.get(request.runId, begin.toolCallId),
      begun.ok && begun.record,
      "get",
    );
    checkEqual(
      f,
      await store.begin(beginRequest(clock, request.runId, { toolName: "zero" })),
      { ok: false, code: "TOOL_BUDGET_EXHAUSTED" },
      "a budget of 0",
    );
    const run = await store.getRun(request.runId);
    checkEqual(f, run?.used, { calls: 1, perTool: { max: 1 } }, "counted");
    f.cases++;
  },
);

onBothStores(
  "begin refuses a TTL or clock reading outside the range with RangeError and uses no budget",
  async ({ store, clock }) => {
    const request = startRequest(clock);
    check(f, (await store.startRun(request)).ok, "started");
    const now = clock();
    for (
      const [what, over] of [
        ["ttlMs 0", { ttlMs: 0 }],
        ["ttlMs MAX_TTL_MS + 1", { ttlMs: MAX_TTL_MS + 1 }],
        ["ttlMs Infinity", { ttlMs: Number.POSITIVE_INFINITY }],
        ["fractional ttlMs", { ttlMs: 10.5 }],
        ["now -1", { now: -1 }],
        ["fractional now", { now: now + 0.5 }],
        ["now 1e21", { now: 1e21 }],
        ["now MAX_EPOCH_MS + 1", { now: MAX_EPOCH_MS + 1 }],
      ] as const
    ) {
      f.cases++;
      const begin = beginRequest(clock, request.runId, over);
      checkEqual(f, await outcome(store.begin(begin)), "RangeError", what);
      checkEqual(f, await store.get(request.runId, begin.toolCallId), null, `${what}: no record`);
    }
    checkEqual(f, (await store.getRun(request.runId))?.used.calls, 0, "no budget used");
  },
);

onBothStores(
  "complete and endRun refuse a clock reading outside the range with RangeError and change nothing",
  async ({ store, clock }) => {
    const request = startRequest(clock);
    check(f, (await store.startRun(request)).ok, "started");
    const begin = beginRequest(clock, request.runId);
    check(f, (await store.begin(begin)).ok, "begun");
    for (const now of [clock() + 0.5, -1, 1e21, Number.NaN]) {
      f.cases++;
      const completed = store.complete({
        runId: request.runId,
        toolCallId: begin.toolCallId,
        attemptId: begin.attemptId,
        outcome: { status: "ERROR", errorCode: "EXECUTION_FAILED", rawJson: null },
        now,
      });
      checkEqual(f, await outcome(completed), "RangeError", `complete at ${now}`);
      checkEqual(
        f,
        await outcome(store.endRun({ runId: request.runId, now })),
        "RangeError",
        "end",
      );
    }
    checkEqual(f, (await store.get(request.runId, begin.toolCallId))?.status, "PROJECTING", "kept");
    checkEqual(f, (await store.getRun(request.runId))?.status, "ACTIVE", "still active");
  },
);

onBothStores(
  "readFacts takes Infinity as no cap and refuses other caps that are not safe integers with RangeError",
  async ({ store, clock }) => {
    const request = startRequest(clock);
    check(f, (await store.startRun(request)).ok, "started");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const begin = beginRequest(clock, request.runId);
      check(f, (await store.begin(begin)).ok, "begun");
      const done = await store.complete({
        runId: request.runId,
        toolCallId: begin.toolCallId,
        attemptId: begin.attemptId,
        outcome: {
          status: "READY",
          evidence: "EVIDENCE_FOUND",
          rawJson: "{}",
          agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"s","content":1}',
        },
        now: clock(),
      });
      check(f, done.ok, "completed");
      ids.push(begin.toolCallId);
    }
    const read = (maxFacts: number, maxBytes: number) =>
      store.readFacts({
        runId: request.runId,
        identities: ids.map((toolCallId) => ({ runId: request.runId, toolCallId })),
        maxFacts,
        maxBytes,
      });
    const all = await read(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    checkEqual(f, [all.rows.length, all.omitted, all.unread], [3, 0, 0], "no cap");
    const capped = await read(2, MAX_BUDGET);
    checkEqual(f, [capped.rows.length, capped.omitted, capped.unread], [2, 0, 1], "a count cap");
    for (const bad of [Number.NaN, -1, 1.5, Number.NEGATIVE_INFINITY, 2 ** 53]) {
      f.cases++;
      checkEqual(f, await outcome(read(bad, 1_000)), "RangeError", `maxFacts ${bad}`);
      checkEqual(f, await outcome(read(10, bad)), "RangeError", `maxBytes ${bad}`);
    }
  },
);

/** Numbers a caller could pass for a deadline, with the ends of the range and past them. */
const anyNumber = fc.oneof(
  fc.double(),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.bigInt({ min: 0n, max: 2n ** 60n }).map(Number),
  fc.constantFrom(
    MAX_EPOCH_MS,
    MAX_EPOCH_MS + 1,
    MAX_EPOCH_MS - 1,
    2 ** 53,
    1e21,
    1e308,
    5e-7,
    0,
    -0,
    -1,
  ),
);

onBothStores(
  "any number is a deadline exactly when it is an integer epoch ms up to MAX_EPOCH_MS, not -0 (generated)",
  async ({ store, clock, name }) => {
    await fc.assert(
      fc.asyncProperty(anyNumber, async (deadline) => {
        f.cases++;
        // -0 too: Redis would give it back as 0.
        const expected = Number.isSafeInteger(deadline) && deadline >= 0 &&
            deadline <= MAX_EPOCH_MS && !Object.is(deadline, -0)
          ? "ok"
          : "RangeError";
        const request = startRequest(clock, { deadline });
        checkEqual(f, await outcome(store.startRun(request)), expected, `deadline ${deadline}`);
        if (expected === "ok") {
          checkEqual(f, (await store.getRun(request.runId))?.deadline, deadline, "read back");
        }
      }),
      { numRuns: name === "MemoryStore" ? 500 : 40 },
    );
  },
);

onBothStores(
  "through the boundary, a deadline, TTL or budget outside the range is a RangeError on every store, and the ends of the range work",
  async ({ store, clock }) => {
    const boundary = new ToolBoundary({ store, clock, tools: [namedTool("search")] });
    for (
      const [what, options] of [
        ["deadline 1e21", { deadline: 1e21 }],
        ["deadline MAX_EPOCH_MS + 1", { deadline: MAX_EPOCH_MS + 1 }],
        ["fractional deadline", { deadline: clock() + 1_000.5 }],
        ["deadline NaN (an invalid Date)", { deadline: new Date("not a date") }],
        ["ttlMs MAX_TTL_MS + 1", { ttlMs: MAX_TTL_MS + 1 }],
        ["budget.calls Infinity", { ttlMs: 1_000, budget: { calls: Number.POSITIVE_INFINITY } }],
        ["perTool 2^53", { ttlMs: 1_000, budget: { calls: 1, perTool: { search: 2 ** 53 } } }],
      ] as const
    ) {
      f.cases++;
      checkEqual(f, await outcome(boundary.startRun(options)), "RangeError", what);
    }
    const run = await boundary.startRun({
      deadline: MAX_EPOCH_MS,
      budget: { calls: MAX_BUDGET, perTool: { search: MAX_BUDGET } },
    });
    checkEqual(f, [run.deadline, run.budget.calls], [MAX_EPOCH_MS, MAX_BUDGET], "the ends");
    const result = await boundary.invoke(run, {
      toolCallId: "call_1",
      runId: run.runId,
      toolName: "search",
      input: {},
    });
    checkEqual(f, result.status, "READY", "a call in a run that ends in the year 275760");
    checkEqual(f, (await boundary.endRun(run)).length, 1, "its fact");
    for (
      const [what, options] of [
        ["recordTtlMs MAX_TTL_MS + 1", { recordTtlMs: MAX_TTL_MS + 1 }],
        ["runTtlMs 1e21", { runTtlMs: 1e21 }],
        ["recordTtlMs 0.5", { recordTtlMs: 0.5 }],
      ] as const
    ) {
      f.cases++;
      let thrown: unknown;
      try {
        new ToolBoundary({ store, tools: [], ...options });
      } catch (error) {
        thrown = error;
      }
      check(f, thrown instanceof RangeError, what);
    }
  },
);

onBothStores(
  "through the boundary, a fractional clock is read in whole milliseconds, so every store takes its readings",
  async ({ store, clock }) => {
    const base = clock();
    const boundary = new ToolBoundary({
      store,
      clock: () => base + 0.75,
      tools: [namedTool("search")],
    });
    const run = await boundary.startRun({ ttlMs: 60_000 });
    checkEqual(f, run.startedAt, base, "startedAt rounded down");
    const result = await boundary.invoke(run, {
      toolCallId: "call_1",
      runId: run.runId,
      toolName: "search",
      input: {},
    });
    checkEqual(f, result.status, "READY", "invoke");
    const record = await boundary.inspect(run.runId, "call_1");
    check(
      f,
      Number.isSafeInteger(record?.createdAt) && Number.isSafeInteger(record?.updatedAt),
      "ms",
    );
    checkEqual(f, (await boundary.endRun(run)).length, 1, "endRun");
    f.cases++;
  },
);

Deno.test("over HTTP, a start-run body outside the range gets 400 INVALID_REQUEST, and the ends of the range get 201", async () => {
  const boundary = new ToolBoundary({ tools: [namedTool("search")] });
  const { send } = httpOver(boundary);
  for (
    const body of [
      '{"deadline":1e21}',
      `{"deadline":${MAX_EPOCH_MS + 1}}`,
      '{"deadline":"+275760-09-13T00:00:00.001Z"}',
      `{"ttlMs":${MAX_TTL_MS + 1}}`,
      '{"ttlMs":1.5}',
      '{"ttlMs":1000,"budget":{"calls":9007199254740992}}',
      '{"ttlMs":1000,"budget":{"calls":1,"perTool":{"search":1e21}}}',
      '{"ttlMs":1000,"budget":{"calls":1,"perTool":{"search":-1}}}',
    ]
  ) {
    f.cases++;
    const res = await send("POST", "/v1/runs", { text: body });
    checkEqual(f, [res.status, res.body.code], [400, "INVALID_REQUEST"], body);
  }
  const res = await send("POST", "/v1/runs", {
    text: `{"deadline":${MAX_EPOCH_MS},"budget":{"calls":${MAX_BUDGET},` +
      `"perTool":{"search":${MAX_BUDGET}}}}`,
  });
  checkEqual(f, res.status, 201, "the ends");
  checkEqual(
    f,
    [res.body.deadline, res.body.budget],
    [MAX_EPOCH_MS, { calls: MAX_BUDGET, perTool: { search: MAX_BUDGET } }],
    "exact",
  );
  const long = await send("POST", "/v1/runs", { text: `{"ttlMs":${MAX_TTL_MS}}` });
  checkEqual(f, long.status, 201, "the longest TTL");
});

/**
 * 1-based ARGV positions that carry numbers, per script; `pairs` adds every second from there;
 * `unlessEmpty` those that carry one or `''` (none): the costs.
 */
const NUMERIC_ARGV: Record<string, { at: number[]; pairsFrom?: number; unlessEmpty?: number[] }> = {
  startRun: { at: [3, 4, 5, 6], pairsFrom: 9, unlessEmpty: [7] },
  begin: { at: [6, 7, 8, 10], unlessEmpty: [12] },
  complete: { at: [3, 7, 9, 11], unlessEmpty: [15] },
  endRun: { at: [1] },
  readFacts: { at: [2, 3] },
  get: { at: [] },
  getRun: { at: [1] },
  lookupCall: { at: [] },
  readCalls: { at: [] },
  indexRun: { at: [2, 3] },
  listRuns: { at: [2] },
};

Deno.test("UpstashStore wire: every number a script receives in ARGV is a plain integer string, for default values, the ends of the range and no-cap fact reads", async () => {
  const fixture = await startUpstashFixture();
  try {
    const byHash = new Map<string, string>();
    const bySource = new Map<string, string>();
    for (const script of SCRIPTS) {
      byHash.set(await sha1Hex(script.source), script.name);
      bySource.set(script.source, script.name);
    }
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const priced = defineTool({
      name: "priced",
      readOnly: true,
      cost: MAX_COST,
      execute: (_input, ctx) => {
        ctx.settle(MAX_COST - 1);
        return { tool: "priced" };
      },
      project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "the tool's name", content: raw }),
    });
    const tools = [namedTool("search"), namedTool("limited", 3), priced];
    const defaults = new ToolBoundary({ store, tools });
    const extremes = new ToolBoundary({ store, tools, recordTtlMs: MAX_TTL_MS });
    fixture.endpoint.reset();

    const runs = [
      [defaults, await defaults.startRun()],
      [defaults, await defaults.startRun({ ttlMs: 1 })],
      [extremes, await extremes.startRun({ ttlMs: MAX_TTL_MS })],
      [
        extremes,
        await extremes.startRun({
          deadline: MAX_EPOCH_MS,
          budget: { calls: MAX_BUDGET, perTool: { search: MAX_BUDGET, limited: 0, other: 0 } },
        }),
      ],
      [extremes, await extremes.startRun({ budget: { calls: 10, cost: MAX_COST } })],
    ] as const;
    for (const [boundary, run] of runs) {
      for (const toolName of ["search", "limited", "priced"]) {
        await boundary.invoke(run, {
          toolCallId: `call_${toolName}`,
          runId: run.runId,
          toolName,
          input: {},
        });
      }
      await boundary.endRunReport(run);
      await store.readFacts({
        runId: run.runId,
        identities: [{ runId: run.runId, toolCallId: "call_search" }],
        maxFacts: Number.POSITIVE_INFINITY,
        maxBytes: Number.POSITIVE_INFINITY,
      });
      await store.getRun(run.runId);
      await store.get(run.runId, "call_search");
      await store.lookupCall(run.runId, "call_search");
      await store.listCalls(run.runId);
      await store.listRuns!({ limit: 100 });
    }
    const seen = new Map<string, number>();
    const numbers: string[] = [];
    for (const command of fixture.endpoint.commands()) {
      const verb = command[0]?.toUpperCase();
      if (verb !== "EVAL" && verb !== "EVALSHA") continue;
      const name = verb === "EVAL" ? bySource.get(command[1]!) : byHash.get(command[1]!);
      check(f, name !== undefined, `a script of the store: ${command[1]?.slice(0, 40)}`);
      const spec = NUMERIC_ARGV[name!]!;
      const argv = command.slice(3 + Number(command[2]));
      const positions = [...spec.at];
      for (let i = spec.pairsFrom ?? Infinity; i <= argv.length; i += 2) positions.push(i);
      for (const at of spec.unlessEmpty ?? []) if (argv[at - 1] !== "") positions.push(at);
      for (const at of positions) {
        const value = argv[at - 1];
        check(f, value !== undefined && /^-?\d+$/.test(value), `${name} ARGV[${at}] = ${value}`);
        numbers.push(value!);
      }
      seen.set(name!, (seen.get(name!) ?? 0) + 1);
      f.cases++;
    }
    checkEqual(f, [...seen.keys()].sort(), Object.keys(NUMERIC_ARGV).sort(), "every script ran");
    // The values that used to go out as exponent notation or past 2^53 now go out exactly.
    for (
      const exact of [
        String(MAX_EPOCH_MS),
        String(MAX_BUDGET),
        String(MAX_TTL_MS),
        String(MAX_COST),
        String(MAX_COST - 1),
      ]
    ) {
      check(f, numbers.includes(exact), `${exact} sent as digits`);
    }
    check(f, !numbers.some((value) => /e|\./i.test(value)), "no exponent, no fraction");

    // What cannot be a plain integer string never leaves the process.
    const before = fixture.endpoint.requests;
    const now = Date.now();
    const unbounded = await outcome(store.startRun({
      runId: "run-unbounded",
      deadline: now + 1_000,
      budget: { calls: Number.POSITIVE_INFINITY, perTool: {} },
      ttlMs: 1_000,
      attemptId: "a",
      now,
    }));
    checkEqual(f, unbounded, "RangeError", "an Infinity budget");
    checkEqual(f, fixture.endpoint.requests, before, "nothing sent");
  } finally {
    await fixture.stop();
  }
});
