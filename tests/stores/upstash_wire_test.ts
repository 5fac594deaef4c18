/**
 * The reply format of the Upstash store's scripts: one JSON array per reply, nothing the caller
 * already knows, and every stored byte back exactly, whatever the client's reply options. Through
 * the real `@upstash/redis` client and the store's own `UpstashRestClient`, over HTTP, against a
 * real redis-server.
 */
import assert from "node:assert/strict";
import type { CompleteOutcome, StoredRecord } from "../../src/core/store.ts";
import { type UpstashRedisClient, UpstashStore } from "../../src/upstash/mod.ts";
import { startStoreRun } from "../support/runs.ts";
import { startSharedUpstashFixture, type UpstashFixture } from "../support/upstash_fixture.ts";

/**
 * The clients the store takes: `@upstash/redis` with each option a user may set that changes what
 * a reply looks like to the store, and the store's own `UpstashRestClient`.
 */
const CLIENT_CONFIGS: { name: string; create: (fixture: UpstashFixture) => UpstashRedisClient }[] =
  [
    { name: "defaults", create: (fixture) => fixture.createRedis() },
    {
      name: "automaticDeserialization off",
      create: (fixture) => fixture.createRedis({ automaticDeserialization: false }),
    },
    {
      name: "automaticDeserialization and responseEncoding off",
      create: (fixture) =>
        fixture.createRedis({ automaticDeserialization: false, responseEncoding: false }),
    },
    { name: "UpstashRestClient", create: (fixture) => fixture.createRest() },
  ];

/** Strings that JSON, cjson, base64 or UTF-8 handling could change on the way out. */
const AWKWARD = [
  "123",
  "true",
  "null",
  "007",
  "1e3",
  '{"a":1}',
  "12345678901234567890",
  "naïve 日本語 ελληνικά",
  "😀👩‍👩‍👧 emoji",
  '{"text":"\\u0000 \\ud800 \\udfff \\n"}',
  'slash / and \\/ and back\\slash "quoted"',
  "control \u0001\u0007\t\n\r\u001f and del \u007f",
  "nul \u0000 inside",
  "separators \u2028 \u2029 and bom \ufeff",
  "~",
  "!",
  "OK",
  "",
  " ",
  "[]",
  "{}",
];

/** Records what the client hands the store, with the client's options as they are. */
function recording(
  redis: UpstashRedisClient,
): { client: UpstashRedisClient; replies: unknown[] } {
  const replies: unknown[] = [];
  return {
    replies,
    client: {
      evalsha: async (sha, keys, args) => {
        const reply = await redis.evalsha(sha, keys, args);
        replies.push(reply);
        return reply;
      },
      eval: async (script, keys, args) => {
        const reply = await redis.eval(script, keys, args);
        replies.push(reply);
        return reply;
      },
    },
  };
}

Deno.test("UpstashStore wire: every reply is one JSON array of strings, and begin and complete send back only what the caller lacks", async () => {
  const fixture = await startSharedUpstashFixture();
  try {
    const raw = fixture.createRedis({ automaticDeserialization: false });
    const { client, replies } = recording(raw);
    const store = new UpstashStore({ redis: client });
    const runId = "run_wire";
    const run = await startStoreRun(store, runId, {
      calls: Number.MAX_SAFE_INTEGER,
      ttlMs: 600_000,
    });
    const rawJson = JSON.stringify({ hits: ["x".repeat(2_000)] });
    const agentResultJson = JSON.stringify({ evidence: "NO_EVIDENCE", scope: "s", content: [] });
    const requestJson = '{"query":"disk"}';
    const attemptId = "attempt-wire";
    const now = Date.now();
    const last = () => replies[replies.length - 1];

    const begun = await store.begin({
      runId,
      toolCallId: "call_1",
      toolName: "search",
      requestJson,
      requestDigest: "test-digest",
      attemptId,
      ttlMs: 60_000,
      now,
    });
    assert.ok(begun.ok);
    assert.equal(
      last(),
      `["OK","${run.deadline}","${run.startedAt}","1"]`,
      "a new record: the caller knows every field but its position; the run's deadline and start it may not",
    );
    assert.deepEqual(begun.run, { deadline: run.deadline, startedAt: run.startedAt });

    const outcome: CompleteOutcome = {
      status: "READY",
      evidence: "NO_EVIDENCE",
      rawJson,
      agentResultJson,
    };
    const request = { runId, toolCallId: "call_1", attemptId, outcome, now: now + 5 };
    const done = await store.complete(request);
    assert.ok(done.ok);
    assert.deepEqual(JSON.parse(last() as string), [
      "OK",
      "search",
      requestJson,
      String(now),
      String(now + 60_000),
      "1",
      false, // the call's reservation: none, begun without a cost
    ], "complete sends back neither the payloads nor anything else the request carries");
    const stored = await store.get(runId, "call_1");
    assert.deepEqual(done.record, stored, "the merged record is the stored one");

    // A retry of the same complete: the stored updatedAt, not the retry's clock.
    const again = await store.complete({ ...request, now: now + 999 });
    assert.deepEqual(again, { ok: true, record: stored });
    // The stored updatedAt and the stored proof (false: none).
    assert.equal(JSON.parse(last() as string).length, 9);

    // Refusals are one code.
    assert.deepEqual(await store.complete({ ...request, attemptId: "other" }), {
      ok: false,
      code: "ILLEGAL_TRANSITION",
    });
    assert.equal(last(), '["ILLEGAL_TRANSITION"]');
    assert.equal(await store.get(runId, "call_none"), null);
    assert.equal(last(), "[]");

    const ended = await store.endRun({ runId, now: Date.now() });
    assert.ok(ended.ok);
    await store.readFacts({
      runId,
      identities: [{ runId, toolCallId: "call_1" }],
      maxFacts: 10,
      maxBytes: 10_000,
    });
    for (const reply of replies) {
      assert.equal(typeof reply, "string");
      const items = JSON.parse(reply as string);
      assert.ok(Array.isArray(items) && items.every((i) => typeof i === "string" || i === false));
    }
  } finally {
    await fixture.stop();
  }
});

