/**
 * Tool names and IDs the way JavaScript objects, UTF-8 and URL parsing could change them: tools
 * named after `Object.prototype` keys keep their own budgets in every store, through the boundary
 * and over HTTP; names with lone surrogates (which the wire turns into U+FFFD) are refused; run
 * and tool call IDs made only of dots (which URL parsing removes) are refused where they would be
 * created.
 */
import fc from "fast-check";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import type { StartRunRequest, Store } from "../../src/store/mod.ts";
import { check, checkEqual, figures, report } from "./figures.ts";
import { httpOver, namedTool, onBothStores, PROTOTYPE_KEYS } from "./stores.ts";

const f = figures("names", "MemoryStore+UpstashStore");
globalThis.addEventListener("unload", () => report(f));

/** Every inherited name, and `prototype` (which valibot's record drops too). */
const INHERITED = [...PROTOTYPE_KEYS, "prototype"];
const LONE = ["\ud800", "a\udc00b", "\udfff\ud800", "search\ud83d"];

let seq = 0;
const uid = (prefix: string) => `${prefix}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;

/** An oracle independent of the code under test: UTF-8 round trips only well-formed text. */
const wellFormed = (text: string) =>
  new TextDecoder().decode(new TextEncoder().encode(text)) === text;

function startRequest(
  clock: () => number,
  perTool: Record<string, number>,
  calls = 1_000,
): StartRunRequest {
  const now = clock();
  return {
    runId: uid("run"),
    deadline: now + 600_000,
    budget: { calls, perTool },
    ttlMs: 1_200_000,
    attemptId: uid("start"),
    now,
  };
}

function begin(store: Store, clock: () => number, runId: string, toolName: string) {
  return store.begin({
    runId,
    toolCallId: uid("call"),
    toolName,
    requestJson: "{}",
    requestDigest: "test-digest",
    attemptId: uid("attempt"),
    ttlMs: 600_000,
    now: clock(),
  });
}

async function rejectsWith(promise: Promise<unknown>, type: ErrorConstructor, at: string) {
  let thrown: unknown;
  try {
    await promise;
  } catch (error) {
    thrown = error;
  }
  check(f, thrown instanceof type, () => `${at}: expected ${type.name}, got ${String(thrown)}`);
}

function prototypeIntact(at: string) {
  checkEqual(
    f,
    Object.getOwnPropertyNames(Object.prototype).sort(),
    [...PROTOTYPE_KEYS].sort(),
    at,
  );
}

const toolName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INHERITED) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 12 }) },
);

onBothStores(
  "a tool named constructor, __proto__ or any other Object.prototype key keeps its own budget (generated names)",
  async ({ store, clock, name }) => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(toolName, fc.integer({ min: 0, max: 2 })), {
          minLength: 1,
          maxLength: 5,
          selector: ([tool]) => tool,
        }),
        fc.constantFrom(...INHERITED),
        async (limited, unlimited) => {
          f.cases++;
          const perTool = Object.fromEntries(limited);
          const free = Object.hasOwn(perTool, unlimited) ? null : unlimited;
          const started = await store.startRun(startRequest(clock, perTool));
          check(f, started.ok, "startRun");
          if (!started.ok) return;
          const { runId } = started.run;
          checkEqual(f, started.run.budget.perTool, perTool, "every key kept as its own property");
          for (const [tool, limit] of limited) {
            for (let i = 0; i < limit; i++) {
              checkEqual(f, (await begin(store, clock, runId, tool)).ok, true, `${tool} #${i}`);
            }
            checkEqual(
              f,
              await begin(store, clock, runId, tool),
              { ok: false, code: "TOOL_BUDGET_EXHAUSTED" },
              `${JSON.stringify(tool)} past its budget of ${limit}`,
            );
          }
          // A tool the table does not name has no tool budget, whatever its name.
          if (free !== null) {
            for (let i = 0; i < 3; i++) {
              checkEqual(f, (await begin(store, clock, runId, free)).ok, true, `${free} unlimited`);
            }
          }
          const run = await store.getRun(runId);
          checkEqual(f, run?.budget.perTool, perTool, "read back");
          const used = Object.fromEntries([
            ...limited.filter(([, limit]) => limit > 0),
            ...(free === null ? [] : [[free, 3] as const]),
          ]);
          checkEqual(f, run?.used.perTool, used, "counted per tool, own properties only");
          prototypeIntact(name);
        },
      ),
      { numRuns: name === "MemoryStore" ? 200 : 12 },
    );
  },
);

