/**
 * Run tokens are bound to the run instance they were issued for: once a run's state is gone and
 * a run is started again under the same ID, the earlier run's token is FORBIDDEN on the new run's
 * tool-call and MCP routes, on both stores. Tokens with forged claims are refused.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../src/mod.ts";
import type { Store } from "../../src/core/store.ts";
import { createApp } from "../../src/http/mod.ts";
import { TOOL_CALL_ID_META } from "../../src/mod.ts";
import { Signer, signRunToken } from "../../src/http/run_token.ts";
import { MemoryStore } from "../../src/stores/memory.ts";
import { UpstashStore } from "../../src/stores/upstash/mod.ts";
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
function serve(store: Store) {
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({ store, tools: kit.tools, clock });
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS, secret: SECRET });
  const startRun = async (runId: string) =>
    await startHttpRun(app.request, BASE, HARNESS, { runId, ttlMs: 600_000 }) as {
      runId: string;
      startedAt: number;
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

/**
 * Starts run X, restarts it under the same ID with `restart` (which returns the app that then
 * serves it), and checks the old token against the new run.
 */
async function checkRestart(
  first: ReturnType<typeof serve>,
  restart: (runId: string) => Promise<ReturnType<typeof serve>>,
) {
  const runId = uniqueId("run");
  const old = await first.startRun(runId);
  assert.equal((await first.toolCall(runId, old.agentToken, "call_before")).status, 200);
  now += 1;
  const second = await restart(runId);
  const fresh = await second.startRun(runId);
  const executed = () => second.kit.counts.execute.fake_success ?? 0;
  const executedBefore = executed();
  assert.equal(fresh.runId, runId);
  assert.notEqual(fresh.startedAt, old.startedAt);

  assert.deepEqual(await codeOf(await second.toolCall(runId, old.agentToken, "call_old")), [
    403,
    "FORBIDDEN",
  ]);
  const mcpRefused = await second.mcpCall(runId, old.agentToken, "mcp_old");
  assert.deepEqual(await codeOf(mcpRefused), [403, "FORBIDDEN"]);
  for (const id of ["call_old", "mcp_old"]) {
    assert.equal(await second.boundary.inspect(runId, id), null, id);
  }
  assert.equal(executed(), executedBefore);

  assert.equal((await second.toolCall(runId, fresh.agentToken, "call_new")).status, 200);
  const mcpAccepted = await second.mcpCall(runId, fresh.agentToken, "mcp_new");
  assert.equal(mcpAccepted.status, 200);
  assert.equal((await mcpAccepted.json()).result.structuredContent.evidence, "EVIDENCE_FOUND");
  assert.equal((await second.boundary.inspect(runId, "call_new"))?.status, "READY");
  assert.equal((await second.boundary.inspect(runId, "mcp_new"))?.status, "READY");
}

Deno.test("MemoryStore: a run token is FORBIDDEN on a run started again under its ID after a restart; the new run's token works", async () => {
  await checkRestart(serve(new MemoryStore()), () => Promise.resolve(serve(new MemoryStore())));
});

Deno.test("UpstashStore: a run token is FORBIDDEN on a run started again under its ID after its key was deleted; the new run's token works", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const first = serve(store);
    const gone = async (runId: string) => {
      const keys = store.keys(runId);
      await fixture.direct(["DEL", keys.run, keys.progress]);
      assert.equal(await store.getRun(runId), null);
    };
    // Restarted through the same app (its run cache takes the new run) and through another
    // app that reads the run from the store.
    await checkRestart(first, async (runId) => {
      await gone(runId);
      return first;
    });
    await checkRestart(first, async (runId) => {
      await gone(runId);
      return serve(store);
    });
  });
});

Deno.test("a run token with a forged or missing start is refused; one signed for another start is FORBIDDEN", async () => {
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
  // Genuinely signed for the same run ID and another start: another run instance.
  for (const startedAt of [run.startedAt - 1, run.startedAt + 1, 0]) {
    const token = await signRunToken(signer, { runId: run.runId, startedAt, exp });
    assert.deepEqual(await codeOf(await app.toolCall(run.runId, token, "c3")), [
      403,
      "FORBIDDEN",
    ]);
    assert.deepEqual(await codeOf(await app.mcpCall(run.runId, token, "c4")), [403, "FORBIDDEN"]);
  }
  for (const id of ["c1", "c2", "c3", "c4"]) {
    assert.equal(await app.boundary.inspect(run.runId, id), null);
  }
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
