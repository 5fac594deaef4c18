/**
 * What each UpstashStore operation costs on Upstash's bill: Upstash bills every command a
 * request runs, the `EVALSHA` and every `redis.call` inside the script alike. redis-server's
 * MONITOR shows exactly those (the `EVALSHA` from the endpoint's connection, then each command
 * of the script as a `lua` line), so the count of lines an operation leaves is its bill.
 *
 * Prints `BILLED {...}`: the count per operation, as docs/upstash.md and BENCHMARKS.md list them.
 */
import assert from "node:assert/strict";
import type { CompleteOutcome } from "../../src/core/store.ts";
import { createApp } from "../../src/hono/mod.ts";
import { mcpRoute } from "../../src/mcp/mod.ts";
import { ToolBoundary } from "../../src/mod.ts";
import { type RunEnd, TOOL_CALL_ID_META } from "../../src/harness/mod.ts";
import { MIN_FACT_BYTES } from "../../src/store/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { createFakeToolkit } from "../../src/testing/fakes.ts";
import { startSharedUpstashFixture, type UpstashFixture } from "../support/upstash_fixture.ts";

const READY: CompleteOutcome = {
  status: "READY",
  evidence: "EVIDENCE_FOUND",
  rawJson: '{"hits":["a"]}',
  agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"index","content":["a"]}',
};

/** The digest the boundary sends for `{"query":"disk"}`. */
const DIGEST = "Sw7iUIqNkCtuYkBFkLI-6KDkAgfC0u4VovCqblS6EKs";

/** One operation's bill: MONITOR lines (commands run) and REST requests. */
interface Bill {
  commands: string[];
  requests: number;
}

/** Runs `op` and returns what redis-server ran for it and how many requests reached Redis. */
async function bill(fixture: UpstashFixture, op: () => Promise<unknown>): Promise<Bill> {
  const stop = await fixture.monitor();
  fixture.endpoint.reset();
  await op();
  const lines = await stop();
  const commands = lines.map((line) => {
    const name = /\] "([^"]+)"/.exec(line)?.[1] ?? "?";
    return line.includes(" lua] ") ? name.toUpperCase() : `>${name.toUpperCase()}`;
  });
  return { commands, requests: fixture.endpoint.requests };
}

function beginRequest(runId: string, toolCallId: string) {
  return {
    runId,
    toolCallId,
    toolName: "search",
    requestJson: '{"query":"disk"}',
    requestDigest: DIGEST,
    attemptId: crypto.randomUUID(),
    ttlMs: 600_000,
    now: Date.now(),
  };
}

function startRequest(runId: string, perTool: Record<string, number> = {}) {
  const now = Date.now();
  return {
    runId,
    deadline: now + 600_000,
    budget: { calls: 50, perTool },
    ttlMs: 600_000,
    attemptId: crypto.randomUUID(),
    now,
  };
}

/**
 * Every operation once in a fresh run, after each script's first use (a fresh Redis answers the
 * first EVALSHA of a script with NOSCRIPT, and the client sends EVAL once).
 */