onBothStores(
  "startRun refuses a budget.perTool key with a lone surrogate with RangeError and writes nothing",
  async ({ store, clock, fixture }) => {
    for (const lone of LONE) {
      f.cases++;
      const sent = fixture?.endpoint.requests ?? 0;
      const request = startRequest(clock, { ok: 1, [lone]: 1 });
      await rejectsWith(store.startRun(request), RangeError, JSON.stringify(lone));
      checkEqual(f, fixture?.endpoint.requests ?? 0, sent, "nothing sent to Redis");
      checkEqual(f, await store.getRun(request.runId), null, "no run");
    }
  },
);

onBothStores(
  "begin refuses a tool name with a lone surrogate with RangeError and uses no budget",
  async ({ store, clock }) => {
    const started = await store.startRun(startRequest(clock, { "\ufffd": 1 }));
    check(f, started.ok, "startRun");
    if (!started.ok) return;
    const { runId } = started.run;
    for (const lone of LONE) {
      f.cases++;
      await rejectsWith(begin(store, clock, runId, lone), RangeError, JSON.stringify(lone));
    }
    const run = await store.getRun(runId);
    checkEqual(f, run?.used, { calls: 0, perTool: {} }, "no budget used");
    // U+FFFD itself is a well-formed name with its own budget.
    checkEqual(f, (await begin(store, clock, runId, "\ufffd")).ok, true, "U+FFFD begins");
  },
);

onBothStores(
  "a run ID or tool call ID made only of dots is refused when created",
  async ({ store, clock }) => {
    for (const runId of [".", "..", "...", ".".repeat(128)]) {
      f.cases++;
      checkEqual(
        f,
        await store.startRun({ ...startRequest(clock, {}), runId }),
        { ok: false, code: "INVALID_RUN_ID" },
        JSON.stringify(runId),
      );
      checkEqual(f, await store.getRun(runId), null, `${runId}: no run`);
    }
    const started = await store.startRun({ ...startRequest(clock, {}), runId: uid("a..b") });
    check(f, started.ok, "a run ID with dots among other characters is fine");
    if (!started.ok) return;
    const { runId } = started.run;
    for (const toolCallId of [".", "..", "...", ".".repeat(256)]) {
      f.cases++;
      const begun = await store.begin({
        runId,
        toolCallId,
        toolName: "t",
        requestJson: "{}",
        requestDigest: "test-digest",
        attemptId: uid("attempt"),
        ttlMs: 60_000,
        now: clock(),
      });
      checkEqual(f, begun, { ok: false, code: "INVALID_TOOL_CALL_ID" }, JSON.stringify(toolCallId));
    }
    for (const toolCallId of [".a", "a.", "functions.search:0", "..:"]) {
      const begun = await store.begin({
        runId,
        toolCallId,
        toolName: "t",
        requestJson: "{}",
        requestDigest: "test-digest",
        attemptId: uid("attempt"),
        ttlMs: 60_000,
        now: clock(),
      });
      checkEqual(f, begun.ok, true, `${toolCallId} begins`);
    }
    checkEqual(f, (await store.getRun(runId))?.used.calls, 4, "only the accepted IDs counted");
  },
);

