/**
 * Run tokens are bound to the run instance they were issued for: once a run's state is gone and
 * a run is started again under the same ID, the earlier run's token is refused (RUN_NOT_FOUND)
 * on the new run's tool-call and MCP routes, on every app sharing the store, on both stores; the
 * new run's token and the static agent token work on every app. Tokens with forged claims are
 * refused.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../src/mod.ts";
import type { Store } from "../../src/core/store.ts";
import { createApp } from "../../src/hono/mod.ts";
import { mcpRoute } from "../../src/mcp/mod.ts";
import { TOOL_CALL_ID_META } from "../../src/harness/mod.ts";
import { Signer, signRunToken } from "../../src/hono/run_token.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { createFakeToolkit } from "../../src/testing/fakes.ts";
import { startHttpRun } from "../support/runs.ts";
import { uniqueId } from "../support/stores.ts";
import { withUpstashFixture } from "../support/upstash_fixture.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const SECRET = "server-secret-0123456789abcdef-0123";
const BASE = "http://tb.test";

/** The boundary's clock: the test moves it, so that a restart starts in another ms. */
let now = Date.now();
const clock = () => now;

/** An app over `store` with a server secret, and the requests the tests send it. */
function serve(store: Store, recordTtlMs?: number) {
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({
    store,
    tools: kit.tools,
    clock,
    ...(recordTtlMs === undefined ? {} : { recordTtlMs }),
  });
  const app = createApp({
    boundary,
    agentToken: AGENT,
    harnessToken: HARNESS,
    secret: SECRET,
    mcp: mcpRoute(),
  });
  const startRun = async (runId: string, ttlMs = 600_000) =>
    await startHttpRun(app.request, BASE, HARNESS, { runId, ttlMs }) as {
      runId: string;
      startedAt: number;
      deadline: number;
      agentToken: string;
    };
  const toolCall = (runId: string, token: string, toolCallId: string) =>
    app.request(`${BASE}/v1/runs/${runId}/tool-calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ toolCallId, toolName: "fake_success", input: { query: "disk" } }),
    });
  const mcpCall = (runId: string, token: string, toolCallId: string) =>
    app.request(`${BASE}/v1/runs/${runId}/mcp`, {
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
          arguments: { query: "disk" },
          _meta: { [TOOL_CALL_ID_META]: toolCallId },
        },
      }),
    });
  return { boundary, kit, startRun, toolCall, mcpCall };
}

const codeOf = async (res: Response) => [res.status, (await res.json()).code];

/** The code of a tool-call answer, or of an MCP `tools/call` answer (an error, 200). */
const mcpCodeOf = async (res: Response) => {
  const body = await res.json();
  return [res.status, body.code ?? body.result?.structuredContent?.code ?? "READY"];
};

/**
 * A store whose data can be lost at once, as Redis loses it to FLUSHALL: every app over it then
 * talks to an empty MemoryStore.
 */
function losableMemoryStore(): { store: Store; lose(): void } {
  let inner = new MemoryStore();
  const store = new Proxy({} as Store, {
    get(_target, key) {
      const value = Reflect.get(inner, key, inner);
      return typeof value === "function" ? value.bind(inner) : value;
    },
  });
  return { store, lose: () => void (inner = new MemoryStore()) };
}

/**
 * Starts run X through one app, serves calls of it on two apps over one store, loses the run
 * with `lose`, starts X again through the second app, and checks every token on both apps: the
 * earlier run's token is refused (its tool never runs, the new run's budget stays untouched),
 * the new run's token and the static agent token work.
 */
async function checkRestart(
  apps: [ReturnType<typeof serve>, ReturnType<typeof serve>],
  lose: (runId: string) => Promise<void>,
) {
  const [first, second] = apps;
  const runId = uniqueId("run");
  const old = await first.startRun(runId);
  // Both apps served the earlier run; the first signed its token and keeps its MAC, the second
  // kept nothing. Neither keeps the run: the store's begin refuses the instance a token names.
  assert.equal((await first.toolCall(runId, old.agentToken, "call_before_1")).status, 200);
  assert.equal((await second.toolCall(runId, AGENT, "call_before_2")).status, 200);
  now += 1;
  await lose(runId);
  const fresh = await second.startRun(runId);
  const executed = () =>
    apps.reduce((sum, app) => sum + (app.kit.counts.execute.fake_success ?? 0), 0);
  const executedBefore = executed();
  assert.equal(fresh.runId, runId);
  assert.notEqual(fresh.startedAt, old.startedAt);

  for (const [i, app] of apps.entries()) {
    assert.deepEqual(await codeOf(await app.toolCall(runId, old.agentToken, `call_old_${i}`)), [
      404,
      "RUN_NOT_FOUND",
    ]);
    const mcpRefused = await app.mcpCall(runId, old.agentToken, `mcp_old_${i}`);
    assert.deepEqual(await mcpCodeOf(mcpRefused), [200, "RUN_NOT_FOUND"]);
  }
  for (const id of ["call_old_0", "mcp_old_0", "call_old_1", "mcp_old_1"]) {
    assert.equal(await second.boundary.inspect(runId, id), null, id);
  }
  assert.equal(executed(), executedBefore);
  assert.deepEqual((await second.boundary.store.getRun(runId))?.used, { calls: 0, perTool: {} });

  for (const [i, app] of apps.entries()) {
    assert.equal((await app.toolCall(runId, fresh.agentToken, `call_new_${i}`)).status, 200);
    assert.equal((await app.toolCall(runId, AGENT, `call_static_${i}`)).status, 200);
    const mcpAccepted = await app.mcpCall(runId, fresh.agentToken, `mcp_new_${i}`);
    assert.deepEqual(await mcpCodeOf(mcpAccepted), [200, "READY"]);
    for (const id of [`call_new_${i}`, `call_static_${i}`, `mcp_new_${i}`]) {
      assert.equal((await second.boundary.inspect(runId, id))?.status, "READY", id);
    }
  }
  assert.equal((await second.boundary.store.getRun(runId))?.used.calls, 6);
}

Deno.test("MemoryStore: after the store lost a run started again under its ID, the earlier run's token is refused on every app; the new token and the static one work", async () => {
  const { store, lose } = losableMemoryStore();
  await checkRestart([serve(store), serve(store)], () => Promise.resolve(lose()));
});

Deno.test("UpstashStore: after Redis lost a run (FLUSHALL) started again under its ID, the earlier run's token is refused on every app; the new token and the static one work", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    await checkRestart([serve(store), serve(store)], async (runId) => {
      await fixture.direct(["FLUSHALL"]);
      assert.equal(await store.getRun(runId), null);
    });
  });
});

/**
 * Starts run X (a short run) through the first app and serves it on both, waits until its
 * state expired, starts X again through the second app, and checks the tokens on both apps.
 */
async function checkExpiredRestart(
  apps: ReturnType<typeof serve>[],
  expire: (runId: string) => Promise<void>,
) {
  const [first, second] = apps as [ReturnType<typeof serve>, ReturnType<typeof serve>];
  const runId = uniqueId("run");
  // Tokens lapse on the app's own clock: the boundary's starts from it.
  now = Math.max(now + 1, Date.now());
  const old = await first.startRun(runId, SHORT_RUN_MS);
  assert.equal((await first.toolCall(runId, old.agentToken, "call_before_1")).status, 200);
  assert.equal((await second.toolCall(runId, AGENT, "call_before_2")).status, 200);
  await expire(runId);
  // The earlier token lapses at its run's deadline, on the app's own clock.
  while (Date.now() <= old.deadline) await new Promise((r) => setTimeout(r, 25));
  const fresh = await second.startRun(runId);
  assert.notEqual(fresh.startedAt, old.startedAt);
  for (const [i, app] of apps.entries()) {
    // The earlier token expired with its run: not a token any more.
    assert.deepEqual(await codeOf(await app.toolCall(runId, old.agentToken, `call_old_${i}`)), [
      401,
      "UNAUTHENTICATED",
    ]);
    assert.equal((await app.toolCall(runId, fresh.agentToken, `call_new_${i}`)).status, 200);
    assert.equal((await app.toolCall(runId, AGENT, `call_static_${i}`)).status, 200);
    const mcpAccepted = await app.mcpCall(runId, fresh.agentToken, `mcp_new_${i}`);
    assert.deepEqual(await mcpCodeOf(mcpAccepted), [200, "READY"]);
  }
  assert.equal(await second.boundary.inspect(runId, "call_old_0"), null);
  assert.equal((await second.boundary.store.getRun(runId))?.used.calls, 6);
}

/** The length of the short runs: their state is gone this long plus a record TTL later. */
const SHORT_RUN_MS = 200;
/** The record TTL of the apps that serve short runs. */
const SHORT_RECORD_TTL_MS = 300;

Deno.test("MemoryStore: a run ID started again after it expired works on every app sharing the store: its token and the static one", async () => {
  const store = new MemoryStore({ clock });
  const apps = [serve(store, SHORT_RECORD_TTL_MS), serve(store, SHORT_RECORD_TTL_MS)] as const;
  await checkExpiredRestart([...apps], async (runId) => {
    now += SHORT_RUN_MS + SHORT_RECORD_TTL_MS + 1;
    assert.equal(await store.getRun(runId), null);
  });
});

Deno.test("UpstashStore: a run ID started again after it expired works on every app sharing the store: its token and the static one", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const apps = [serve(store, SHORT_RECORD_TTL_MS), serve(store, SHORT_RECORD_TTL_MS)] as const;
    await checkExpiredRestart([...apps], async (runId) => {
      // Redis expires the run on its own clock; the boundary's clock moves on with it.
      while (await store.getRun(runId) !== null) await new Promise((r) => setTimeout(r, 25));
      now += SHORT_RUN_MS + SHORT_RECORD_TTL_MS + 1;
    });
  });
});

Deno.test("a run token with a forged or missing start is refused; one signed for another start is RUN_NOT_FOUND", async () => {
  const app = serve(new MemoryStore());
  const run = await app.startRun(uniqueId("run"));
  const [prefix, , mac] = run.agentToken.split(".") as [string, string, string];
  const payload = (claims: Record<string, unknown>) =>
    btoa(JSON.stringify(claims)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const exp = now + 600_000;
  // The token's MAC with another start: the MAC no longer matches.
  const forged = `${prefix}.${payload({ runId: run.runId, startedAt: now - 1, exp })}.${mac}`;
  assert.deepEqual(await codeOf(await app.toolCall(run.runId, forged, "c1")), [
    401,
    "UNAUTHENTICATED",
  ]);
  // Genuinely signed, but with a start that is no number: not a run token.
  const signer = new Signer(SECRET);
  for (const startedAt of [undefined, String(run.startedAt), run.startedAt + 0.5, null]) {
    const signed = `${prefix}.${payload({ runId: run.runId, startedAt, exp })}`;
    const token = `${signed}.${await signer.mac(signed)}`;
    assert.deepEqual(await codeOf(await app.toolCall(run.runId, token, "c2")), [
      401,
      "UNAUTHENTICATED",
    ], String(startedAt));
  }
  // Genuinely signed for the same run ID and another start: another run instance, gone.
  for (const startedAt of [run.startedAt - 1, run.startedAt + 1, 0]) {
    const token = await signRunToken(signer, { runId: run.runId, startedAt, exp });
    assert.deepEqual(await codeOf(await app.toolCall(run.runId, token, "c3")), [
      404,
      "RUN_NOT_FOUND",
    ]);
    assert.deepEqual(await mcpCodeOf(await app.mcpCall(run.runId, token, "c4")), [
      200,
      "RUN_NOT_FOUND",
    ]);
  }
  // On another run's route, any run token is FORBIDDEN.
  const other = await app.startRun(uniqueId("run"));
  assert.deepEqual(await codeOf(await app.toolCall(other.runId, run.agentToken, "c5")), [
    403,
    "FORBIDDEN",
  ]);
  for (const id of ["c1", "c2", "c3", "c4"]) {
    assert.equal(await app.boundary.inspect(run.runId, id), null);
  }
  assert.equal(await app.boundary.inspect(other.runId, "c5"), null);
  assert.equal(app.kit.counts.execute.fake_success, undefined);
});

Deno.test("a run token of a run the store does not know answers as before: RUN_NOT_FOUND", async () => {
  const app = serve(new MemoryStore());
  const token = await signRunToken(new Signer(SECRET), {
    runId: "never-started",
    startedAt: now,
    exp: now + 60_000,
  });
  const res = await app.toolCall("never-started", token, "c1");
  assert.equal(res.status, 404);
  assert.equal((await res.json()).code, "RUN_NOT_FOUND");
});
