/**
 * The ledger inside Cloudflare, in workerd (through miniflare, from Node), with SQLite-backed
 * Durable Objects, their alarms and R2: the store conformance suite run inside workerd (on a
 * `DurableObjectStore` in an object, and on `boundaryStore` over the namespace), 50 parallel
 * calls in one object, cost budgets under concurrent begins, tables of layout 1 migrated, TTL
 * by alarm, an object restarted with its storage kept, two Workers on one run, an `Agent` with
 * the AI SDK adapter, and the R2 archive checked by `verifyRun`.
 *
 * The Worker is tests/worker.ts, bundled once; each test serves it in a fresh miniflare.
 */
import assert from "node:assert/strict";
import { ERROR_MESSAGES } from "@tool-boundary/core";
import type { StoreCapability } from "@tool-boundary/core/store";
import { storeConformance } from "@tool-boundary/core/testing";
import { bundle, serveMiniflare } from "../../../../tests/runtime/setup.ts";

let bundled: Promise<string> | undefined;

/** Bundles tests/worker.ts once per module (`cloudflare:*` left to workerd): its path. */
function bundleOnce(): Promise<string> {
  bundled ??= Deno.makeTempDir({ prefix: "tb-cloudflare-" }).then((dir) =>
    bundle("packages/cloudflare/tests/worker.ts", dir, undefined, { external: ["cloudflare:*"] })
  );
  return bundled;
}

/** Serves the Worker (and a second one on its LEDGER namespace) and calls `fn` with its URL. */
async function serve(
  fn: (get: (path: string) => Promise<unknown>) => Promise<void>,
  persist: string | false = false,
): Promise<void> {
  const script = await bundleOnce();
  const worker = {
    modules: true,
    scriptPath: script,
    modulesRoot: script.slice(0, script.lastIndexOf("/")),
    compatibilityDate: "2026-07-01",
    compatibilityFlags: ["nodejs_compat"],
  };
  const options = {
    durableObjectsPersist: persist,
    workers: [
      {
        ...worker,
        name: "main",
        durableObjects: {
          LEDGER: { className: "LedgerObject", useSQLite: true },
          TEST: { className: "TestObject", useSQLite: true },
          AGENT: { className: "SupportAgent", useSQLite: true },
        },
        r2Buckets: ["ARCHIVE"],
        serviceBindings: { OTHER: "other" },
      },
      {
        ...worker,
        name: "other",
        bindings: { ROLE: "other" },
        durableObjects: {
          LEDGER: { className: "LedgerObject", scriptName: "main", useSQLite: true },
        },
      },
    ],
  };
  await serveMiniflare(options, (url) =>
    fn(async (path) => {
      const res = await fetch(`${url}${path}`);
      const text = await res.text();
      assert.equal(res.status, 200, `${path}: ${text}`);
      return JSON.parse(text);
    }));
}

interface CaseResult {
  name: string;
  ok: boolean;
  error?: string;
}

/** The names of the cases the suite registers for a store of that name and capabilities. */
function expectedCases(name: string, capabilities: StoreCapability[]): Promise<string[]> {
  // Declared capabilities: no store is made to find them.
  return storeConformance({
    name,
    capabilities,
    createStore: () => Promise.reject(new Error("never run here")),
    test: () => {},
  });
}

/**
 * Each case of a suite run inside workerd as a step of its own (a failed case fails by name),
 * after checking that every case the suite registers ran, each once.
 */
async function reportCases(
  t: Deno.TestContext,
  results: CaseResult[],
  expected: string[],
): Promise<void> {
  assert.deepEqual(results.map((result) => result.name), expected);
  for (const result of results) {
    await t.step(result.name, () => {
      if (!result.ok) throw new Error(`failed inside workerd: ${result.error}`);
    });
  }
  const failed = results.filter((result) => !result.ok).map((result) => result.name);
  assert.deepEqual(failed, [], `${failed.length} of ${results.length} cases failed`);
}