async function measureAll(fixture: UpstashFixture, store: UpstashStore) {
  // Warm every script: one whole run.
  const warm = "run-warm";
  assert.equal((await store.startRun(startRequest(warm))).ok, true);
  const w = beginRequest(warm, "call_w");
  assert.equal((await store.begin(w)).ok, true);
  const done = { runId: warm, toolCallId: "call_w", attemptId: w.attemptId, outcome: READY };
  assert.equal((await store.complete({ ...done, now: Date.now() })).ok, true);
  await store.get(warm, "call_w");
  await store.getRun(warm);
  await store.endRun({ runId: warm, now: Date.now() });
  const identities = [{ runId: warm, toolCallId: "call_w" }];
  await store.readFacts({ runId: warm, identities, maxFacts: 10, maxBytes: 10_000 });
  const calls = store as unknown as Partial<Record<"lookupCall" | "listCalls", unknown>>;
  const hasCalls = typeof calls.lookupCall === "function";
  if (hasCalls) {
    await store.lookupCall(warm, "call_w");
    await store.listCalls(warm);
  }

  const bills: Record<string, Bill> = {};
  const runId = "run-billed";
  bills.startRun = await bill(fixture, () => store.startRun(startRequest(runId)));
  bills["startRun, 3 tool budgets"] = await bill(
    fixture,
    () => store.startRun(startRequest("run-tools", { a: 1, b: 2, c: 3 })),
  );
  const first = beginRequest(runId, "call_1");
  bills["begin, first of a run"] = await bill(fixture, () => store.begin(first));
  const complete = (request: ReturnType<typeof beginRequest>) => () =>
    store.complete({
      runId,
      toolCallId: request.toolCallId,
      attemptId: request.attemptId,
      outcome: READY,
      now: Date.now(),
    });
  bills["complete, first of a run"] = await bill(fixture, complete(first));
  const second = beginRequest(runId, "call_2");
  bills["begin, steady"] = await bill(fixture, () => store.begin(second));
  bills["complete, steady"] = await bill(fixture, complete(second));
  bills["begin, resent (same attempt)"] = await bill(fixture, () => store.begin(second));
  bills["complete, resent (same attempt)"] = await bill(fixture, complete(second));
  bills["begin, duplicate"] = await bill(
    fixture,
    () => store.begin(beginRequest(runId, "call_2")),
  );
  bills.get = await bill(fixture, () => store.get(runId, "call_1"));
  bills.getRun = await bill(fixture, () => store.getRun(runId));
  if (hasCalls) {
    bills.lookupCall = await bill(fixture, () => store.lookupCall(runId, "call_1"));
    bills["lookupCall, never begun"] = await bill(
      fixture,
      () => store.lookupCall(runId, "call_none"),
    );
    bills["listCalls, 2 calls"] = await bill(fixture, () => store.listCalls(runId));
  }
  bills["endRun, first"] = await bill(fixture, () => store.endRun({ runId, now: Date.now() }));
  bills["endRun, again"] = await bill(fixture, () => store.endRun({ runId, now: Date.now() }));
  bills["readFacts, 2 calls"] = await bill(fixture, () =>
    store.readFacts({
      runId,
      identities: [{ runId, toolCallId: "call_1" }, { runId, toolCallId: "call_2" }],
      maxFacts: 10,
      maxBytes: 10_000,
    }));
  return bills;
}

Deno.test("UpstashStore: billed commands per operation, one request each; an invoke costs at most 9, the first of a run at most 11", async () => {
  const fixture = await startSharedUpstashFixture();
  try {
    const store = new UpstashStore({ redis: fixture.createRedis({ enableAutoPipelining: false }) });
    const bills = await measureAll(fixture, store);
    const billed: Record<string, number> = {};
    for (const [name, { commands, requests }] of Object.entries(bills)) {
      billed[name] = commands.length;
      // One request per operation (listCalls: the run, then its records), and no EVAL; startRun
      // sends its script and the run index's in one pipeline request.
      assert.equal(requests, name.startsWith("listCalls") ? 2 : 1, `${name}: requests`);
      assert.equal(
        commands.filter((c) => c.startsWith(">")).length,
        name.startsWith("startRun") ? 2 : requests,
        `${name}: ${commands.join(" ")}`,
      );
      assert.ok(commands.every((c) => c !== ">EVAL"), `${name}: ${commands.join(" ")}`);
    }
    const invoke = {
      "invoke, first of a run": billed["begin, first of a run"]! +
        billed["complete, first of a run"]!,
      "invoke, steady": billed["begin, steady"]! + billed["complete, steady"]!,
    };
    console.log(`BILLED ${JSON.stringify({ ...billed, ...invoke })}`);
    assert.ok(invoke["invoke, steady"] <= 9, `steady invoke: ${invoke["invoke, steady"]}`);
    assert.ok(invoke["invoke, first of a run"] <= 11, `first: ${invoke["invoke, first of a run"]}`);
    // What each script runs, command by command (">" marks the request itself).
    const ran = Object.fromEntries(
      Object.entries(bills).map(([name, { commands }]) => [name, commands.join(" ")]),
    );
    assert.deepEqual(ran, EXPECTED);
  } finally {
    await fixture.stop();
  }
});

