/**
 * RFC 3161 timestamps of sealed runs, against real Time Stamping Authorities (`openssl ts`
 * behind a loopback HTTP server, each with a throwaway CA): a good token verifies with its time;
 * a re-signed run with the old token, another receipt's token, another TSA's token do not; a TSA
 * that is down leaves the run unsealed until a later end; one TSA request per seal, none per call.
 */
import assert from "node:assert/strict";
import { BoundaryError, ERROR_MESSAGES, ToolBoundary } from "../../src/mod.ts";
import type { RunBundle } from "../../src/harness/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import {
  checkLedgerKey,
  fromBase64url,
  importSigner,
  receiptMessage,
  recordHash,
  recordMessage,
  stampedText,
  toBase64url,
} from "../../src/core/ledger.ts";
import { rfc3161 } from "../../src/timestamp/mod.ts";
import { STORES } from "../support/stores.ts";
import { startTsa, type TestTsa } from "../support/tsa.ts";
import { CALLS, keys, lookup, sealedRun } from "./_run.ts";
import { verifyRun } from "./_verify.ts";

const tsa = await startTsa("first");
const otherTsa = await startTsa("second");
globalThis.addEventListener("unload", () => {
  // Each test file's servers end with it; the files of the CAs go too.
  Deno.removeSync(tsa.dir, { recursive: true });
  Deno.removeSync(otherTsa.dir, { recursive: true });
});

const badTimestamp = { ok: false, toolCallId: null, reason: "BAD_TIMESTAMP" };

/** A sealed run stamped by `by`, its bundle, and the TSA requests the seal made. */
async function stampedRun(
  store: Store,
  by: TestTsa = tsa,
): Promise<{ boundary: ToolBoundary; runId: string; bundle: RunBundle; requests: number }> {
  const before = by.requests;
  const { boundary, runId } = await sealedRun(store, { timestamp: rfc3161(by.url) });
  const bundle = await boundary.exportRun(runId);
  return { boundary, runId, bundle, requests: by.requests - before };
}