Deno.test("workerd: DurableObjectStore passes the store conformance suite inside a Durable Object, every capability included", async (t) => {
  await serve(async (get) => {
    const results = await get("/conformance/object") as CaseResult[];
    // Every capability is declared: the listRuns cases run, none is checked absent.
    const all: StoreCapability[] = ["CallIndex", "RunIndex", "RunSeal"];
    await reportCases(t, results, await expectedCases("DurableObjectStore", all));
    console.log(`workerd, DurableObjectStore in an object: ${results.length} cases`);
  });
});

Deno.test("workerd: boundaryStore passes the store conformance suite over RPC, one object per run, without RunIndex", async (t) => {
  await serve(async (get) => {
    const results = await get("/conformance/namespace") as CaseResult[];
    // RunIndex is absent: its refusal case runs in place of its cases.
    await reportCases(t, results, await expectedCases("boundaryStore", ["CallIndex", "RunSeal"]));
    console.log(`workerd, boundaryStore over the namespace: ${results.length} cases`);
  });
});

Deno.test("workerd: 50 parallel calls in one object keep the budget exact and run each ID once", async () => {
  await serve(async (get) => {
    for (const path of ["/concurrency/object", "/concurrency/namespace"]) {
      assert.deepEqual(await get(path), {
        distinct: { READY: 30, RUN_BUDGET_EXHAUSTED: 20 },
        used: 30,
        executedIds: 30,
        mostPerId: 1,
        repeated: { READY: 1, DUPLICATE_TOOL_CALL: 49 },
        sameExecutions: 1,
      }, path);
    }
  });
});

Deno.test("workerd: concurrent begins with a cost never pass the run's cost budget, settles give back exactly, a call never completed keeps its reservation", async () => {
  await serve(async (get) => {
    const settled = (spent: number) => JSON.stringify({ reserved: 5, spent });
    const expected = (expired: unknown) => ({
      first: { BEGUN: 20, BUDGET_EXHAUSTED: 40 },
      afterFirst: { cost: { reserved: 100, spent: 0 }, calls: 20 },
      settled: [...Array(10).fill(settled(2)), ...Array(5).fill(settled(5))],
      // 5 calls never completed hold 25; 10 spent 2 and 5 their 5: 45.
      afterSettle: { cost: { reserved: 25, spent: 45 }, calls: 20 },
      // The refunds (30) make room for exactly 6 more.
      second: { BEGUN: 6, BUDGET_EXHAUSTED: 54 },
      afterSecond: { cost: { reserved: 55, spent: 45 }, calls: 26 },
      exported: {
        cost: { reserved: 55, spent: 45 },
        budget: 100,
        records: {
          [settled(2)]: 10,
          [settled(5)]: 5,
          [JSON.stringify({ reserved: 5, spent: null })]: 11,
        },
      },
      expired,
      ended: { reserved: 55, spent: 45 },
    });
    assert.deepEqual(await get("/cost/namespace"), expected(null), "/cost/namespace");
    assert.deepEqual(
      await get("/cost/object"),
      expected({
        swept: { records: 26, runs: 0, next: Date.UTC(2026, 0, 1) + 600_000 },
        records: Array(5).fill(null),
        // Swept records give nothing back: what their calls reserved stays held.
        cost: { reserved: 55, spent: 45 },
        calls: 26,
        one: { BUDGET_EXHAUSTED: 1 },
        zero: { BEGUN: 1 },
        late: false,
      }),
      "/cost/object",
    );
    assert.deepEqual(await get("/cost/boundary"), {
      outcomes: { READY: 20, BUDGET_EXHAUSTED: 40 },
      executed: 20,
      cost: { reserved: 0, spent: 100 },
      calls: 20,
    });
  });
});

Deno.test("workerd: tables of layout 1 get the cost columns in place, their rows kept without a cost", async () => {
  await serve(async (get) => {
    assert.deepEqual(await get("/migration"), {
      layout1: { runs: 18, records: 19 },
      layout2: { runs: 21, records: 21 },
      added: {
        runs: ["budget_cost", "cost_reserved", "cost_spent"],
        records: ["cost_reserved", "cost_spent"],
      },
      schema: 2,
      runHasCost: false,
      recordKept: true,
      costed: { reserved: 7, spent: null },
      runCost: { reserved: 7, spent: 0 },
      newRun: [10, { reserved: 0, spent: 0 }],
    });
  });
});