onBothStores(
  "through the boundary, each tool named after an Object.prototype key keeps its own budget",
  async ({ store, clock, name }) => {
    const boundary = new ToolBoundary({
      store,
      clock,
      tools: INHERITED.map((tool) => namedTool(tool, 1)),
    });
    // The run's table raises __proto__ to 2 and constructor to 3: JSON.parse keeps both keys.
    const perTool = JSON.parse('{"__proto__": 2, "constructor": 3}');
    const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 100, perTool } });
    const expected = Object.fromEntries(INHERITED.map((tool) => [tool, 1]));
    expected["__proto__"] = 2;
    expected["constructor"] = 3;
    checkEqual(f, run.budget.perTool, expected, "the run context names every tool");
    check(f, Object.isFrozen(run.budget.perTool), "frozen");
    for (const tool of INHERITED) {
      f.cases++;
      const limit = expected[tool]!;
      for (let i = 0; i <= limit; i++) {
        const result = await boundary.invoke(run, {
          toolCallId: uid("call"),
          runId: run.runId,
          toolName: tool,
          input: {},
        });
        checkEqual(
          f,
          result.status === "READY" ? "READY" : result.code,
          i < limit ? "READY" : "TOOL_BUDGET_EXHAUSTED",
          `${name}: ${tool} call ${i + 1} of budget ${limit}`,
        );
      }
    }
    const state = await store.getRun(run.runId);
    checkEqual(f, state?.used.perTool, expected, "each tool's count is its own");
    const ready = Object.values(expected).reduce((sum, limit) => sum + limit, 0);
    checkEqual(f, (await boundary.endRun(run)).length, ready, "one fact per READY call");
    prototypeIntact(name);
  },
);

onBothStores(
  "through the boundary, startRun refuses a budget.perTool key with a lone surrogate with RangeError and starts no run",
  async ({ store, clock }) => {
    const boundary = new ToolBoundary({ store, clock, tools: [namedTool("search")] });
    for (const lone of LONE) {
      f.cases++;
      const runId = uid("run");
      await rejectsWith(
        boundary.startRun({ runId, ttlMs: 60_000, budget: { calls: 5, perTool: { [lone]: 1 } } }),
        RangeError,
        JSON.stringify(lone),
      );
      checkEqual(f, await store.getRun(runId), null, "no run");
    }
  },
);

Deno.test("defineTool refuses a name with a lone surrogate or no characters with TypeError, and keeps every other name (generated)", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: "binary", maxLength: 8 }),
        fc.constantFrom(...INHERITED, ...LONE, ""),
      ),
      (text) => {
        f.cases++;
        let outcome: string;
        try {
          outcome = defineTool({ ...namedTool("x"), name: text }).name === text
            ? "kept"
            : "changed";
        } catch (error) {
          outcome = error instanceof TypeError ? "TypeError" : String(error);
        }
        checkEqual(
          f,
          outcome,
          text.length > 0 && wellFormed(text) ? "kept" : "TypeError",
          JSON.stringify(text),
        );
      },
    ),
    { numRuns: 1_000 },
  );
});

Deno.test("ToolBoundary refuses a tool object whose name holds a lone surrogate with TypeError", () => {
  for (const lone of LONE) {
    f.cases++;
    const forged = { ...namedTool("x"), name: lone };
    let thrown: unknown;
    try {
      new ToolBoundary({ tools: [forged] });
    } catch (error) {
      thrown = error;
    }
    check(f, thrown instanceof TypeError, JSON.stringify(lone));
  }
});

onBothStores(
  "over HTTP, budget.perTool keeps __proto__, constructor and prototype keys, and each tool keeps its budget",
  async ({ store, clock }) => {
    const tools = ["__proto__", "constructor", "prototype", "toString"].map((tool) =>
      namedTool(tool)
    );
    const { send } = httpOver(new ToolBoundary({ store, clock, tools }));
    const started = await send("POST", "/v1/runs", {
      text: '{"ttlMs":60000,"budget":{"calls":20,' +
        '"perTool":{"__proto__":1,"constructor":2,"prototype":0,"toString":1}}}',
    });
    checkEqual(f, started.status, 201, "started");
    const perTool = (started.body.budget as { perTool: Record<string, number> }).perTool;
    checkEqual(
      f,
      perTool,
      JSON.parse('{"__proto__":1,"constructor":2,"prototype":0,"toString":1}'),
      "every key in the run context",
    );
    const runId = String(started.body.runId);
    for (const [tool, limit] of Object.entries(perTool)) {
      for (let i = 0; i <= limit; i++) {
        f.cases++;
        const res = await send("POST", `/v1/runs/${runId}/tool-calls`, {
          as: "agent",
          text: JSON.stringify({ toolCallId: uid("call"), toolName: tool, input: {} }),
        });
        checkEqual(
          f,
          [res.status, res.body.status === "READY" ? "READY" : res.body.code],
          i < limit ? [200, "READY"] : [429, "TOOL_BUDGET_EXHAUSTED"],
          `${tool} call ${i + 1} of budget ${limit}`,
        );
      }
    }
    checkEqual(
      f,
      (await store.getRun(runId))?.used.perTool,
      JSON.parse('{"__proto__":1,"constructor":2,"toString":1}'),
      "counted per tool",
    );
  },
);