/** The DER of the first certificate of a PEM text. */
function derOf(pem: string): Uint8Array {
  const base64 = pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/**
 * What a key holder can do after the fact: change a record and sign the run again, record and
 * receipt, keeping the old timestamp.
 */
async function resigned(bundle: RunBundle): Promise<RunBundle> {
  const signer = await importSigner(checkLedgerKey(keys.privateKey, undefined));
  const forged = structuredClone(bundle);
  const { runId, startedAt } = forged.run;
  const record = forged.records[0]!;
  record.raw = { found: false, forged: true };
  const hash = await recordHash(record);
  record.proof = {
    hash,
    sig: await signer.sign(recordMessage(runId, startedAt, record.toolCallId, hash)),
    keyId: signer.keyId,
  };
  const receipt = forged.receipt!;
  receipt.calls[0] = { toolCallId: record.toolCallId, hash };
  receipt.sig = await signer.sign(receiptMessage(receipt));
  return forged;
}

for (const { name, open } of STORES) {
  Deno.test(`${name}: a sealed run stamped by a TSA verifies with its time, trusting the CA or the TSA's own certificate`, async () => {
    const { store, close } = await open();
    try {
      const before = Date.now();
      const { boundary, runId, bundle, requests } = await stampedRun(store);
      const after = Date.now();
      assert.equal(requests, 1);
      const token = fromBase64url(bundle.receipt?.timestamp);
      assert.ok(token !== null && token.length > 100);
      // The same receipt, token included, on every later end and export; the TSA not asked.
      const asked = tsa.requests;
      assert.deepEqual((await boundary.endRunReport(runId)).receipt, bundle.receipt);
      assert.deepEqual(await boundary.exportRun(runId), bundle);
      const verdict = await verifyRun(bundle, keys.publicKey, { tsaCertificates: [tsa.caPem] });
      assert.ok(verdict.ok && verdict.timestampedAt !== undefined);
      // genTime has whole seconds here.
      assert.ok(verdict.timestampedAt >= Math.floor(before / 1000) * 1000);
      assert.ok(verdict.timestampedAt <= after);
      assert.deepEqual(verdict, {
        ok: true,
        sealed: true,
        calls: CALLS.length,
        timestampedAt: verdict.timestampedAt,
      });
      for (
        const tsaCertificates of [
          [tsa.tsaPem],
          [derOf(tsa.caPem)],
          [otherTsa.caPem, tsa.tsaPem],
          [otherTsa.caPem + tsa.caPem],
        ]
      ) {
        assert.deepEqual(await verifyRun(bundle, keys.publicKey, { tsaCertificates }), verdict);
      }
      // Through JSON, as an auditor gets it.
      assert.deepEqual(
        await verifyRun(JSON.parse(JSON.stringify(bundle)), keys.publicKey, {
          tsaCertificates: [tsa.caPem],
        }),
        verdict,
      );
      // Without tsaCertificates the token is not read: ok, without a time.
      assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
        ok: true,
        sealed: true,
        calls: CALLS.length,
      });
      // Verifying asks no TSA.
      assert.equal(tsa.requests, asked);
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: a run re-signed after the fact with its old timestamp is BAD_TIMESTAMP`, async () => {
    const { store, close } = await open();
    try {
      const { bundle } = await stampedRun(store);
      const forged = await resigned(bundle);
      assert.equal(forged.receipt?.timestamp, bundle.receipt?.timestamp);
      // The key holder's forgery holds without the timestamp checked.
      assert.deepEqual(await verifyRun(forged, keys.publicKey), {
        ok: true,
        sealed: true,
        calls: CALLS.length,
      });
      assert.deepEqual(
        await verifyRun(forged, keys.publicKey, { tsaCertificates: [tsa.caPem] }),
        badTimestamp,
      );
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: another receipt's timestamp, another TSA's, an edited or missing token is BAD_TIMESTAMP`, async () => {
    const { store, close } = await open();
    try {
      const first = await stampedRun(store);
      const second = await stampedRun(store);
      const trust = { tsaCertificates: [tsa.caPem] };
      // Another receipt's token.
      const swapped = structuredClone(first.bundle);
      swapped.receipt!.timestamp = second.bundle.receipt!.timestamp!;
      assert.deepEqual(await verifyRun(swapped, keys.publicKey, trust), badTimestamp);
      // The receipt changed at all (here a member added) no longer matches its token.
      const added = structuredClone(first.bundle) as unknown as {
        receipt: Record<string, unknown>;
      };
      added.receipt.note = "x";
      assert.deepEqual(await verifyRun(added, keys.publicKey, trust), badTimestamp);
      // A token of another TSA, under another CA: not trusted.
      const other = await stampedRun(store, otherTsa);
      assert.equal(other.requests, 1);
      assert.deepEqual(await verifyRun(other.bundle, keys.publicKey, trust), badTimestamp);
      assert.equal(
        (await verifyRun(other.bundle, keys.publicKey, {
          tsaCertificates: [otherTsa.caPem],
        })).ok,
        true,
      );
      assert.deepEqual(
        await verifyRun(first.bundle, keys.publicKey, { tsaCertificates: [otherTsa.tsaPem] }),
        badTimestamp,
      );
      // The token edited: one byte of its signature, or not a token at all.
      const token = fromBase64url(first.bundle.receipt!.timestamp)!;
      const edited = Uint8Array.from(token);
      edited[edited.length - 3]! ^= 0x01;
      for (const timestamp of [toBase64url(edited), "not-a-token", "", toBase64url(token) + "="]) {
        const bundle = structuredClone(first.bundle);
        bundle.receipt!.timestamp = timestamp;
        assert.deepEqual(await verifyRun(bundle, keys.publicKey, trust), badTimestamp, timestamp);
      }
      // A sealed run without a token, when one is required.
      const unstamped = await sealedRun(store);
      const plain = await unstamped.boundary.exportRun(unstamped.runId);
      assert.equal(plain.receipt?.timestamp, undefined);
      assert.deepEqual(await verifyRun(plain, keys.publicKey, trust), badTimestamp);
      const stripped = structuredClone(first.bundle);
      delete stripped.receipt!.timestamp;
      assert.deepEqual(await verifyRun(stripped, keys.publicKey, trust), badTimestamp);
      // A run not sealed has nothing to stamp: it verifies as not sealed.
      const open = await sealedRun(store, { end: false, timestamp: rfc3161(tsa.url) });
      assert.deepEqual(
        await verifyRun(await open.boundary.exportRun(open.runId), keys.publicKey, trust),
        {
          ok: true,
          sealed: false,
          calls: CALLS.length,
        },
      );
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: endRun with the TSA down fails with TIMESTAMP_UNAVAILABLE, seals nothing, and a later endRun seals the same facts`, async () => {
    const { store, close } = await open();
    try {
      const boundary = new ToolBoundary({
        store,
        tools: [lookup],
        ledgerKey: keys.privateKey,
        timestamp: rfc3161(tsa.url),
      });
      const reference = await sealedRun(store);
      const expected = await reference.boundary.endRunReport(reference.runId);
      const run = await boundary.startRun();
      for (const { toolCallId, key } of CALLS) {
        await boundary.invoke(run, {
          toolCallId,
          runId: run.runId,
          toolName: "lookup",
          input: { key },
        });
      }
      const before = tsa.requests;
      tsa.down = true;
      let error: unknown;
      try {
        error = await boundary.endRun(run).then(() => null, (e) => e);
      } finally {
        tsa.down = false;
      }
      assert.ok(error instanceof BoundaryError);
      assert.equal(error.code, "TIMESTAMP_UNAVAILABLE");
      assert.equal(error.message, ERROR_MESSAGES.TIMESTAMP_UNAVAILABLE);
      assert.equal(tsa.requests - before, 1);
      // Ended (no call begins any more) but not sealed: nothing unattested was kept.
      const unsealed = await boundary.exportRun(run.runId);
      assert.equal(unsealed.run.status, "ENDED");
      assert.equal(unsealed.receipt, null);
      assert.equal(unsealed.facts, null);
      const late = await boundary.invoke(run, {
        toolCallId: "late",
        runId: run.runId,
        toolName: "lookup",
        input: { key: "a" },
      });
      assert.equal(late.status === "ERROR" && late.code, "RUN_INACTIVE");
      // The TSA is back: the next end seals, once, with the facts of the run.
      const report = await boundary.endRunReport(run);
      assert.equal(tsa.requests - before, 2);
      const strip = (facts: typeof report.facts) =>
        facts.map(({ observedAt: _at, ...fact }) => fact);
      assert.deepEqual(strip(report.facts), strip(expected.facts));
      assert.equal(report.omitted, expected.omitted);
      const sealed = await boundary.exportRun(run.runId);
      assert.deepEqual(sealed.receipt, report.receipt);
      assert.deepEqual(sealed.facts, report.facts);
      const verdict = await verifyRun(sealed, keys.publicKey, { tsaCertificates: [tsa.caPem] });
      assert.equal(verdict.ok && typeof verdict.timestampedAt, "number");
      assert.deepEqual((await boundary.endRunReport(run)).receipt, report.receipt);
      assert.equal(tsa.requests - before, 2);
    } finally {
      await close();
    }
  });

  Deno.test(`${name}: one TSA request per seal and none per call`, async () => {
    const { store, close } = await open();
    try {
      const boundary = new ToolBoundary({
        store,
        tools: [lookup],
        ledgerKey: keys.privateKey,
        timestamp: rfc3161(tsa.url),
      });
      const before = tsa.requests;
      const run = await boundary.startRun();
      for (let i = 0; i < 20; i++) {
        const envelope = {
          toolCallId: `c${i}`,
          runId: run.runId,
          toolName: "lookup",
          input: { key: "a" },
        };
        assert.equal((await boundary.invoke(run, envelope)).status, "READY");
      }
      await boundary.exportRun(run.runId);
      assert.equal(tsa.requests - before, 0);
      await boundary.endRun(run);
      assert.equal(tsa.requests - before, 1);
      await boundary.endRun(run);
      await boundary.endRunReport(run.runId);
      await boundary.exportRun(run.runId);
      assert.equal(tsa.requests - before, 1);
    } finally {
      await close();
    }
  });
}

Deno.test("a timestamp that is not a function, or without a ledgerKey, is a TypeError at construction", () => {
  const stamp = rfc3161(tsa.url);
  assert.throws(
    () =>
      new ToolBoundary({
        tools: [lookup],
        ledgerKey: keys.privateKey,
        timestamp: "https://tsa.example" as unknown as typeof stamp,
      }),
    TypeError,
  );
  assert.throws(() => new ToolBoundary({ tools: [lookup], timestamp: stamp }), TypeError);
  assert.throws(() => rfc3161("ftp://tsa.example"), TypeError);
  assert.throws(() => rfc3161(tsa.url, { timeoutMs: 0 }), TypeError);
});

Deno.test("a timestamp function that answers no token, or throws, is TIMESTAMP_UNAVAILABLE and seals nothing", async () => {
  const answers: (() => Promise<unknown>)[] = [
    () => Promise.resolve("token"),
    () => Promise.resolve(new Uint8Array(0)),
    () => Promise.resolve(new Uint8Array(64 * 1024 + 1)),
    () => Promise.reject(new Error("TSA down")),
  ];
  for (const answer of answers) {
    const store = new MemoryStore();
    const { boundary, runId } = await sealedRun(store, {
      end: false,
      timestamp: answer as () => Promise<Uint8Array>,
    });
    const error = await boundary.endRun(runId).then(() => null, (e) => e);
    assert.ok(error instanceof BoundaryError && error.code === "TIMESTAMP_UNAVAILABLE");
    assert.equal((await boundary.exportRun(runId)).receipt, null);
  }
  // The TSA unreachable: nothing listens on its port any more.
  const gone = await startTsa("gone");
  const url = gone.url;
  await gone.stop();
  const { boundary, runId } = await sealedRun(new MemoryStore(), {
    end: false,
    timestamp: rfc3161(url),
  });
  const error = await boundary.endRun(runId).then(() => null, (e) => e);
  assert.ok(error instanceof BoundaryError && error.code === "TIMESTAMP_UNAVAILABLE");
});

Deno.test("POST /v1/runs/:runId/end with the TSA down is 503 TIMESTAMP_UNAVAILABLE; the next end seals", async () => {
  const boundary = new ToolBoundary({
    tools: [lookup],
    ledgerKey: keys.privateKey,
    timestamp: rfc3161(tsa.url),
  });
  const harness = { authorization: "Bearer harness-token-0123456789abcdef" };
  const app = createApp({
    boundary,
    agentToken: "agent-token-0123456789abcdef",
    harnessToken: "harness-token-0123456789abcdef",
    onError: () => {},
  });
  const run = await boundary.startRun();
  tsa.down = true;
  let res: Response;
  try {
    res = await app.request(`/v1/runs/${run.runId}/end`, { method: "POST", headers: harness });
  } finally {
    tsa.down = false;
  }
  assert.equal(res.status, 503);
  assert.equal((await res.json()).code, "TIMESTAMP_UNAVAILABLE");
  const again = await app.request(`/v1/runs/${run.runId}/end`, {
    method: "POST",
    headers: harness,
  });
  assert.equal(again.status, 200);
  assert.equal(typeof (await again.json()).receipt.timestamp, "string");
});

Deno.test("verifyRun() refuses tsaCertificates that are not certificates with a TypeError", async () => {
  const { boundary, runId } = await sealedRun(new MemoryStore(), { timestamp: rfc3161(tsa.url) });
  const bundle = await boundary.exportRun(runId);
  for (
    const tsaCertificates of [
      [],
      ["not a certificate"],
      [new Uint8Array([1, 2, 3])],
      [42],
      "pem",
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    ]
  ) {
    await assert.rejects(
      verifyRun(bundle, keys.publicKey, {
        tsaCertificates: tsaCertificates as unknown as string[],
      }),
      TypeError,
      JSON.stringify(tsaCertificates),
    );
  }
});

Deno.test("the verify command checks the timestamp with --tsa, and the run with --run-id and --started-at", async () => {
  const { boundary, runId } = await sealedRun(new MemoryStore(), { timestamp: rfc3161(tsa.url) });
  const bundle = await boundary.exportRun(runId);
  const dir = await Deno.makeTempDir({ prefix: "tb-verify-" });
  try {
    await Deno.writeTextFile(`${dir}/bundle.json`, JSON.stringify(bundle));
    await Deno.writeTextFile(`${dir}/public.jwk`, JSON.stringify(keys.publicKey));
    await Deno.writeTextFile(`${dir}/ca.pem`, tsa.caPem);
    await Deno.writeTextFile(`${dir}/other.pem`, otherTsa.caPem);
    const run = async (...extra: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          "src/verify/mod.ts",
          `${dir}/bundle.json`,
          `${dir}/public.jwk`,
          ...extra,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout).trim();
      return { code: out.code, verdict: stdout === "" ? null : JSON.parse(stdout) };
    };
    const ok = await run("--tsa", `${dir}/ca.pem`);
    assert.equal(ok.code, 0);
    assert.equal(typeof ok.verdict.timestampedAt, "number");
    assert.deepEqual(await run("--tsa", `${dir}/other.pem`), { code: 1, verdict: badTimestamp });
    assert.deepEqual(await run("--tsa", `${dir}/other.pem`, "--tsa", `${dir}/ca.pem`), ok);
    const started = String(bundle.run.startedAt);
    assert.equal((await run("--run-id", runId, "--started-at", started)).code, 0);
    assert.deepEqual(await run("--run-id", runId, "--started-at", "1"), {
      code: 1,
      verdict: { ok: false, toolCallId: null, reason: "OTHER_RUN" },
    });
    for (
      const bad of [
        ["--tsa"],
        ["--started-at", started],
        ["--run-id", runId, "--started-at", "soon"],
        ["--unknown"],
        ["--tsa", `${dir}/missing.pem`],
        ["--tsa", `${dir}/public.jwk`],
      ]
    ) {
      assert.equal((await run(...bad)).code, 2, bad.join(" "));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the stamped text is the receipt's canonical JSON without its timestamp, sig included", async () => {
  const { bundle } = await stampedRun(new MemoryStore());
  const { timestamp: _token, ...rest } = bundle.receipt!;
  assert.equal(stampedText(bundle.receipt!), stampedText(rest));
  assert.ok(stampedText(rest).includes(`"sig":"${rest.sig}"`));
  assert.ok(!stampedText(bundle.receipt!).includes("timestamp"));
});
