/**
 * Tampering with the store itself, as someone with write access to it could: the Redis values
 * behind UpstashStore (through the fixture's direct connection, not the store) and MemoryStore's
 * maps. Every field of every record, a record deleted, inserted or moved, the sealed facts and
 * the receipt: the exported bundle no longer verifies, with the right reason and call.
 */
import assert from "node:assert/strict";
import type { StoredRecord } from "../../src/core/store.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { IdTable } from "../../src/memory/id_table.ts";
import { memoryStateForTests } from "../../src/memory/state.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { verifyRun } from "./_verify.ts";
import { type ScriptEngine, startUpstashFixture } from "../support/upstash_fixture.ts";
import { recordHash } from "../../src/core/ledger.ts";
import { UnreadableRecordError } from "../../src/core/run/inspect.ts";
import { createApp } from "../../src/hono/mod.ts";
import { BoundaryError } from "../../src/mod.ts";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { uniqueId } from "../support/stores.ts";
import { CALLS, keys, lookup, sealedRun } from "./_run.ts";

/** What a tamper test does to a store, the same way on both. */
interface Operator {
  store: MemoryStore | UpstashStore;
  /** Sets one stored field of a record to a text (numbers as their decimal text). */
  setField(
    runId: string,
    toolCallId: string,
    field: keyof StoredRecord,
    value: string,
  ): Promise<void>;
  /** Makes a field absent again (`null`). */
  clearField(runId: string, toolCallId: string, field: keyof StoredRecord): Promise<void>;
  deleteRecord(runId: string, toolCallId: string): Promise<void>;
  /** Makes `toolCallId` begun again, with a copy of `from`'s record, last in begin order. */
  insertCopy(runId: string, from: string, toolCallId: string): Promise<void>;
  /** Swaps the begin order of two calls. */
  swap(runId: string, a: string, b: string): Promise<void>;
  /** Rewrites the stored seal. */
  editSeal(runId: string, edit: (seal: Record<string, unknown>) => void): Promise<void>;
  /** Puts the record of `toolCallId` in `fromRunId`, exactly as stored, in place of `runId`'s. */
  copyRecord(fromRunId: string, runId: string, toolCallId: string): Promise<void>;
  /** Makes everything of a run vanish, so that its ID can be started again. */
  forgetRun(runId: string): Promise<void>;
  close(): Promise<void>;
}

const OPERATORS: { name: string; open(): Promise<Operator> }[] = [
  {
    name: "MemoryStore",
    open: () => {
      const store = new MemoryStore();
      const state = memoryStateForTests(store);
      const record = (runId: string, id: string) => state.records.get(runId)!.get(id)!;
      const run = (runId: string) => state.runs.get(runId)!;
      return Promise.resolve({
        store,
        setField(runId, id, field, value) {
          const current = record(runId, id) as unknown as Record<string, unknown>;
          current[field] = field === "proof"
            ? JSON.parse(value)
            : typeof current[field] === "number"
            ? Number(value)
            : value;
          return Promise.resolve();
        },
        clearField(runId, id, field) {
          const current = record(runId, id) as unknown as Record<string, unknown>;
          // An absent proof is no member at all, as the store keeps a record completed without.
          if (field === "proof") delete current.proof;
          else current[field] = null;
          return Promise.resolve();
        },
        deleteRecord(runId, id) {
          state.records.get(runId)!.delete(id);
          return Promise.resolve();
        },
        insertCopy(runId, from, id) {
          state.records.get(runId)!.set(id, { ...record(runId, from), toolCallId: id });
          const begun = run(runId).begun;
          begun.set(id, { ...begun.get(from)!, toolCallId: id, seq: begun.size + 1 });
          return Promise.resolve();
        },
        swap(runId, a, b) {
          const entries = [...run(runId).begun];
          const i = entries.findIndex(([id]) => id === a);
          const j = entries.findIndex(([id]) => id === b);
          [entries[i], entries[j]] = [entries[j]!, entries[i]!];
          run(runId).begun = new IdTable(entries);
          return Promise.resolve();
        },
        editSeal(runId, edit) {
          const seal = JSON.parse(run(runId).sealJson!);
          edit(seal);
          run(runId).sealJson = JSON.stringify(seal);
          return Promise.resolve();
        },
        copyRecord(fromRunId, runId, id) {
          state.records.get(runId)!.set(id, { ...record(fromRunId, id) });
          return Promise.resolve();
        },
        forgetRun(runId) {
          state.runs.delete(runId);
          state.records.delete(runId);
          return Promise.resolve();
        },
        close: () => Promise.resolve(),
      });
    },
  },
  upstashOperator("UpstashStore", "redis"),
  upstashOperator("UpstashStore (gopher-lua)", "gopher-lua"),
];