Deno.test("over HTTP, a budget.perTool key with a lone surrogate or a bad budget under a key valibot's record drops gets 400 INVALID_REQUEST and starts no run", async () => {
  const boundary = new ToolBoundary({ tools: [namedTool("search")] });
  const { send } = httpOver(boundary);
  const cases = [
    '{"\\ud800":1}',
    '{"ok":1,"a\\udc00":1}',
    '{"__proto__":-1}',
    '{"constructor":1.5}',
    '{"prototype":"1"}',
    '{"__proto__":{"calls":1}}',
    '{"constructor":9007199254740992}',
  ];
  for (const perTool of cases) {
    f.cases++;
    const runId = uid("run");
    const res = await send("POST", "/v1/runs", {
      text: `{"runId":"${runId}","ttlMs":60000,"budget":{"calls":5,"perTool":${perTool}}}`,
    });
    checkEqual(f, [res.status, res.body.code], [400, "INVALID_REQUEST"], perTool);
    checkEqual(
      f,
      (res.body.issues as { path: string }[] | undefined)?.[0]?.path,
      "budget.perTool",
      `${perTool}: the issue names the field`,
    );
    checkEqual(f, await boundary.store.getRun(runId), null, `${perTool}: no run`);
  }
});

Deno.test("over HTTP, run and tool call IDs made only of dots are refused, and dot segments in a path reach no run", async () => {
  const boundary = new ToolBoundary({ tools: [namedTool("search")] });
  const { send } = httpOver(boundary);
  for (const runId of [".", "..", "..."]) {
    f.cases++;
    const res = await send("POST", "/v1/runs", { text: JSON.stringify({ runId, ttlMs: 60_000 }) });
    checkEqual(f, [res.status, res.body.code], [400, "INVALID_RUN_ID"], `runId ${runId}`);
  }
  const started = await send("POST", "/v1/runs", { text: '{"runId":"run-dots","ttlMs":60000}' });
  checkEqual(f, started.status, 201, "started");
  for (const toolCallId of [".", "..", "..."]) {
    f.cases++;
    const res = await send("POST", "/v1/runs/run-dots/tool-calls", {
      as: "agent",
      text: JSON.stringify({ toolCallId, toolName: "search", input: {} }),
    });
    checkEqual(
      f,
      [res.status, res.body.code, res.body.toolCallId],
      [400, "INVALID_TOOL_CALL_ID", null],
      `toolCallId ${toolCallId}`,
    );
  }
  // URL parsing removes "." and ".." (also as %2E) before routing: no route sees them as IDs.
  for (
    const [method, url] of [
      ["GET", "http://localhost/v1/runs/../tool-calls/.."],
      ["GET", "http://localhost/v1/runs/run-dots/tool-calls/.."],
      ["GET", "http://localhost/v1/runs/%2e%2e/tool-calls/%2E"],
      ["POST", "http://localhost/v1/runs/%2E%2E/end"],
    ] as const
  ) {
    f.cases++;
    const res = await send(method, url);
    checkEqual(f, [res.status, res.body.code], [404, "NOT_FOUND"], `${method} ${url}`);
  }
  // "/v1/runs/./end" is "/v1/runs/end": the path of a run named "end", which only GET reads.
  f.cases++;
  const dotEnd = await send("POST", "http://localhost/v1/runs/./end");
  checkEqual(f, [dotEnd.status, dotEnd.body.code], [405, "METHOD_NOT_ALLOWED"], "POST ./end");
  // Three dots are no dot segment: the path keeps them, and the ID rule refuses them.
  const three = await send("GET", "http://localhost/v1/runs/run-dots/tool-calls/...");
  checkEqual(f, [three.status, three.body.code], [400, "INVALID_TOOL_CALL_ID"], "...");
  const ended = await send("POST", "/v1/runs/run-dots/end");
  checkEqual(f, [ended.status, ended.body.facts], [200, []], "the run saw no call");
});
