/**
 * A record's `failure`: what a tool's executor threw, read once and bounded, kept in the record
 * (on both stores, covered by the proof) and nowhere an agent, a model or an observer's
 * agent-facing result can see it.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  type BoundaryEvent,
  defineTool,
  generateLedgerKeys,
  modelViewText,
  ToolBoundary,
} from "../../src/mod.ts";
import { MAX_FAILURE_BYTES } from "../../src/harness/mod.ts";
import { checkFailure, readFailure } from "../../src/core/failure.ts";
import { verifyRun } from "../../src/verify/mod.ts";
import { CANARY_SECRET } from "../../src/testing/fakes.ts";
import { STORES } from "../support/stores.ts";

Deno.test("readFailure reads an Error's name and message once, and names non-Error throws by typeof", () => {
  assert.deepEqual(readFailure(new RangeError("out")), { name: "RangeError", message: "out" });
  assert.deepEqual(readFailure("plain"), { name: "string", message: "plain" });
  assert.deepEqual(readFailure(42), { name: "number", message: "42" });
  assert.deepEqual(readFailure(undefined), { name: "undefined", message: null });
  assert.deepEqual(readFailure(null), { name: "null", message: null });
  assert.deepEqual(readFailure(Symbol("s")), { name: "symbol", message: null });
  let reads = 0;
  const counted = {
    get name() {
      reads++;
      return "CustomError";
    },
    get message() {
      reads++;
      return "m";
    },
  };
  assert.deepEqual(readFailure(counted), { name: "CustomError", message: "m" });
  assert.equal(reads, 2, "each member read once");
});

Deno.test("readFailure survives throwing getters, Proxies and revoked Proxies, and replaces unsafe names", () => {
  const hostile = {
    get name(): string {
      throw new Error("getter");
    },
    message: { toString: () => "not a string" },
  };
  assert.deepEqual(readFailure(hostile), { name: "Error", message: null });
  const trap = new Proxy({}, {
    get: () => {
      throw new Error("trap");
    },
  });
  assert.deepEqual(readFailure(trap), { name: "Error", message: null });
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  assert.deepEqual(readFailure(proxy), { name: "Error", message: null });
  for (const name of ["<img src=x>", "", "a b", "x".repeat(65), "9lives", "é"]) {
    assert.equal(readFailure({ name, message: "m" }).name, "Error", name);
  }
  assert.equal(readFailure({ name: "x".repeat(64), message: "m" }).name, "x".repeat(64));
});

Deno.test("a message past MAX_FAILURE_BYTES in UTF-8 is dropped whole, never cut, and the name kept", () => {
  const overhead = JSON.stringify({ name: "Error", message: "" }).length;
  const fits = "a".repeat(MAX_FAILURE_BYTES - overhead);
  assert.equal(readFailure(new Error(fits)).message, fits);
  assert.deepEqual(readFailure(new Error(fits + "a")), { name: "Error", message: null });
  // Three bytes each in UTF-8, one UTF-16 unit: the bound is in bytes.
  const wide = "日".repeat(Math.floor((MAX_FAILURE_BYTES - overhead) / 3) + 1);
  assert.ok(wide.length < MAX_FAILURE_BYTES);
  assert.deepEqual(readFailure(new Error(wide)), { name: "Error", message: null });
  // Escapes count as stored: a quote is two bytes of JSON.
  const quotes = '"'.repeat(Math.ceil((MAX_FAILURE_BYTES - overhead) / 2) + 1);
  assert.equal(readFailure(new Error(quotes)).message, null);
  assert.throws(() => checkFailure({ name: "Error", message: fits + "a" }), TypeError);
  assert.throws(() => checkFailure({ name: "Error" }), TypeError);
});

const thrower = defineTool({
  name: "thrower",
  readOnly: true,
  input: v.object({ mode: v.string() }),
  execute: ({ mode }) => {
    if (mode === "reject") return Promise.reject(new TypeError(`async ${CANARY_SECRET}`));
    if (mode === "string") throw `thrown text ${CANARY_SECRET}`;
    if (mode === "slow") return new Promise<never>(() => {});
    throw new Error(`backend said ${CANARY_SECRET}`);
  },
  project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
  timeoutMs: 50,
});

for (const { name, open } of STORES) {
  Deno.test(`${name}: a thrown canary lands in the record's failure only, covered by the proof`, async () => {
    const { store, close } = await open();
    try {
      const keys = await generateLedgerKeys();
      const events: BoundaryEvent[] = [];
      const boundary = new ToolBoundary({
        store,
        tools: [thrower],
        ledgerKey: keys.privateKey,
        observe: (event) => events.push(event),
      });
      const run = await boundary.startRun({ ttlMs: 60_000 });
      const call = (toolCallId: string, mode: string) =>
        boundary.invoke(run, {
          toolCallId,
          runId: run.runId,
          toolName: "thrower",
          input: { mode },
        });
      const results = [
        await call("c_sync", "sync"),
        await call("c_reject", "reject"),
        await call("c_string", "string"),
        await call("c_slow", "slow"),
      ];
      assert.deepEqual(
        results.map((r) => r.status === "ERROR" && r.code),
        ["EXECUTION_FAILED", "EXECUTION_FAILED", "EXECUTION_FAILED", "TOOL_TIMEOUT"],
      );
      const finished = events.filter((e) => e.type === "call.finished");
      const agentFacing = JSON.stringify([
        results,
        results.map(modelViewText),
        finished.map((e) => e.type === "call.finished" && e.result),
      ]);
      assert.ok(!agentFacing.includes(CANARY_SECRET), agentFacing);

      const failures = await Promise.all(
        ["c_sync", "c_reject", "c_string", "c_slow"].map(async (id) =>
          (await boundary.inspect(run.runId, id))?.failure
        ),
      );
      assert.deepEqual(failures, [
        { name: "Error", message: `backend said ${CANARY_SECRET}` },
        { name: "TypeError", message: `async ${CANARY_SECRET}` },
        { name: "string", message: `thrown text ${CANARY_SECRET}` },
        undefined, // stopped by its time limit: the stop decides, not what it threw
      ]);

      await boundary.endRun(run);
      const bundle = await boundary.exportRun(run.runId);
      assert.deepEqual(bundle.records[0]?.failure, failures[0]);
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: true,
        sealed: true,
        calls: 4,
      });
      bundle.records[0]!.failure = { name: "Error", message: null };
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: false,
        toolCallId: "c_sync",
        reason: "ALTERED",
      });
      delete bundle.records[0]!.failure;
      assert.equal((await verifyRun(bundle, keys.publicKey)).ok, false);
    } finally {
      await close();
    }
  });
}