/**
 * UpstashStore with its scripts run by `engine`; the operator edits redis-server itself, through
 * the fixture's direct connection, whichever engine runs the scripts.
 */
function upstashOperator(
  name: string,
  engine: ScriptEngine,
): { name: string; open(): Promise<Operator> } {
  return {
    name,
    open: async () => {
      const fixture = await startUpstashFixture({ engine });
      const store = new UpstashStore({ redis: fixture.createRedis() });
      const runKey = (runId: string) => store.keys(runId).run;
      const recordKey = (runId: string, id: string) => store.keys(runId, id).record!;
      return {
        store,
        async setField(runId, id, field, value) {
          await fixture.direct(["HSET", recordKey(runId, id), field, value]);
        },
        async clearField(runId, id, field) {
          await fixture.direct(["HDEL", recordKey(runId, id), field]);
        },
        async deleteRecord(runId, id) {
          await fixture.direct(["DEL", recordKey(runId, id)]);
        },
        async insertCopy(runId, from, id) {
          const fields = await fixture.direct(["HGETALL", recordKey(runId, from)]) as string[];
          await fixture.direct(["HSET", recordKey(runId, id), ...fields, "toolCallId", id]);
          const used = Number(await fixture.direct(["HGET", runKey(runId), "used"]));
          const begun = String(await fixture.direct(["HGET", runKey(runId), `c:${from}`]));
          const next = begun.replace(/^\d+/, String(used + 1));
          await fixture.direct(["HSET", runKey(runId), `c:${id}`, next, "used", String(used + 1)]);
        },
        async swap(runId, a, b) {
          const [va, vb] = await fixture.direct(["HMGET", runKey(runId), `c:${a}`, `c:${b}`]) as [
            string,
            string,
          ];
          const seq = (v: string) => v.split(":")[0]!;
          await fixture.direct([
            "HSET",
            runKey(runId),
            `c:${a}`,
            va.replace(/^\d+/, seq(vb)),
            `c:${b}`,
            vb.replace(/^\d+/, seq(va)),
          ]);
        },
        async editSeal(runId, edit) {
          const seal = JSON.parse(String(await fixture.direct(["HGET", runKey(runId), "seal"])));
          edit(seal);
          await fixture.direct(["HSET", runKey(runId), "seal", JSON.stringify(seal)]);
        },
        async copyRecord(fromRunId, runId, id) {
          const fields = await fixture.direct(["HGETALL", recordKey(fromRunId, id)]) as string[];
          await fixture.direct(["HSET", recordKey(runId, id), ...fields]);
        },
        async forgetRun(runId) {
          const keys = await fixture.direct(["KEYS", `*{${runId}}*`]) as string[];
          assert.ok(keys.length > 0);
          await fixture.direct(["DEL", ...keys]);
        },
        close: () => fixture.stop(),
      };
    },
  };
}

