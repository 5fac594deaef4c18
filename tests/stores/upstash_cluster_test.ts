/**
 * Redis Cluster safety of UpstashStore: all keys of a run hash to one slot (CRC16 rule, checked
 * against known vectors and a cluster-mode redis-server's CLUSTER KEYSLOT), a whole run works on
 * a cluster-mode node (which refuses cross-slot KEYS), and no script touches an undeclared key.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../src/core/boundary.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { createFakeToolkit } from "../../src/testing/mod.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";

/** CRC16-CCITT (XMODEM), as Redis Cluster uses it. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

/** The slot of a key: the hash tag `{...}` if it has a non-empty one, else the whole key. */
function keySlot(key: string): number {
  const start = key.indexOf("{");
  if (start >= 0) {
    const end = key.indexOf("}", start + 1);
    if (end > start + 1) key = key.slice(start + 1, end);
  }
  return crc16(new TextEncoder().encode(key)) % 16384;
}

Deno.test("keySlot follows the Redis Cluster specification's vectors", () => {
  assert.equal(crc16(new TextEncoder().encode("123456789")), 0x31c3);
  assert.equal(keySlot("foo"), 12182);
  assert.equal(keySlot("bar"), 5061);
  assert.equal(keySlot("{user1000}.following"), keySlot("{user1000}.followers"));
  assert.equal(keySlot("foo{}{bar}"), keySlot("foo{}{bar}"), "empty tag: the whole key");
  assert.notEqual(keySlot("foo{}{bar}"), keySlot("bar"));
});

Deno.test("UpstashStore on a cluster-mode redis-server: one slot per run, declared keys only", async () => {
  const fixture = await startUpstashFixture({ cluster: true });
  try {
    const store = new UpstashStore({ redis: fixture.createRedis(), prefix: "app:v1" });
    const runIds = ["run-1", "123", "a.b_c-d", "x".repeat(128)];
    const callIds = ["call_1", "toolu_01A:b.c-d", "functions.search:0", "y".repeat(256)];
    // Our CRC16 agrees with the server's, and every key of a run shares the run's slot.
    for (const runId of runIds) {
      const keys = [store.keys(runId).run, store.keys(runId).progress];
      for (const toolCallId of callIds) keys.push(store.keys(runId, toolCallId).record!);
      const slots = new Set<number>();
      for (const key of keys) {
        const server = await fixture.direct(["CLUSTER", "KEYSLOT", key]);
        assert.equal(server, keySlot(key), key);
        slots.add(keySlot(key));
      }
      assert.deepEqual([...slots], [keySlot(runId)], runId);
    }

    const stopMonitor = await fixture.monitor();
    const kit = createFakeToolkit();
    const boundary = new ToolBoundary({ store, tools: kit.tools });
    const run = await boundary.startRun({ runId: "cluster-run", ttlMs: 60_000 });
    for (const toolCallId of callIds) {
      const result = await boundary.invoke(run, {
        toolCallId,
        runId: run.runId,
        toolName: toolCallId === "call_1" ? kit.names.throwing : kit.names.success,
        input: { query: "disk" },
      });
      assert.equal(result.status, toolCallId === "call_1" ? "ERROR" : "READY");
    }
    assert.ok(await boundary.inspect(run.runId, "call_1"));
    const facts = await boundary.endRun(run);
    assert.deepEqual(facts.map((f) => f.toolCallId), callIds.slice(1));
    const lines = await stopMonitor();

    // Every command a script ran names only keys its EVALSHA/EVAL declared.
    let declared: Set<string> | null = null;
    let scripted = 0;
    for (const line of lines) {
      const bracket = line.indexOf("]");
      const lua = line.slice(0, bracket).endsWith("lua");
      const args = [...line.slice(bracket + 1).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
      const name = (args[0] ?? "").toUpperCase();
      if (!lua) {
        declared = name === "EVALSHA" || name === "EVAL"
          ? new Set(args.slice(3, 3 + Number(args[2])))
          : null;
        continue;
      }
      scripted++;
      assert.ok(declared !== null, `script command outside a script: ${line}`);
      if (name === "TIME") continue; // the run index's clock: no key
      assert.ok(declared.has(args[1] ?? ""), `undeclared key in ${line}`);
      // The run's slot, or (indexRun, listRuns) the store's own run index tag, {runs}.
      assert.ok(
        [keySlot("cluster-run"), keySlot("app:v1:{runs}:started")].includes(keySlot(args[1]!)),
        line,
      );
      if (declared.size > 1) {
        assert.equal(new Set([...declared].map(keySlot)).size, 1, `one slot per script: ${line}`);
      }
    }
    assert.ok(scripted > 20, `saw ${scripted} script commands`);
  } finally {
    await fixture.stop();
  }
});