/**
 * What indexing a run for listRuns costs: Redis's clock, the expired ones, its two entries, and
 * the indexes' expiry pushed out to the run's.
 */
const INDEX_RUN = ">EVALSHA TIME ZRANGEBYSCORE ZADD ZADD PEXPIRETIME PEXPIREAT PEXPIREAT";

/** The designed cost of every operation (docs/upstash.md, "Billed commands per operation"). */
const EXPECTED: Record<string, string> = {
  startRun: `${INDEX_RUN} >EVALSHA HGET RPUSH PEXPIRE PEXPIRETIME HSET PEXPIREAT`,
  "startRun, 3 tool budgets": `${INDEX_RUN} >EVALSHA HGET RPUSH PEXPIRE PEXPIRETIME HSET PEXPIREAT`,
  "begin, first of a run": ">EVALSHA HMGET HSET PEXPIRE HSET",
  "complete, first of a run": ">EVALSHA HMGET RPUSHX HSET",
  "begin, steady": ">EVALSHA HMGET HSET PEXPIRE HSET",
  "complete, steady": ">EVALSHA HMGET RPUSHX HSET",
  "begin, resent (same attempt)": ">EVALSHA HMGET HMGET",
  "complete, resent (same attempt)": ">EVALSHA HMGET",
  "begin, duplicate": ">EVALSHA HMGET",
  get: ">EVALSHA HMGET",
  // A fixed field list, then the b: and u: fields of the tools the run names: no c: field.
  getRun: ">EVALSHA HMGET HMGET",
  lookupCall: ">EVALSHA HMGET HMGET",
  "lookupCall, never begun": ">EVALSHA HMGET",
  "listCalls, 2 calls": ">EVALSHA HGETALL >EVALSHA HMGET HMGET",
  "endRun, first": ">EVALSHA HMGET HMGET LLEN LRANGE HSET",
  "endRun, again": ">EVALSHA HMGET HMGET LRANGE",
  "readFacts, 2 calls": ">EVALSHA HMGET HMGET",
};

/** A proof of the right shape: the store checks the shape only. */
const PROOF = { hash: "h".repeat(43), sig: "s".repeat(86), keyId: "key-1" };

/** The designed cost of what a ledger key adds (docs/upstash.md, docs/proof.md). */
const EXPECTED_LEDGER: Record<string, string> = {
  // One more command: the proof hash also goes into the run hash, for the seal.
  "complete with a proof": ">EVALSHA HMGET RPUSHX HSET HSET",
  // The whole run hash (every begun call and its proof hash) only while the run has no seal.
  "endRun with seal, first": ">EVALSHA HMGET HMGET HGETALL LLEN LRANGE HSET",
  "sealRun": ">EVALSHA EXISTS HSETNX",
  "endRun with seal, again": ">EVALSHA HMGET HMGET LRANGE",
  "exportRun, 2 calls": ">EVALSHA HGETALL >EVALSHA HMGET HMGET",
};