Deno.test("workerd: a row over MAX_ROW_BYTES fails its begin or complete whole, before SQLite", async () => {
  await serve(async (get) => {
    const seen = await get("/row-limit") as Record<string, unknown>;
    const refusal =
      /^RangeError: DurableObjectStore cannot keep this record: \d+ bytes of text, over the 1900000 a row may hold$/;
    assert.match(seen.begin as string, refusal);
    assert.match(seen.complete as string, refusal);
    assert.deepEqual({ ...seen, begin: null, complete: null }, {
      begin: null,
      complete: null,
      bigRecord: null,
      okStatus: "PROJECTING",
      used: 1,
      calls: ["call_ok"],
    });
  });
});

Deno.test("workerd: a sweep is asked once per sooner expiry, and again after the scheduler failed", async () => {
  await serve(async (get) => {
    assert.deepEqual(await get("/scheduling"), {
      // The run's write stays; its sweep was not asked for after all.
      started: "scheduler down",
      runKept: true,
      begun: [true, true],
      // Asked at the run's expiry (failed), then at call_1's; call_2 expires later: not asked.
      // The sweep at call_1's expiry deletes it and asks for the next, at call_2's.
      asked: [600_000, 300_000, 400_000],
      swept: { records: 1, runs: 0, next: Date.UTC(2026, 0, 1) + 400_000 },
    });
  });
});

Deno.test("workerd: a store refuses tables of a layout it does not know, and leaves them as they are", async () => {
  await serve(async (get) => {
    assert.deepEqual(await get("/schema"), {
      refused: "DurableObjectStore cannot read the tables <prefix>*: their layout is 3, this " +
        "version reads 2",
      schema: 3,
    });
  });
});

Deno.test("workerd: the object's alarm deletes the run and record once they expire, and reads stop at expiry", async () => {
  await serve(async (get) => {
    const runId = `run-ttl-${crypto.randomUUID()}`;
    assert.deepEqual(await get(`/expiry?phase=start&runId=${runId}`), { status: "READY" });
    const live = await get(`/expiry?phase=read&runId=${runId}`) as {
      storage: { rows: Record<string, number> };
    };
    assert.deepEqual(live.storage.rows, { runs: 1, calls: 1, records: 1 });
    // The record lives 500 ms, the run 1 s; the alarm follows each expiry.
    let seen;
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen = await get(`/expiry?phase=read&runId=${runId}`) as {
        run: unknown;
        record: unknown;
        storage: { rows: Record<string, number>; alarms: { records: number; runs: number }[] };
      };
      if (seen.storage.rows.runs === 0) break;
    }
    assert.ok(seen !== undefined);
    assert.equal(seen.run, null);
    assert.equal(seen.record, null);
    assert.deepEqual(seen.storage.rows, { runs: 0, calls: 0, records: 0 });
    const swept = seen.storage.alarms.reduce(
      (sum, alarm) => ({ records: sum.records + alarm.records, runs: sum.runs + alarm.runs }),
      { records: 0, runs: 0 },
    );
    assert.deepEqual(swept, { records: 1, runs: 1 }, JSON.stringify(seen.storage.alarms));
  });
});

Deno.test("workerd: an object restarted with its storage kept still holds its run, its record and its begun keys", async () => {
  const persist = await Deno.makeTempDir({ prefix: "tb-cloudflare-persist-" });
  try {
    let written: unknown;
    await serve(async (get) => {
      written = ((await get("/restart?phase=write")) as { record: unknown }).record;
    }, persist);
    assert.equal((written as { status: string }).status, "READY");
    await serve(async (get) => {
      const read = await get("/restart?phase=read");
      assert.deepEqual(read, {
        record: written,
        again: ["DUPLICATE_TOOL_CALL", "READY"],
        used: 2,
        executions: { call_2: 1 },
      });
    }, persist);
  } finally {
    await Deno.remove(persist, { recursive: true });
  }
});

