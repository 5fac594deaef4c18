/**
 * The archive of sealed runs: each `endRun` that answers a sealed run writes the run's bundle
 * once (after the seal is kept and stamped), never a call; the archived copy verifies; a write
 * that fails is ARCHIVE_UNAVAILABLE with the run sealed and nothing lost, and a later end writes
 * the same seal; a hostile archive still gives the safe code.
 */
import assert from "node:assert/strict";
import { BoundaryError, ERROR_MESSAGES, ToolBoundary } from "../../src/mod.ts";
import { memoryArchive, type RunArchive, type RunBundle } from "../../src/harness/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { rfc3161 } from "../../src/timestamp/mod.ts";
import { STORES } from "../support/stores.ts";
import { startTsa } from "../support/tsa.ts";
import { CALLS, keys, lookup, sealedRun } from "./_run.ts";
import { verifyRun } from "./_verify.ts";

const tsa = await startTsa("archive");
globalThis.addEventListener("unload", () => Deno.removeSync(tsa.dir, { recursive: true }));

/**
 * A memory archive that counts what the boundary asks it, and refuses every write while `down`;
 * `kept` reads it without being counted.
 */
function countingArchive() {
  const inner = memoryArchive();
  const seen = { puts: 0, gets: 0, down: false, failure: new Error("archive down") };
  const archive = {
    put(runId: string, bundleJson: string) {
      seen.puts++;
      return seen.down ? Promise.reject(seen.failure) : inner.put(runId, bundleJson);
    },
    get(runId: string) {
      seen.gets++;
      return inner.get(runId);
    },
  };
  return { archive, seen, kept: inner.get };
}

/** What `endRun` threw, checked to be ARCHIVE_UNAVAILABLE with its fixed message. */
function assertArchiveUnavailable(error: unknown): BoundaryError {
  assert.ok(error instanceof BoundaryError, String(error));
  assert.equal(error.code, "ARCHIVE_UNAVAILABLE");
  assert.equal(error.message, ERROR_MESSAGES.ARCHIVE_UNAVAILABLE);
  return error;
}

/** The run's instance, as `verifyRun`'s `run` option names it. */
const instanceOf = (bundle: RunBundle) => ({
  runId: bundle.run.runId,
  startedAt: bundle.run.startedAt,
});