Deno.test("UpstashStore wire: stored bytes come back exactly (UTF-8, escapes, control characters, JSON look-alikes, big numbers) with any client reply options", async () => {
  const fixture = await startSharedUpstashFixture();
  try {
    for (const config of CLIENT_CONFIGS) {
      const store = new UpstashStore({ redis: config.create(fixture), prefix: "w" });
      const runId = `run_${crypto.randomUUID().slice(0, 8)}`;
      const perTool: Record<string, number> = {};
      AWKWARD.forEach((text, i) => (perTool[text] = 1_234_567_890_123 + i));
      const run = await startStoreRun(store, runId, {
        calls: Number.MAX_SAFE_INTEGER,
        perTool,
        ttlMs: 600_000,
      });
      assert.deepEqual(run.budget, { calls: Number.MAX_SAFE_INTEGER, perTool }, config.name);
      assert.deepEqual(await store.getRun(runId), run, config.name);

      const toolCallIds: string[] = [];
      for (const [i, text] of AWKWARD.entries()) {
        const toolCallId = i === 6 ? text : `call_${i}`; // the 20-digit ID is a valid one
        toolCallIds.push(toolCallId);
        const begin = {
          runId,
          toolCallId,
          toolName: text,
          requestJson: text,
          requestDigest: "test-digest",
          attemptId: `${text}#${i}`,
          ttlMs: 600_000,
          now: Date.now(),
        };
        const begun = await store.begin(begin);
        assert.ok(begun.ok, `${config.name}: ${JSON.stringify(text)}`);
        // A repeat of the same begin reads the record back from Redis.
        assert.deepEqual(
          await store.begin(begin),
          begun,
          `${config.name}: ${JSON.stringify(text)}`,
        );
        const outcome: CompleteOutcome = i % 2 === 0
          ? { status: "READY", evidence: "NO_EVIDENCE", rawJson: text, agentResultJson: text }
          : { status: "ERROR", errorCode: "PROJECTION_FAILED", rawJson: text };
        const done = await store.complete({
          runId,
          toolCallId,
          attemptId: begin.attemptId,
          outcome,
          now: Date.now(),
        });
        assert.ok(done.ok, `${config.name}: ${JSON.stringify(text)}`);
        const stored = await store.get(runId, toolCallId);
        const expected: Partial<StoredRecord> = {
          runId,
          toolCallId,
          toolName: text,
          requestJson: text,
          rawJson: text,
          agentResultJson: i % 2 === 0 ? text : null,
          attemptId: begin.attemptId,
        };
        for (const [key, value] of Object.entries(expected)) {
          const field = key as keyof StoredRecord;
          assert.strictEqual(stored?.[field], value, `${config.name}: ${key} of ${text}`);
        }
        assert.deepEqual(done.record, stored, `${config.name}: ${JSON.stringify(text)}`);
      }
      const ended = await store.endRun({ runId, now: Date.now() });
      assert.ok(ended.ok);
      assert.deepEqual(ended.toolCallIds, toolCallIds, config.name);
      assert.deepEqual(ended.run.budget.perTool, perTool, config.name);
      assert.equal(ended.run.used.calls, AWKWARD.length);
      const facts = await store.readFacts({
        runId,
        identities: toolCallIds.map((toolCallId) => ({ runId, toolCallId })),
        maxFacts: 1_000,
        maxBytes: 1_000_000,
      });
      const ready = AWKWARD.filter((_, i) => i % 2 === 0);
      assert.deepEqual(facts.rows.map((r) => r.agentResultJson), ready, config.name);
      assert.deepEqual(facts.rows.map((r) => r.toolName), ready, config.name);
      assert.equal(facts.omitted, 0);
    }
  } finally {
    await fixture.stop();
  }
});