Deno.test("UpstashStore: with a ledger key a complete costs one more command, an end one more request", async () => {
  const fixture = await startSharedUpstashFixture();
  try {
    const store = new UpstashStore({ redis: fixture.createRedis({ enableAutoPipelining: false }) });
    // Warm every script once.
    await measureAll(fixture, store);
    const warm = "run-ledger-warm";
    await store.startRun(startRequest(warm));
    await store.endRun({ runId: warm, now: Date.now(), seal: true });
    await store.sealRun({ runId: warm, sealJson: "{}" });
    await store.exportRun("run-warm"); // a run with a call: both scripts

    const runId = "run-ledger";
    assert.equal((await store.startRun(startRequest(runId))).ok, true);
    const bills: Record<string, Bill> = {};
    const ids = ["call_1", "call_2"];
    for (const id of ids) {
      const begun = beginRequest(runId, id);
      assert.equal((await store.begin(begun)).ok, true);
      const complete = () =>
        store.complete({
          runId,
          toolCallId: id,
          attemptId: begun.attemptId,
          outcome: READY,
          now: Date.now(),
          proof: PROOF,
        });
      bills["complete with a proof"] = await bill(fixture, complete);
    }
    bills["endRun with seal, first"] = await bill(
      fixture,
      () => store.endRun({ runId, now: Date.now(), seal: true }),
    );
    bills.sealRun = await bill(fixture, () => store.sealRun({ runId, sealJson: '{"s":1}' }));
    bills["endRun with seal, again"] = await bill(
      fixture,
      () => store.endRun({ runId, now: Date.now(), seal: true }),
    );
    bills["exportRun, 2 calls"] = await bill(fixture, () => store.exportRun(runId));
    const ran = Object.fromEntries(
      Object.entries(bills).map(([name, { commands }]) => [name, commands.join(" ")]),
    );
    console.log(`BILLED LEDGER ${JSON.stringify(ran)}`);
    assert.deepEqual(ran, EXPECTED_LEDGER);
    assert.equal(bills["complete with a proof"]!.requests, 1);
    assert.equal(bills.sealRun!.requests, 1);
    assert.equal(bills["exportRun, 2 calls"]!.requests, 2);
  } finally {
    await fixture.stop();
  }
});