/** Every stored field the record as `inspect()` returns it is made of, with a changed value. */
function edits(record: StoredRecord): [keyof StoredRecord, string][] {
  return [
    ["runId", record.runId + "x"],
    ["toolCallId", record.toolCallId + "x"],
    ["toolName", record.toolName + "x"],
    ["status", record.status === "READY" ? "ERROR" : "READY"],
    ["evidence", record.evidence === "NO_EVIDENCE" ? "EVIDENCE_FOUND" : "NO_EVIDENCE"],
    ["requestJson", '{"key":"z"}'],
    ["rawJson", JSON.stringify({ edited: true })],
    ["agentResultJson", '{"evidence":"EVIDENCE_FOUND","scope":"edited","content":true}'],
    ["errorCode", "TOOL_TIMEOUT"],
    ["createdAt", String(record.createdAt - 1)],
    ["updatedAt", String(record.updatedAt + 1)],
    ["expiresAt", String(record.expiresAt + 1)],
  ];
}

const ids = CALLS.map((call) => call.toolCallId);

for (const { name, open } of OPERATORS) {
  Deno.test(`${name}: any stored field of any record edited is ALTERED, naming the call`, async () => {
    const op = await open();
    try {
      const { boundary, runId } = await sealedRun(op.store);
      assert.deepEqual(await verifyRun(await boundary.exportRun(runId), keys.publicKey), {
        ok: true,
        sealed: true,
        calls: 3,
      });
      let cases = 0;
      for (const id of ids) {
        const original = (await op.store.get(runId, id))!;
        for (const [field, value] of edits(original)) {
          await op.setField(runId, id, field, value);
          const verdict = await verifyRun(await boundary.exportRun(runId), keys.publicKey);
          assert.deepEqual(
            verdict,
            { ok: false, toolCallId: id, reason: "ALTERED" },
            `${id}.${field}`,
          );
          const before = original[field];
          if (before === null) await op.clearField(runId, id, field);
          else await op.setField(runId, id, field, String(before));
          cases++;
        }
        // The proof re-signed by no one: its signature changed.
        const proof = original.proof!;
        await op.setField(runId, id, "proof", JSON.stringify({ ...proof, sig: flip(proof.sig) }));
        assert.deepEqual(await verifyRun(await boundary.exportRun(runId), keys.publicKey), {
          ok: false,
          toolCallId: id,
          reason: "BAD_SIGNATURE",
        });
        await op.setField(runId, id, "proof", JSON.stringify(proof));
        assert.deepEqual(await op.store.get(runId, id), original);
      }
      assert.equal(cases, 36);
      assert.equal((await verifyRun(await boundary.exportRun(runId), keys.publicKey)).ok, true);
    } finally {
      await op.close();
    }
  });

  Deno.test(`${name}: a record deleted, inserted or moved in the store is caught`, async () => {
    const op = await open();
    try {
      const check = async (
        edit: (runId: string) => Promise<void>,
        expected: { toolCallId: string | null; reason: string },
      ) => {
        const { boundary, runId } = await sealedRun(op.store);
        await edit(runId);
        assert.deepEqual(await verifyRun(await boundary.exportRun(runId), keys.publicKey), {
          ok: false,
          ...expected,
        });
      };
      await check((runId) => op.deleteRecord(runId, "call_boom"), {
        toolCallId: "call_boom",
        reason: "MISSING",
      });
      await check((runId) => op.insertCopy(runId, "call_a", "call_new"), {
        toolCallId: "call_new",
        reason: "INSERTED",
      });
      await check((runId) => op.swap(runId, "call_a", "call_b"), {
        toolCallId: "call_a",
        reason: "REORDERED",
      });
      await check(
        (runId) =>
          op.editSeal(runId, (seal) => {
            (seal.facts as { content: unknown }[])[0]!.content = { found: false };
          }),
        { toolCallId: null, reason: "FACTS_ALTERED" },
      );
      await check(
        (runId) =>
          op.editSeal(runId, (seal) => {
            (seal.receipt as { calls: unknown[] }).calls.pop();
          }),
        { toolCallId: null, reason: "BAD_SIGNATURE" },
      );
    } finally {
      await op.close();
    }
  });

  Deno.test(`${name}: before the seal, a record deleted from the middle or moved in the store shows by its position`, async () => {
    const op = await open();
    try {
      const check = async (edit: (runId: string) => Promise<void>) => {
        const { boundary, runId } = await sealedRun(op.store, { end: false });
        await edit(runId);
        return await verifyRun(await boundary.exportRun(runId), keys.publicKey);
      };
      // The ID of a call taken out is not known before the seal: its position is.
      assert.deepEqual(await check((runId) => op.deleteRecord(runId, "call_boom")), {
        ok: false,
        toolCallId: null,
        reason: "MISSING",
        seq: 2,
      });
      assert.deepEqual(await check((runId) => op.deleteRecord(runId, "call_a")), {
        ok: false,
        toolCallId: null,
        reason: "MISSING",
        seq: 1,
      });
      assert.deepEqual(await check((runId) => op.swap(runId, "call_a", "call_b")), {
        ok: false,
        toolCallId: "call_a",
        reason: "REORDERED",
      });
      // The last call taken out leaves no gap: what still needs a witness (docs/proof.md).
      assert.deepEqual(await check((runId) => op.deleteRecord(runId, "call_b")), {
        ok: true,
        sealed: false,
        calls: 2,
      });
      // The position is signed: rewritten in the store, the record is ALTERED.
      assert.deepEqual(await check((runId) => op.setField(runId, "call_boom", "seq", "3")), {
        ok: false,
        toolCallId: "call_boom",
        reason: "ALTERED",
      });
    } finally {
      await op.close();
    }
  });

  Deno.test(`${name}: verifyRun() refuses a sealed bundle whose in-flight record lost its proof or was swapped`, async () => {
    const op = await open();
    try {
      const { boundary, runId } = await inFlightAtSeal(op.store);
      const verdict = async () => await verifyRun(await boundary.exportRun(runId), keys.publicKey);
      assert.deepEqual(await verdict(), { ok: true, sealed: true, calls: 2 });
      const original = (await op.store.get(runId, "s1"))!;
      assert.equal(original.status, "READY");
      // The proof taken off and the raw response changed: nothing vouches for the record.
      await op.clearField(runId, "s1", "proof");
      await op.setField(runId, "s1", "rawJson", JSON.stringify({ slow: "forged" }));
      assert.deepEqual(await verdict(), { ok: false, toolCallId: "s1", reason: "UNSIGNED" });
      // Its proof kept, its raw response changed.
      await op.setField(runId, "s1", "proof", JSON.stringify(original.proof));
      assert.deepEqual(await verdict(), { ok: false, toolCallId: "s1", reason: "ALTERED" });
      await op.setField(runId, "s1", "rawJson", original.rawJson!);
      assert.deepEqual(await verdict(), { ok: true, sealed: true, calls: 2 });
      // Another run's record of the same ID, signed by the same key, in its place.
      const other = await inFlightAtSeal(op.store);
      await op.copyRecord(other.runId, runId, "s1");
      assert.equal((await op.store.get(runId, "s1"))?.runId, other.runId);
      assert.deepEqual(await verdict(), { ok: false, toolCallId: "s1", reason: "INSERTED" });
    } finally {
      await op.close();
    }
  });

  Deno.test(`${name}: a call written through the store without a proof is sealed with its hash and is UNSIGNED`, async () => {
    const op = await open();
    try {
      const { boundary, runId } = await sealedRun(op.store, { end: false });
      // Someone with the store's credentials writes a call past the boundary, before the end.
      const now = Date.now();
      const began = await op.store.begin({
        runId,
        toolCallId: "forged",
        toolName: "lookup",
        requestJson: '{"key":"f"}',
        requestDigest: "forged-digest",
        attemptId: "attempt-forged",
        ttlMs: 60_000,
        now,
      });
      assert.equal(began.ok, true);
      const completed = await op.store.complete({
        runId,
        toolCallId: "forged",
        attemptId: "attempt-forged",
        outcome: {
          status: "READY",
          evidence: "EVIDENCE_FOUND",
          rawJson: '{"found":true}',
          agentResultJson: '{"evidence":"EVIDENCE_FOUND","scope":"forged","content":true}',
        },
        now,
      });
      assert.equal(completed.ok, true);
      const report = await boundary.endRunReport(runId);
      assert.ok(report.facts.some((fact) => fact.toolCallId === "forged"));
      const { proof: _none, ...forged } = (await boundary.inspect(runId, "forged"))!;
      assert.equal(_none, undefined);
      // The seal pins what it found: the record's hash, marked UNSIGNED.
      assert.deepEqual(report.receipt?.calls[3], {
        toolCallId: "forged",
        hash: await recordHash(forged),
        state: "UNSIGNED",
      });
      const verdict = async () => await verifyRun(await boundary.exportRun(runId), keys.publicKey);
      assert.deepEqual(await verdict(), { ok: false, toolCallId: "forged", reason: "UNSIGNED" });
      // A later edit of it shows as an edit.
      await op.setField(runId, "forged", "rawJson", '{"found":"edited"}');
      assert.deepEqual(await verdict(), { ok: false, toolCallId: "forged", reason: "ALTERED" });
      await op.deleteRecord(runId, "forged");
      assert.deepEqual(await verdict(), { ok: false, toolCallId: "forged", reason: "MISSING" });
    } finally {
      await op.close();
    }
  });

  Deno.test(`${name}: a record made unparseable in the store is ALTERED on /verdict and 503 on reads, never a 500`, async () => {
    const op = await open();
    try {
      const { boundary, runId } = await sealedRun(op.store);
      const errors: unknown[] = [];
      const app = createApp({
        boundary,
        agentToken: "agent-token-0123456789abcdef",
        harnessToken: "harness-token-0123456789abcdef",
        onError: (error) => void errors.push(error),
      });
      const get = (path: string) =>
        app.request(`/v1/runs/${runId}${path}`, {
          headers: { authorization: "Bearer harness-token-0123456789abcdef" },
        });
      const verdict = async () => {
        const res = await get("/verdict");
        assert.equal(res.status, 200);
        return (await res.json()).verdict;
      };
      assert.deepEqual(await verdict(), { ok: true, sealed: true, calls: 3 });
      let cases = 0;
      for (const id of ids) {
        const original = (await op.store.get(runId, id))!;
        for (const field of ["requestJson", "rawJson", "agentResultJson"] as const) {
          if (original[field] === null) continue;
          await op.setField(runId, id, field, '{"cut":');
          assert.deepEqual(await verdict(), { ok: false, toolCallId: id, reason: "ALTERED" });
          for (const path of ["/export", `/tool-calls/${id}`]) {
            const res = await get(path);
            assert.equal(res.status, 503, path);
            assert.equal((await res.json()).code, "STORE_UNAVAILABLE");
          }
          const error = await boundary.inspect(runId, id).then(() => null, (e) => e);
          assert.ok(error instanceof BoundaryError && error.code === "STORE_UNAVAILABLE");
          assert.ok(error.cause instanceof UnreadableRecordError);
          assert.equal(error.cause.toolCallId, id);
          await op.setField(runId, id, field, original[field]!);
          cases++;
        }
      }
      assert.equal(cases, 8);
      assert.deepEqual(await verdict(), { ok: true, sealed: true, calls: 3 });
      // Each 503 reached the log with the call that could not be read.
      assert.equal(errors.length, 16);
      assert.ok(
        errors.every((e) => e instanceof BoundaryError && e.cause instanceof UnreadableRecordError),
      );
    } finally {
      await op.close();
    }
  });

  Deno.test(`${name}: an earlier run's bundle does not verify as a later run of the same ID`, async () => {
    const op = await open();
    try {
      const { boundary, runId } = await sealedRun(op.store);
      const earlier = await boundary.exportRun(runId);
      assert.equal(earlier.receipt?.startedAt, earlier.run.startedAt);
      // The run's state vanishes; its ID is started again, a millisecond later at least.
      await op.forgetRun(runId);
      const before = Date.now();
      while (Date.now() === before) await new Promise((resolve) => setTimeout(resolve, 1));
      const run = await boundary.startRun({ runId });
      assert.ok(run.startedAt > earlier.run.startedAt);
      const envelope = { toolCallId: "call_a", runId, toolName: "lookup", input: { key: "a" } };
      assert.equal((await boundary.invoke(run, envelope)).status, "READY");
      const open = await boundary.exportRun(runId);
      // Each bundle verifies as the instance it names; the auditor who names one gets that one.
      assert.deepEqual(await verifyRun(earlier, keys.publicKey), {
        ok: true,
        sealed: true,
        calls: 3,
      });
      assert.deepEqual(await verifyRun(earlier, keys.publicKey, { run }), {
        ok: false,
        toolCallId: null,
        reason: "OTHER_RUN",
      });
      assert.deepEqual(await verifyRun(earlier, keys.publicKey, { run: { runId } }), {
        ok: true,
        sealed: true,
        calls: 3,
      });
      assert.deepEqual(await verifyRun(open, keys.publicKey, { run }), {
        ok: true,
        sealed: false,
        calls: 1,
      });
      // The earlier bundle under the later run's state: the receipt names the earlier start.
      const relabelled = { ...structuredClone(earlier), run: open.run };
      assert.deepEqual(await verifyRun(relabelled, keys.publicKey, { run }), {
        ok: false,
        toolCallId: null,
        reason: "BAD_SIGNATURE",
      });
      // Without its receipt, each record's proof names the earlier start.
      const unsealed = { ...relabelled, receipt: null, facts: null };
      assert.deepEqual(await verifyRun(unsealed, keys.publicKey, { run }), {
        ok: false,
        toolCallId: "call_a",
        reason: "BAD_SIGNATURE",
      });
      // The earlier instance's signed record of the same ID in the later run's bundle.
      const swapped = structuredClone(open);
      swapped.records[0] = structuredClone(earlier.records[0]!);
      assert.equal(swapped.records[0].runId, runId);
      assert.deepEqual(await verifyRun(swapped, keys.publicKey), {
        ok: false,
        toolCallId: "call_a",
        reason: "BAD_SIGNATURE",
      });
      await boundary.endRun(run);
      const later = await boundary.exportRun(runId);
      assert.equal(later.receipt?.startedAt, run.startedAt);
      assert.deepEqual(await verifyRun(later, keys.publicKey, { run }), {
        ok: true,
        sealed: true,
        calls: 1,
      });
    } finally {
      await op.close();
    }
  });
}