Deno.test("workerd: two Workers on one run share its budget and run each ID once", async () => {
  await serve(async (get) => {
    const seen = await get("/two-workers") as {
      main: { outcomes: string[]; executions: Record<string, number> };
      other: { outcomes: string[]; executions: Record<string, number> };
      run: { used: { calls: number } };
      calls: { calls: { toolCallId: string; status: string }[] };
    };
    const executed = [
      ...Object.entries(seen.main.executions),
      ...Object.entries(seen.other.executions),
    ];
    // Nine IDs (call_4 to call_6 from both Workers), seven calls of budget.
    assert.equal(executed.length, 7, JSON.stringify(seen));
    assert.ok(executed.every(([, count]) => count === 1));
    assert.equal(new Set(executed.map(([id]) => id)).size, 7);
    assert.equal(seen.run.used.calls, 7);
    assert.deepEqual(
      seen.calls.calls.map((call) => call.status),
      Array(7).fill("READY"),
    );
    const outcomes = [...seen.main.outcomes, ...seen.other.outcomes];
    assert.equal(outcomes.filter((o) => o === "READY").length, 7);
    assert.equal(
      outcomes.filter((o) => o === "READY" || o === "DUPLICATE_TOOL_CALL").length +
        outcomes.filter((o) => o === "RUN_BUDGET_EXHAUSTED").length,
      12,
      outcomes.join(","),
    );
    console.log(`workerd, two Workers: ${outcomes.join(",")}`);
  });
});

Deno.test("workerd: an Agent's AI SDK tools go through a boundary on the ledger beside its own tables", async () => {
  await serve(async (get) => {
    const seen = await get("/agent") as {
      texts: string[];
      outputs: unknown[][];
      record: [string, unknown];
      executions: Record<string, number>;
      facts: string[];
      tables: string[];
      rows: Record<string, number>;
      sweeps: number;
      prompts: string;
    };
    assert.deepEqual(seen.texts, ["An upstream timeout at 12:01.", "Same."]);
    assert.deepEqual(seen.outputs[0], [
      {
        type: "json",
        value: { evidence: "EVIDENCE_FOUND", scope: "logs", content: ["12:01 timeout"] },
      },
      {
        type: "error-json",
        value: { code: "NOT_READ_ONLY", message: ERROR_MESSAGES.NOT_READ_ONLY },
      },
    ]);
    // The second turn repeats call_1: refused, and the tool does not run again.
    assert.deepEqual(seen.outputs[1], [
      {
        type: "error-json",
        value: { code: "DUPLICATE_TOOL_CALL", message: ERROR_MESSAGES.DUPLICATE_TOOL_CALL },
      },
    ]);
    assert.deepEqual(seen.executions, { call_1: 1 });
    assert.deepEqual(seen.record, [
      "READY",
      { lines: ["12:01 timeout"], apiKey: "sk-live-harness-only" },
    ]);
    assert.doesNotMatch(seen.prompts, /sk-live-harness-only/);
    assert.deepEqual(seen.facts, ["call_1"]);
    // The ledger's tables sit beside the agent's own.
    for (const table of ["tb_runs", "tb_calls", "tb_records", "tb_meta"]) {
      assert.ok(seen.tables.includes(table), seen.tables.join(", "));
    }
    assert.ok(seen.tables.some((table) => table.startsWith("cf_agents")), seen.tables.join(", "));
    assert.deepEqual(seen.rows, { runs: 1, calls: 1, records: 1 });
    // The sweep is asked of the agent's scheduler, never of the alarm the agent owns: at the
    // run's expiry, then at the record's, which is sooner (a run outlives its records).
    assert.equal(seen.sweeps, 2);
  });
});

Deno.test("workerd: a boundary with archive: r2Archive writes the sealed run's bundle to R2 at endRun, and the copy verifies", async () => {
  await serve(async (get) => {
    const { refused, ...seen } = await get("/archive") as Record<string, unknown>;
    // The same bytes again are a success; other bytes for the run are refused.
    assert.match(refused as string, /^Archive already holds another bundle for run /);
    assert.deepEqual(seen, {
      before: null,
      key: true,
      same: true,
      verdict: { ok: true, sealed: true, calls: 2 },
      tampered: { ok: false, toolCallId: "call_1", reason: "REORDERED" },
      missing: null,
    });
  });
});
