/**
 * A run start sent again: `POST /v1/runs` with an `Idempotency-Key` is safe to repeat after an
 * answer the harness never got (a 503 from a start that created the run, a dropped response): the
 * repeat answers 201 with the same run and the same agent token, on both stores. The key with
 * another body is another start (409); without a key, a repeat is RUN_ALREADY_EXISTS as ever.
 */
import assert from "node:assert/strict";
import { type Store, ToolBoundary } from "../../src/mod.ts";
import { createApp } from "../../src/http/mod.ts";
import { MemoryStore } from "../../src/stores/memory.ts";
import { UpstashStore } from "../../src/stores/upstash/mod.ts";
import { createFakeToolkit } from "../../src/testing/fakes.ts";
import { STORES, uniqueId } from "../support/stores.ts";
import { withSharedUpstashFixture } from "../support/upstash_fixture.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const SECRET = "server-secret-0123456789abcdef-0123";
const BASE = "http://tb.test";

/** `store`, whose first start writes the run and then throws, as a lost answer looks. */
function losingFirstStart(store: Store): Store {
  let starts = 0;
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key !== "startRun") return typeof value === "function" ? value.bind(target) : value;
      return async (request: unknown) => {
        const answer = await (value as (r: unknown) => Promise<unknown>).call(target, request);
        if (starts++ === 0) throw new Error("answer lost");
        return answer;
      };
    },
  });
}

/** An app over `store` that does not try a failed start again itself (`storeRetryMs: 0`). */
function serve(store: Store) {
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({ store, tools: kit.tools, storeRetryMs: 0 });
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS, secret: SECRET });
  const start = async (body: unknown, key?: string) => {
    const res = await app.request(`${BASE}/v1/runs`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${HARNESS}`,
        "content-type": "application/json",
        ...(key === undefined ? {} : { "idempotency-key": key }),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const toolCall = async (runId: string, token: string, toolCallId: string) => {
    const res = await app.request(`${BASE}/v1/runs/${runId}/tool-calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ toolCallId, toolName: "fake_success", input: { query: "disk" } }),
    });
    return res.status;
  };
  return { boundary, start, toolCall };
}

/** The start was answered 503 but created the run: the same key again answers it. */
async function checkRepeat(app: ReturnType<typeof serve>, store: Store, body: object) {
  const key = crypto.randomUUID();
  const lost = await app.start(body, key);
  assert.deepEqual([lost.status, lost.body.code], [503, "STORE_UNAVAILABLE"]);
  const again = await app.start(body, key);
  assert.equal(again.status, 201, JSON.stringify(again.body));
  const { runId, agentToken } = again.body;
  const state = await store.getRun(runId);
  assert.deepEqual(
    [state?.runId, state?.startedAt, state?.deadline],
    [runId, again.body.startedAt, again.body.deadline],
  );
  // Every repeat: the same run, the same token, which works on it.
  assert.deepEqual(await app.start(body, key), again);
  assert.equal(await app.toolCall(runId, agentToken, "call_1"), 200);
  // The key with another body is another start of the same run ID: refused.
  const other = await app.start({ ...body, budget: { calls: 7 } }, key);
  assert.deepEqual([other.status, other.body.code], [409, "RUN_ALREADY_EXISTS"]);
  assert.equal((await store.getRun(runId))?.used.calls, 1);
  return again.body;
}

for (const { name, open } of STORES) {
  Deno.test(`${name}: POST /v1/runs sent again with its Idempotency-Key after a 503 answers 201 with the same run and agent token`, async () => {
    const opened = await open();
    try {
      const store = losingFirstStart(opened.store);
      // A run ID derived from the key: a generated one's form, the same on every repeat.
      const derived = await checkRepeat(serve(store), store, { ttlMs: 60_000 });
      assert.match(
        derived.runId,
        /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      const named = await checkRepeat(serve(losingFirstStart(opened.store)), opened.store, {
        runId: uniqueId("run"),
        ttlMs: 60_000,
      });
      assert.match(named.runId, /^run_/);
    } finally {
      await opened.close();
    }
  });

  Deno.test(`${name}: POST /v1/runs sent again without an Idempotency-Key after a 503 is RUN_ALREADY_EXISTS`, async () => {
    const opened = await open();
    try {
      const store = losingFirstStart(opened.store);
      const app = serve(store);
      const body = { runId: uniqueId("run"), ttlMs: 60_000 };
      assert.equal((await app.start(body)).status, 503);
      const again = await app.start(body);
      assert.deepEqual([again.status, again.body.code], [409, "RUN_ALREADY_EXISTS"]);
    } finally {
      await opened.close();
    }
  });
}

Deno.test("POST /v1/runs refuses an Idempotency-Key that is not 1 to 255 visible ASCII characters: 400", async () => {
  const app = serve(new MemoryStore());
  for (const key of ["a b", "x".repeat(256), "caf\u00e9", "\t"]) {
    const res = await app.start({ ttlMs: 60_000 }, key);
    assert.deepEqual([res.status, res.body.code], [400, "INVALID_REQUEST"], JSON.stringify(key));
  }
  assert.equal((await app.start({ ttlMs: 60_000 }, "x".repeat(255))).status, 201);
});

Deno.test("UpstashStore: a start whose REST answer was dropped after it ran answers its run to the same Idempotency-Key", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis({ retry: false }) });
    const app = serve(store);
    // Redis loads each script on its first use: a start before, so the next is one request.
    assert.equal((await app.start({ ttlMs: 60_000 })).status, 201);
    const key = crypto.randomUUID();
    // Runs the start's request and drops its answer, and those of every resend of the
    // transport's own, until the start fails.
    fixture.endpoint.dropNext(10);
    const lost = await app.start({ ttlMs: 60_000 }, key);
    assert.deepEqual([lost.status, lost.body.code], [503, "STORE_UNAVAILABLE"]);
    fixture.endpoint.dropNext(0);
    const again = await app.start({ ttlMs: 60_000 }, key);
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal((await store.getRun(again.body.runId))?.startedAt, again.body.startedAt);
    assert.equal(await app.toolCall(again.body.runId, again.body.agentToken, "call_1"), 200);
  });
});