for (const { name, open } of STORES) {
  Deno.test(`${name}: a sealed run is archived once per endRun, never per call, and the archived copy verifies`, async () => {
    const { store, close } = await open();
    try {
      const { archive, seen, kept } = countingArchive();
      const { boundary, runId } = await sealedRun(store, { archive, end: false });
      await boundary.exportRun(runId);
      assert.deepEqual({ puts: seen.puts, gets: seen.gets }, { puts: 0, gets: 0 });
      const report = await boundary.endRunReport(runId);
      assert.equal(seen.puts, 1);
      const text = await kept(runId);
      const bundle = await boundary.exportRun(runId);
      // What is archived: the export after the seal, every record with its raw, facts, receipt.
      assert.equal(text, JSON.stringify(bundle));
      const archived = JSON.parse(text!) as RunBundle;
      assert.deepEqual(archived.receipt, report.receipt);
      assert.deepEqual(archived.facts, report.facts);
      assert.deepEqual(
        archived.records.map((record) => [record.toolCallId, "raw" in record]),
        CALLS.map(({ toolCallId }) => [toolCallId, true]),
      );
      assert.deepEqual(await verifyRun(archived, keys.publicKey, { run: instanceOf(bundle) }), {
        ok: true,
        sealed: true,
        calls: CALLS.length,
      });
      // A later end writes the same bytes again: a success, and the archive is not read.
      assert.deepEqual(await boundary.endRunReport(runId), report);
      assert.equal(seen.puts, 2);
      assert.equal(await kept(runId), text);
      // Calls of the ended run are refused before anything is written.
      const late = await boundary.invoke({ runId }, {
        toolCallId: "late",
        runId,
        toolName: "lookup",
        input: { key: "a" },
      });
      assert.equal(late.status === "ERROR" && late.code, "RUN_INACTIVE");
      assert.deepEqual({ puts: seen.puts, gets: seen.gets }, { puts: 2, gets: 0 });
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: the archived copy carries the seal's timestamp; a TSA down archives nothing`, async () => {
    const { store, close } = await open();
    try {
      const { archive, seen, kept } = countingArchive();
      const { boundary, runId } = await sealedRun(store, {
        archive,
        end: false,
        timestamp: rfc3161(tsa.url),
      });
      tsa.down = true;
      let error: unknown;
      try {
        error = await boundary.endRun(runId).then(() => null, (e) => e);
      } finally {
        tsa.down = false;
      }
      assert.ok(error instanceof BoundaryError && error.code === "TIMESTAMP_UNAVAILABLE");
      // Not sealed: nothing to archive.
      assert.equal(seen.puts, 0);
      assert.equal(await kept(runId), null);
      await boundary.endRun(runId);
      assert.equal(seen.puts, 1);
      const archived = JSON.parse((await kept(runId))!) as RunBundle;
      assert.equal(typeof archived.receipt?.timestamp, "string");
      const verdict = await verifyRun(archived, keys.publicKey, { tsaCertificates: [tsa.caPem] });
      assert.ok(verdict.ok && typeof verdict.timestampedAt === "number");
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: a failed archive write makes endRun fail with ARCHIVE_UNAVAILABLE; the run stays sealed and a later endRun writes the same facts and receipt`, async () => {
    const { store, close } = await open();
    try {
      const { archive, seen, kept } = countingArchive();
      const { boundary, runId } = await sealedRun(store, { archive, end: false });
      seen.down = true;
      const error = assertArchiveUnavailable(
        await boundary.endRun(runId).then(() => null, (e) => e),
      );
      // The archive's own error is kept for the harness's logs.
      assert.equal(error.cause, seen.failure);
      assert.equal(seen.puts, 1);
      assert.equal(await kept(runId), null);
      // Sealed, and ended: nothing lost, nothing begins any more.
      const sealed = await boundary.exportRun(runId);
      assert.equal(sealed.run.status, "ENDED");
      assert.ok(sealed.receipt !== null && sealed.facts !== null);
      assert.equal(sealed.records.length, CALLS.length);
      const late = await boundary.invoke({ runId }, {
        toolCallId: "late",
        runId,
        toolName: "lookup",
        input: { key: "a" },
      });
      assert.equal(late.status === "ERROR" && late.code, "RUN_INACTIVE");
      // Still down: the same code again, the same seal kept.
      assertArchiveUnavailable(await boundary.endRun(runId).then(() => null, (e) => e));
      assert.equal(seen.puts, 2);
      assert.deepEqual(await boundary.exportRun(runId), sealed);
      // Back: the next end writes the seal the first one made.
      seen.down = false;
      const report = await boundary.endRunReport(runId);
      assert.equal(seen.puts, 3);
      assert.deepEqual(report.receipt, sealed.receipt);
      assert.deepEqual(report.facts, sealed.facts);
      const text = await kept(runId);
      assert.equal(text, JSON.stringify(sealed));
      assert.deepEqual(
        await verifyRun(JSON.parse(text!), keys.publicKey, { run: instanceOf(sealed) }),
        { ok: true, sealed: true, calls: CALLS.length },
      );
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: a call in flight at the seal that completes later: a later endRun keeps the bundle archived first`, async () => {
    const { store, close } = await open();
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const slow = {
        ...lookup,
        name: "slow",
        execute: async () => {
          started();
          await gate;
          return { found: true, key: "s" };
        },
      };
      const { archive, seen, kept } = countingArchive();
      const boundary = new ToolBoundary({
        store,
        tools: [lookup, slow],
        ledgerKey: keys.privateKey,
        archive,
      });
      const run = await boundary.startRun();
      const pending = boundary.invoke(run, {
        toolCallId: "s1",
        runId: run.runId,
        toolName: "slow",
        input: {},
      });
      await running;
      await boundary.endRun(run.runId);
      const first = await kept(run.runId);
      assert.equal(JSON.parse(first!).records[0].status, "PROJECTING");
      release();
      assert.equal((await pending).status, "READY");
      const now = await boundary.exportRun(run.runId);
      assert.notEqual(JSON.stringify(now), first);
      // The archive refuses the other bytes; its copy carries this seal: the run is archived.
      await boundary.endRun(run.runId);
      assert.deepEqual({ puts: seen.puts, gets: seen.gets }, { puts: 2, gets: 1 });
      assert.equal(await kept(run.runId), first);
      for (const bundle of [JSON.parse(first!), now]) {
        assert.deepEqual(await verifyRun(bundle, keys.publicKey, { run }), {
          ok: true,
          sealed: true,
          calls: 1,
        });
      }
      // An archive that refuses other bytes and cannot be read back cannot tell: never silent.
      const writeOnly = new ToolBoundary({
        store,
        tools: [lookup, slow],
        ledgerKey: keys.privateKey,
        archive: { put: (runId, bundleJson) => archive.put(runId, bundleJson) },
      });
      assertArchiveUnavailable(await writeOnly.endRun(run.runId).then(() => null, (e) => e));
    } finally {
      await close();
    }
  });
}

Deno.test("a hostile archive, whatever it throws or answers, gives ARCHIVE_UNAVAILABLE and the run stays sealed", async () => {
  const thrower = () => {
    throw new Error("trap");
  };
  const trap = () =>
    new Proxy({}, {
      get: thrower,
      getPrototypeOf: thrower,
      has: thrower,
      ownKeys: thrower,
      getOwnPropertyDescriptor: thrower,
    });
  const refused = () => Promise.reject(new Error("refused"));
  const other = await sealedRun(new MemoryStore());
  const otherBundle = JSON.stringify(await other.boundary.exportRun(other.runId));
  const cases: [string, RunArchive][] = [
    ["put rejects with a Proxy", { put: () => Promise.reject(trap()) }],
    ["put throws a Proxy at once", {
      put: () => {
        throw trap();
      },
    }],
    ["put throws an object whose getters throw", {
      put: () => {
        throw Object.defineProperties({}, {
          message: { get: thrower },
          stack: { get: thrower },
          code: { get: thrower },
        });
      },
    }],
    ["put throws the boundary's own RUN_NOT_FOUND", {
      put: () => {
        throw new BoundaryError("RUN_NOT_FOUND");
      },
    }],
    ["put answers a Proxy", { put: () => trap() as Promise<void> }],
    ["put answers a thenable whose then throws", {
      put: () => ({ then: thrower }) as unknown as Promise<void>,
    }],
    ["put answers a thenable whose then is a throwing getter", {
      put: () => Object.defineProperty({}, "then", { get: thrower }) as Promise<void>,
    }],
    ["put refused, get answers a Proxy", { put: refused, get: () => trap() as Promise<string> }],
    ["put refused, get throws", { put: refused, get: thrower }],
    ["put refused, get answers text that is not JSON", {
      put: refused,
      get: () => Promise.resolve("{not json"),
    }],
    ["put refused, get answers null", { put: refused, get: () => Promise.resolve(null) }],
    ["put refused, get answers JSON without a receipt", {
      put: refused,
      get: () => Promise.resolve("[1]"),
    }],
    ["put refused, get answers another run's bundle", {
      put: refused,
      get: () => Promise.resolve(otherBundle),
    }],
  ];
  for (const [label, archive] of cases) {
    const { boundary, runId } = await sealedRun(new MemoryStore(), { archive, end: false });
    const error = await boundary.endRun(runId).then(() => null, (e) => e);
    assert.ok(error instanceof BoundaryError, label);
    assert.equal(error.code, "ARCHIVE_UNAVAILABLE", label);
    assert.equal(error.message, ERROR_MESSAGES.ARCHIVE_UNAVAILABLE, label);
    assert.ok((await boundary.exportRun(runId)).receipt !== null, label);
  }
  // The right bundle, but as an object rather than the text written: not what was archived.
  const store = new MemoryStore();
  const box: { bundle?: unknown } = {};
  const { boundary, runId } = await sealedRun(store, {
    end: false,
    archive: { put: refused, get: () => Promise.resolve(box.bundle as string) },
  });
  assertArchiveUnavailable(await boundary.endRun(runId).then(() => null, (e) => e));
  box.bundle = await boundary.exportRun(runId);
  assertArchiveUnavailable(await boundary.endRun(runId).then(() => null, (e) => e));
});

Deno.test("an archive's put and get are read once, when the boundary is created", async () => {
  const inner = memoryArchive();
  const reads = { put: 0, get: 0 };
  const archive = {
    get put() {
      reads.put++;
      return inner.put;
    },
    get get() {
      reads.get++;
      return inner.get;
    },
  };
  const { boundary, runId } = await sealedRun(new MemoryStore(), { archive });
  await boundary.endRun(runId);
  assert.deepEqual(reads, { put: 1, get: 1 });
  assert.equal(await inner.get(runId), JSON.stringify(await boundary.exportRun(runId)));
});

Deno.test("an archive without a ledgerKey, without put(), or with a get that is no function, is a TypeError at construction", () => {
  const good = memoryArchive();
  assert.throws(() => new ToolBoundary({ tools: [lookup], archive: good }), TypeError);
  const bad: unknown[] = [
    null,
    "archive",
    {},
    { put: "put" },
    { put: good.put, get: "get" },
    new Proxy({}, {
      get: () => {
        throw new Error("trap");
      },
    }),
  ];
  for (const [index, archive] of bad.entries()) {
    assert.throws(
      () =>
        new ToolBoundary({
          tools: [lookup],
          ledgerKey: keys.privateKey,
          archive: archive as RunArchive,
        }),
      TypeError,
      `case ${index}`,
    );
  }
});

Deno.test("memoryArchive() keeps the first bundle of a run: the same bytes again succeed, others are refused", async () => {
  const archive = memoryArchive();
  assert.equal(await archive.get("run-1"), null);
  await archive.put("run-1", "{}");
  await archive.put("run-1", "{}");
  await assert.rejects(archive.put("run-1", '{"other":1}'), /another bundle/);
  await assert.rejects(archive.put("not a run id", "{}"), TypeError);
  await assert.rejects(archive.put("run-2", 42 as unknown as string), TypeError);
  assert.equal(await archive.get("run-1"), "{}");
  assert.equal(await archive.get("run-2"), null);
});

Deno.test("POST /v1/runs/:runId/end with the archive down is 503 ARCHIVE_UNAVAILABLE, reported to onError; the next end writes it", async () => {
  const { archive, seen, kept } = countingArchive();
  const boundary = new ToolBoundary({ tools: [lookup], ledgerKey: keys.privateKey, archive });
  const harness = { authorization: "Bearer harness-token-0123456789abcdef" };
  const reported: unknown[] = [];
  const app = createApp({
    boundary,
    agentToken: "agent-token-0123456789abcdef",
    harnessToken: "harness-token-0123456789abcdef",
    onError: (error) => reported.push(error),
  });
  const run = await boundary.startRun();
  await boundary.invoke(run, {
    toolCallId: "call_a",
    runId: run.runId,
    toolName: "lookup",
    input: { key: "a" },
  });
  seen.down = true;
  const res = await app.request(`/v1/runs/${run.runId}/end`, { method: "POST", headers: harness });
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), {
    status: "ERROR",
    code: "ARCHIVE_UNAVAILABLE",
    message: ERROR_MESSAGES.ARCHIVE_UNAVAILABLE,
  });
  // The operator sees what failed; the client only the code.
  assert.equal(reported.length, 1);
  assert.equal((reported[0] as { code?: string }).code, "ARCHIVE_UNAVAILABLE");
  const sealed = await boundary.exportRun(run.runId);
  assert.ok(sealed.receipt !== null);
  seen.down = false;
  const again = await app.request(`/v1/runs/${run.runId}/end`, {
    method: "POST",
    headers: harness,
  });
  assert.equal(again.status, 200);
  assert.deepEqual((await again.json()).receipt, sealed.receipt);
  assert.equal(seen.puts, 2);
  assert.equal(await kept(run.runId), JSON.stringify(sealed));
});