/**
 * A run of `lookup` ("call_a") and a slow call ("s1") still in flight when the run is ended,
 * which completes, signed, after the seal.
 */
async function inFlightAtSeal(store: Store): Promise<{ boundary: ToolBoundary; runId: string }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow = defineTool({
    name: "slow",
    readOnly: true,
    execute: async () => (await gate, { slow: true }),
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "slow", content: true }),
  });
  const boundary = new ToolBoundary({ store, tools: [lookup, slow], ledgerKey: keys.privateKey });
  const run = await boundary.startRun({ runId: uniqueId("run") });
  const call = (toolCallId: string, toolName: string, input: object) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
  assert.equal((await call("call_a", "lookup", { key: "a" })).status, "READY");
  const pending = call("s1", "slow", {});
  while ((await store.get(run.runId, "s1")) === null) await new Promise((r) => setTimeout(r, 1));
  const { receipt } = await boundary.endRunReport(run);
  assert.deepEqual(receipt?.calls[1], { toolCallId: "s1", hash: null, state: "INCOMPLETE" });
  release();
  assert.equal((await pending).status, "READY");
  return { boundary, runId: run.runId };
}

/** A signature with one character changed. */
function flip(sig: string): string {
  return (sig[0] === "A" ? "B" : "A") + sig.slice(1);
}