Deno.test("UpstashStore: an app instance's first call of a run costs 2 requests, begin and complete, over HTTP and over MCP", async () => {
  const fixture = await startSharedUpstashFixture();
  try {
    const store = new UpstashStore({ redis: fixture.createRedis({ enableAutoPipelining: false }) });
    const agent = "agent-token-0123456789abcdef";
    const harness = "harness-token-0123456789abcdef";
    const app = () => {
      const kit = createFakeToolkit();
      const boundary = new ToolBoundary({ store, tools: kit.tools });
      const secret = "server-secret-0123456789abcdef-0123";
      return createApp({
        boundary,
        agentToken: agent,
        harnessToken: harness,
        secret,
        mcp: mcpRoute(),
      });
    };
    // The run is started through one app; every call below is an instance's first of it.
    const started = await app().request("http://tb.test/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${harness}`, "content-type": "application/json" },
      body: JSON.stringify({ ttlMs: 600_000 }),
    });
    assert.equal(started.status, 201);
    const { runId, agentToken } = await started.json();
    const input = { query: "disk" };
    const sends: Record<string, (token: string) => Response | Promise<Response>> = {
      http: (token) =>
        app().request(`http://tb.test/v1/runs/${runId}/tool-calls`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            toolCallId: crypto.randomUUID(),
            toolName: "fake_success",
            input,
          }),
        }),
      mcp: (token) =>
        app().request(`http://tb.test/v1/runs/${runId}/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {
              name: "fake_success",
              arguments: input,
              _meta: { [TOOL_CALL_ID_META]: crypto.randomUUID() },
            },
          }),
        }),
    };
    // Redis loads each script on its first use (NOSCRIPT, then EVAL): not what is measured.
    assert.equal((await sends.http!(agent)).status, 200);
    const requests: Record<string, number> = {};
    for (const [route, send] of Object.entries(sends)) {
      for (const [name, token] of [["run token", agentToken], ["agent token", agent]]) {
        fixture.endpoint.reset();
        const res = await send(token);
        const body = await res.json();
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(
          body.status ?? body.result?.structuredContent?.evidence,
          route === "http" ? "READY" : "EVIDENCE_FOUND",
        );
        requests[`${route}, ${name}`] = fixture.endpoint.requests;
        const names = fixture.endpoint.commands().map((command) => command[0]?.toUpperCase());
        assert.deepEqual(names, ["EVALSHA", "EVALSHA"], `${route}, ${name}: ${names}`);
      }
    }
    console.log(`REQUESTS ${JSON.stringify(requests)}`);
    assert.deepEqual(requests, {
      "http, run token": 2,
      "http, agent token": 2,
      "mcp, run token": 2,
      "mcp, agent token": 2,
    });
  } finally {
    await fixture.stop();
  }
});

Deno.test("UpstashStore: an end reads no record once the facts can take no more: 100 and 1,000 READY calls bill the same", async () => {
  const fixture = await startSharedUpstashFixture();
  try {
    const store = new UpstashStore({ redis: fixture.createRedis({ enableAutoPipelining: false }) });
    const batched = new UpstashStore({ redis: fixture.createRedis() });
    /** A run of `count` READY calls, begun and completed in batches. */
    const runOf = async (runId: string, count: number) => {
      const started = await batched.startRun({
        ...startRequest(runId),
        budget: { calls: count, perTool: {} },
      });
      assert.equal(started.ok, true);
      const ids = Array.from({ length: count }, (_, i) => `call_${i}`);
      for (let at = 0; at < count; at += 200) {
        const slice = ids.slice(at, at + 200).map((id) => beginRequest(runId, id));
        const begun = await Promise.all(slice.map((request) => batched.begin(request)));
        assert.ok(begun.every((b) => b.ok));
        const done: { ok: boolean }[] = await Promise.all(slice.map((request) =>
          batched.complete({
            runId,
            toolCallId: request.toolCallId,
            attemptId: request.attemptId,
            outcome: READY,
            now: Date.now(),
          })
        ));
        assert.ok(done.every((d) => d.ok));
      }
    };
    // Ten facts fill factBytes: fewer bytes are left than the smallest agent result.
    const size = new TextEncoder().encode(READY.agentResultJson).length;
    const boundary = new ToolBoundary({
      store,
      tools: [],
      limits: { factCount: 1_000, factBytes: 10 * size + MIN_FACT_BYTES - 1 },
    });
    await runOf("run-ends-warm", 20); // every script of an end used once
    await boundary.endRunReport("run-ends-warm");
    const bills: Bill[] = [];
    for (const count of [100, 1_000]) {
      const runId = `run-ends-${count}`;
      await runOf(runId, count);
      let report: RunEnd | undefined;
      bills.push(await bill(fixture, async () => (report = await boundary.endRunReport(runId))));
      assert.deepEqual(
        report!.facts.map((fact) => fact.toolCallId),
        Array.from({ length: 10 }, (_, i) => `call_${i}`),
      );
      assert.equal(report!.omitted, count - 10);
    }
    console.log(`BILLED END ${JSON.stringify(bills.map((b) => b.commands.length))}`);
    const [hundred, thousand] = bills.map((b) => b.commands.join(" "));
    // The end (walking the index once), the ten records that became facts, and a count of the
    // rest from the index's marks.
    const expected = [
      ">EVALSHA HMGET HMGET LLEN LRANGE HSET",
      `>EVALSHA${" HMGET".repeat(10)}`,
      ">EVALSHA HMGET HMGET LRANGE",
    ].join(" ");
    assert.equal(hundred, expected);
    assert.equal(thousand, expected);
    assert.deepEqual(bills.map((b) => b.requests), [3, 3]);
  } finally {
    await fixture.stop();
  }
});

/**
 * The designed cost of calls with a cost (docs/upstash.md, "Cost budgets"): begin reserves in
 * the writes it makes anyway, complete settles in its progress entry, and only a spend other
 * than the reservation adds a command (`HINCRBY` of the run's `adjust`: an excess before the
 * record is written, a refund after it). A run read adds an `LRANGE` of the progress list once
 * the run reserved a cost.
 */
const EXPECTED_COST: Record<string, string> = {
  "begin, no cost": ">EVALSHA HMGET HSET PEXPIRE HSET",
  "complete, no cost": ">EVALSHA HMGET RPUSHX HSET",
  "begin, with a cost": ">EVALSHA HMGET HSET PEXPIRE HSET",
  "complete, spent == reserved": ">EVALSHA HMGET RPUSHX HSET",
  "complete, spent < reserved": ">EVALSHA HMGET RPUSHX HSET HINCRBY",
  "complete, spent > reserved": ">EVALSHA HMGET RPUSHX HINCRBY HSET",
  "begin, BUDGET_EXHAUSTED": ">EVALSHA HMGET",
  // No tool called yet, so no second HMGET; no reservation, so no LRANGE.
  "getRun, cost budget, nothing reserved": ">EVALSHA HMGET",
  "getRun, with reservations": ">EVALSHA HMGET HMGET LRANGE",
};

Deno.test("UpstashStore: a call with a cost bills as one without, one command more when it spends other than it reserved", async () => {
  const fixture = await startSharedUpstashFixture();
  try {
    const store = new UpstashStore({ redis: fixture.createRedis({ enableAutoPipelining: false }) });
    await measureAll(fixture, store); // every script used once
    const runId = "run-costed";
    const started = await store.startRun({
      ...startRequest(runId),
      budget: { calls: 50, perTool: {}, cost: 30 },
    });
    assert.ok(started.ok);
    assert.deepEqual(started.run.cost, { reserved: 0, spent: 0 });
    const bills: Record<string, Bill> = {};
    bills["getRun, cost budget, nothing reserved"] = await bill(fixture, () => store.getRun(runId));
    /** Begins `toolCallId` (with `cost` when given) and completes it with `spent` when given. */
    const invoke = async (toolCallId: string, name: string, cost?: number, spent?: number) => {
      const begun = { ...beginRequest(runId, toolCallId), ...(cost === undefined ? {} : { cost }) };
      let began: Awaited<ReturnType<UpstashStore["begin"]>> | undefined;
      bills[`begin, ${name}`] ??= await bill(
        fixture,
        async () => (began = await store.begin(begun)),
      );
      if (began === undefined) began = await store.begin(begun);
      assert.ok(began.ok);
      const complete = () =>
        store.complete({
          runId,
          toolCallId,
          attemptId: begun.attemptId,
          outcome: READY,
          now: Date.now(),
          ...(spent === undefined ? {} : { spent }),
        });
      return complete;
    };
    bills["complete, no cost"] = await bill(fixture, await invoke("call_free", "no cost"));
    bills["complete, spent == reserved"] = await bill(
      fixture,
      await invoke("call_even", "with a cost", 5),
    );
    bills["complete, spent < reserved"] = await bill(
      fixture,
      await invoke("call_under", "with a cost", 5, 2),
    );
    bills["complete, spent > reserved"] = await bill(
      fixture,
      await invoke("call_over", "with a cost", 5, 9),
    );
    // 5 + 2 + 9 spent: 16 of 30; 15 more does not fit.
    assert.deepEqual((await store.getRun(runId))?.cost, { reserved: 0, spent: 16 });
    bills["begin, BUDGET_EXHAUSTED"] = await bill(fixture, async () => {
      const refused = await store.begin({ ...beginRequest(runId, "call_big"), cost: 15 });
      assert.deepEqual(refused, { ok: false, code: "BUDGET_EXHAUSTED" });
    });
    bills["getRun, with reservations"] = await bill(fixture, () => store.getRun(runId));
    const ran = Object.fromEntries(
      Object.entries(bills).map(([name, { commands }]) => [name, commands.join(" ")]),
    );
    const billed = Object.fromEntries(
      Object.entries(bills).map(([name, { commands }]) => [name, commands.length]),
    );
    console.log(`BILLED COST ${JSON.stringify(billed)}`);
    assert.deepEqual(ran, EXPECTED_COST);
    for (const [name, { requests }] of Object.entries(bills)) assert.equal(requests, 1, name);
    // An invoke without a cost bills exactly as before; with one, at most one command more.
    const plain = billed["begin, no cost"]! + billed["complete, no cost"]!;
    assert.equal(plain, 9);
    for (const kind of ["spent == reserved", "spent < reserved", "spent > reserved"]) {
      const costed = billed["begin, with a cost"]! + billed[`complete, ${kind}`]!;
      assert.ok(costed <= plain + 1, `${kind}: ${costed}`);
    }
  } finally {
    await fixture.stop();
  }
});
