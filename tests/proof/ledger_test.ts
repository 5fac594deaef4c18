/**
 * The ledger key, the proofs a boundary makes, and verifyRun on hostile input.
 */
import assert from "node:assert/strict";
import { type BoundaryEvent, generateLedgerKeys, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { canonicalJson } from "../../src/core/json.ts";
import { recordHash, thumbprint } from "../../src/core/ledger.ts";
import { verifyRun } from "../../src/verify/mod.ts";
import { STORES } from "../support/stores.ts";
import { keys, lookup, sealedRun } from "./_run.ts";

Deno.test("a ledgerKey that is not an Ed25519 private JWK is a TypeError at construction", () => {
  const bad = [
    keys.publicKey,
    { ...keys.privateKey, crv: "P-256" },
    { ...keys.privateKey, d: "short" },
    { ...keys.privateKey, x: keys.privateKey.x + "A" },
    "key",
    null,
  ];
  for (const ledgerKey of bad) {
    assert.throws(
      () => new ToolBoundary({ tools: [lookup], ledgerKey: ledgerKey as JsonWebKey }),
      TypeError,
    );
  }
  assert.throws(() => new ToolBoundary({ tools: [lookup], keyId: "k1" }), TypeError);
  assert.throws(
    () => new ToolBoundary({ tools: [lookup], ledgerKey: keys.privateKey, keyId: "no spaces" }),
    TypeError,
  );
});

for (const { name, open } of STORES) {
  Deno.test(`${name}: a ledgerKey whose d is not x's refuses startRun and invoke: no run, no record, no tool run`, async () => {
    const { store, close } = await open();
    try {
      const other = await generateLedgerKeys();
      let ran = 0;
      const counted = {
        ...lookup,
        execute: (...args: Parameters<typeof lookup.execute>) => (ran++, lookup.execute(...args)),
      };
      const mismatched = () =>
        new ToolBoundary({
          store,
          tools: [counted],
          ledgerKey: { ...keys.privateKey, d: other.privateKey.d! },
        });
      const good = new ToolBoundary({ store, tools: [counted], ledgerKey: keys.privateKey });
      const run = await good.startRun();
      const envelope = {
        toolCallId: "c1",
        runId: run.runId,
        toolName: "lookup",
        input: { key: "a" },
      };
      const refusedWith = async (promise: Promise<unknown>) => {
        const error = await promise.then(() => null, (e) => e);
        assert.ok(error instanceof TypeError, String(error));
        assert.match(error.message, /ledgerKey/);
      };
      // While the key is still being imported, and once its check has failed.
      const fresh = mismatched();
      await refusedWith(fresh.invoke(run, envelope));
      await refusedWith(fresh.invoke(run, envelope));
      const runId = `run_${crypto.randomUUID()}`;
      await refusedWith(mismatched().startRun({ runId }));
      await refusedWith(fresh.startRun({ runId }));
      assert.equal(await store.getRun(runId), null);
      await refusedWith(fresh.endRun(run));
      await refusedWith(fresh.ledgerPublicKey());
      assert.equal(ran, 0);
      assert.equal(await store.get(run.runId, "c1"), null);
      assert.equal((await store.getRun(run.runId))?.used.calls, 0);
      // The good key still runs the same call.
      assert.equal((await good.invoke(run, envelope)).status, "READY");
      assert.equal(ran, 1);
    } finally {
      await close();
    }
  });
}

Deno.test("the key ID is the RFC 7638 thumbprint unless keyId says otherwise", async () => {
  const boundary = new ToolBoundary({ tools: [lookup], ledgerKey: keys.privateKey });
  const published = await boundary.ledgerPublicKey();
  assert.deepEqual(published?.publicKey, keys.publicKey);
  // RFC 7638 3.1: SHA-256 of the required members in order, no whitespace.
  const text = `{"crv":"Ed25519","kty":"OKP","x":"${keys.publicKey.x}"}`;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  const expected = btoa(String.fromCharCode(...digest)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
  assert.equal(published?.keyId, expected);
  assert.equal(await thumbprint(keys.publicKey as never), expected);
  const named = new ToolBoundary({
    tools: [lookup],
    ledgerKey: keys.privateKey,
    keyId: "ledger-2026.1",
  });
  assert.equal((await named.ledgerPublicKey())?.keyId, "ledger-2026.1");
  assert.equal(await new ToolBoundary({ tools: [lookup] }).ledgerPublicKey(), null);
});

for (const { name, open } of STORES) {
  Deno.test(`${name}: a completed record's proof hashes the record as inspect() returns it`, async () => {
    const { store, close } = await open();
    try {
      const events: BoundaryEvent[] = [];
      const boundary = new ToolBoundary({
        store,
        tools: [lookup],
        ledgerKey: keys.privateKey,
        keyId: "k-1",
        observe: (event) => events.push(event),
      });
      const run = await boundary.startRun();
      await boundary.invoke(run, {
        toolCallId: "call_1",
        runId: run.runId,
        toolName: "lookup",
        input: { key: "a", z: [1, { b: 2, a: 1 }] },
      });
      const record = (await boundary.inspect(run.runId, "call_1"))!;
      const { proof, ...rest } = record;
      assert.equal(proof?.keyId, "k-1");
      assert.equal(proof?.hash, await recordHash(rest));
      const text = new TextEncoder().encode(canonicalJson(rest as never));
      assert.equal(
        proof?.hash,
        btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", text))))
          .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
      );
      const finished = events.find((e) => e.type === "call.finished");
      assert.deepEqual(finished?.type === "call.finished" && finished.proof, proof);
      const report = await boundary.endRunReport(run);
      assert.equal(report.receipt?.keyId, "k-1");
      assert.deepEqual(
        await verifyRun(await boundary.exportRun(run.runId), keys.publicKey, { keyId: "k-1" }),
        { ok: true, sealed: true, calls: 1 },
      );
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: without a ledgerKey nothing has a proof and no run a receipt`, async () => {
    const { store, close } = await open();
    try {
      const events: BoundaryEvent[] = [];
      const boundary = new ToolBoundary({ store, tools: [lookup], observe: (e) => events.push(e) });
      const run = await boundary.startRun();
      await boundary.invoke(run, {
        toolCallId: "c1",
        runId: run.runId,
        toolName: "lookup",
        input: {},
      });
      const record = await boundary.inspect(run.runId, "c1");
      assert.equal(record !== null && "proof" in record, false);
      assert.equal(events.some((e) => "proof" in e), false);
      const report = await boundary.endRunReport(run);
      assert.equal("receipt" in report, false);
      const bundle = await boundary.exportRun(run.runId);
      assert.equal(bundle.receipt, null);
      assert.equal(bundle.facts, null);
      // Nothing signed: a completed record without a proof does not verify.
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: false,
        toolCallId: "c1",
        reason: "UNSIGNED",
      });
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: a call in flight at the end is INCOMPLETE in the receipt, and its later proof checks`, async () => {
    const { store, close } = await open();
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = {
        ...lookup,
        name: "slow",
        execute: async () => (await gate, { found: true, key: "s" }),
      };
      const boundary = new ToolBoundary({
        store,
        tools: [lookup, slow],
        ledgerKey: keys.privateKey,
      });
      const run = await boundary.startRun();
      const pending = boundary.invoke(run, {
        toolCallId: "s1",
        runId: run.runId,
        toolName: "slow",
        input: {},
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const report = await boundary.endRunReport(run.runId);
      assert.deepEqual(report.receipt?.calls, [{
        toolCallId: "s1",
        hash: null,
        state: "INCOMPLETE",
      }]);
      release();
      assert.equal((await pending).status, "READY");
      const bundle = await boundary.exportRun(run.runId);
      assert.equal(bundle.records[0]?.status, "READY");
      assert.deepEqual(bundle.receipt, report.receipt);
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: true,
        sealed: true,
        calls: 1,
      });
      bundle.records[0]!.raw = "edited";
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: false,
        toolCallId: "s1",
        reason: "ALTERED",
      });
    } finally {
      await close();
    }
  });
}

Deno.test("concurrent first ends of a run keep one seal: every end answers the same receipt", async () => {
  const store = new MemoryStore();
  const { boundary, runId } = await sealedRun(store, { end: false });
  const ends = await Promise.all([1, 2, 3].map(() => boundary.endRunReport(runId)));
  assert.deepEqual(ends[1]?.receipt, ends[0]?.receipt);
  assert.deepEqual(ends[2]?.receipt, ends[0]?.receipt);
  assert.deepEqual((await boundary.exportRun(runId)).receipt, ends[0]?.receipt);
});

Deno.test("hostile bundles give ok: false or a TypeError, never ok: true", async () => {
  const { boundary, runId } = await sealedRun(new MemoryStore());
  const clean = await boundary.exportRun(runId);
  let reads = 0;
  const getter = {
    ...structuredClone(clean),
    get records() {
      reads++;
      return reads === 1 ? structuredClone(clean.records) : [];
    },
  };
  // A getter is read once: the copy it gave is what is checked.
  assert.equal((await verifyRun(getter, keys.publicKey)).ok, true);
  assert.equal(reads, 1);
  const throwing = {
    ...clean,
    get receipt(): never {
      throw new Error("no");
    },
  };
  // A bundle past the length bound: the copy stops there, a TypeError.
  const huge = { ...clean, records: new Array(2 ** 20).fill(clean.records[0]) };
  await assert.rejects(verifyRun(huge, keys.publicKey, { maxLength: 1_000_000 }), TypeError);
  const holey = { ...clean, records: [, clean.records[1]] };
  const cases: unknown[] = [
    null,
    "bundle",
    [],
    {},
    { ...clean, format: "other" },
    { ...clean, records: "x" },
    { ...clean, records: [null] },
    { ...clean, records: [{ ...clean.records[0], toolCallId: 5 }] },
    { ...clean, run: null },
    throwing,
    holey,
    new Proxy(clean, {
      get: () => {
        throw new Error("trap");
      },
    }),
    { ...clean, receipt: "sealed" },
    { ...clean, receipt: { ...clean.receipt, calls: "x" } },
    { ...clean, facts: "x" },
    { ...clean, records: clean.records.map((r) => ({ ...r, proof: "x" })) },
    { ...clean, records: clean.records.map((r) => ({ ...r, proof: { ...r.proof, sig: 7 } })) },
  ];
  for (const bundle of cases) {
    let verdict;
    try {
      verdict = await verifyRun(bundle, keys.publicKey);
    } catch (error) {
      assert.ok(error instanceof TypeError, String(error));
      continue;
    }
    assert.equal(verdict.ok, false, JSON.stringify(verdict));
  }
  await assert.rejects(verifyRun(clean, { kty: "OKP", crv: "Ed25519" }), TypeError);
  await assert.rejects(verifyRun(clean, keys.privateKey.d as never), TypeError);
});

Deno.test("verifyRun() refuses options it cannot read or that name no run, with a TypeError", async () => {
  const { boundary, runId } = await sealedRun(new MemoryStore());
  const clean = await boundary.exportRun(runId);
  const cases: unknown[] = [
    new Proxy({}, {
      get: () => {
        throw new Error("trap");
      },
    }),
    { keyId: 5 },
    { maxLength: "big" },
    { run: runId },
    { run: { runId: 5 } },
    { run: { runId, startedAt: "0" } },
    { run: { runId, startedAt: 1.5 } },
    {
      run: {
        get runId(): never {
          throw new Error("getter");
        },
      },
    },
  ];
  for (const options of cases) {
    await assert.rejects(verifyRun(clean, keys.publicKey, options as never), TypeError);
  }
  assert.deepEqual(await verifyRun(clean, keys.publicKey, { run: clean.run }), {
    ok: true,
    sealed: true,
    calls: 3,
  });
  assert.deepEqual(await verifyRun(clean, keys.publicKey, { run: { runId: "run_other" } }), {
    ok: false,
    toolCallId: null,
    reason: "OTHER_RUN",
  });
});

Deno.test("invoke() with a ledgerKey refuses a run context without its startedAt, recording nothing", async () => {
  const store = new MemoryStore();
  const boundary = new ToolBoundary({ store, tools: [lookup], ledgerKey: keys.privateKey });
  const run = await boundary.startRun();
  const { startedAt: _startedAt, ...partial } = run;
  await assert.rejects(
    boundary.invoke(partial as never, {
      toolCallId: "c1",
      runId: run.runId,
      toolName: "lookup",
      input: { key: "a" },
    }),
    TypeError,
    "RunContext",
  );
  assert.equal(await store.get(run.runId, "c1"), null);
});

Deno.test("verifyRun() turns a public key whose reads throw into its TypeError, reading each member once", async () => {
  const { boundary, runId } = await sealedRun(new MemoryStore());
  const clean = await boundary.exportRun(runId);
  class KeyTrap extends Error {}
  const reads: string[] = [];
  const hostile: unknown[] = [
    new Proxy({}, {
      get: () => {
        throw new KeyTrap("trap");
      },
    }),
    {
      kty: "OKP",
      crv: "Ed25519",
      get x(): never {
        throw new KeyTrap("getter");
      },
    },
    new Proxy({ ...keys.publicKey }, {
      get: (target, name) => (reads.push(String(name)), Reflect.get(target, name)),
    }),
  ];
  for (const key of hostile.slice(0, 2)) {
    const error = await verifyRun(clean, key as JsonWebKey).then(() => null, (e) => e);
    assert.ok(error instanceof TypeError, String(error));
    assert.match(error.message, /^Invalid public key/);
    assert.ok(error.cause instanceof KeyTrap);
  }
  // A key that answers reads verifies as its members, each read once.
  assert.deepEqual(await verifyRun(clean, hostile[2] as JsonWebKey), {
    ok: true,
    sealed: true,
    calls: 3,
  });
  assert.deepEqual(reads.sort(), ["crv", "kty", "x"]);
  const throwingLedgerKey = {
    ...keys.privateKey,
    get d(): never {
      throw new KeyTrap("d");
    },
  };
  assert.throws(
    () => new ToolBoundary({ tools: [lookup], ledgerKey: throwingLedgerKey }),
    TypeError,
    "Invalid ledgerKey",
  );
});
