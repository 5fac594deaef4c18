/**
 * `GET /v1/runs/:runId/export`, `GET /v1/ledger-key`, and the verify command on a bundle file.
 */
import assert from "node:assert/strict";
import { createApp } from "../../src/http/mod.ts";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/stores/memory.ts";
import { memoryStateForTests } from "../../src/stores/memory_state.ts";
import { verifyRun } from "./_verify.ts";
import { keys, lookup, otherKeys } from "./_run.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const harness = { authorization: `Bearer ${HARNESS}` };

function app(withKey: boolean, store = new MemoryStore()) {
  const boundary = new ToolBoundary({
    store,
    tools: [lookup],
    ...(withKey ? { ledgerKey: keys.privateKey } : {}),
  });
  return createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
}

async function runOver(served: ReturnType<typeof app>): Promise<string> {
  const started = await served.request("/v1/runs", {
    method: "POST",
    headers: { ...harness, "content-type": "application/json" },
    body: "{}",
  });
  const { runId } = await started.json();
  const call = await served.request(`/v1/runs/${runId}/tool-calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
    body: JSON.stringify({ toolCallId: "call_1", runId, toolName: "lookup", input: { key: "a" } }),
  });
  assert.equal(call.status, 200);
  const ended = await served.request(`/v1/runs/${runId}/end`, { method: "POST", headers: harness });
  assert.equal(ended.status, 200);
  return runId;
}

Deno.test("GET /v1/runs/:runId/export gives a bundle that verifies with GET /v1/ledger-key's key", async () => {
  const served = app(true);
  const runId = await runOver(served);
  const keyRes = await served.request("/v1/ledger-key");
  assert.equal(keyRes.status, 200);
  const { keyId, publicKey } = await keyRes.json();
  assert.deepEqual(publicKey, keys.publicKey);
  assert.equal(typeof keyId, "string");
  const res = await served.request(`/v1/runs/${runId}/export`, { headers: harness });
  assert.equal(res.status, 200);
  const bundle = await res.json();
  assert.equal(bundle.receipt.keyId, keyId);
  assert.deepEqual(await verifyRun(bundle, publicKey), { ok: true, sealed: true, calls: 1 });
  // Harness only, and the usual 404 for an unknown run.
  const agent = await served.request(`/v1/runs/${runId}/export`, {
    headers: { authorization: `Bearer ${AGENT}` },
  });
  assert.equal(agent.status, 403);
  assert.equal(
    (await served.request("/v1/runs/run_unknown/export", { headers: harness })).status,
    404,
  );
  const openapi = await (await served.request("/openapi.json")).json();
  assert.ok(openapi.paths["/v1/runs/{runId}/export"]?.get);
  assert.ok(openapi.paths["/v1/ledger-key"]?.get);
});

Deno.test("GET /v1/ledger-key is 404 NOT_FOUND without a ledger key; the export still works", async () => {
  const served = app(false);
  const res = await served.request("/v1/ledger-key");
  assert.equal(res.status, 404);
  assert.equal((await res.json()).code, "NOT_FOUND");
  const runId = await runOver(served);
  const bundle = await (await served.request(`/v1/runs/${runId}/export`, { headers: harness }))
    .json();
  assert.equal(bundle.receipt, null);
});

Deno.test("the verify command exits 0 on a bundle that verifies and 1 with the verdict when not", async () => {
  const served = app(true);
  const runId = await runOver(served);
  const bundle = await (await served.request(`/v1/runs/${runId}/export`, { headers: harness }))
    .json();
  const dir = await Deno.makeTempDir({ prefix: "tb-verify-" });
  try {
    const run = async (bundleValue: unknown, key: unknown) => {
      await Deno.writeTextFile(`${dir}/bundle.json`, JSON.stringify(bundleValue));
      await Deno.writeTextFile(`${dir}/public.jwk`, JSON.stringify(key));
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          "src/verify/mod.ts",
          `${dir}/bundle.json`,
          `${dir}/public.jwk`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      return { code: out.code, stdout: new TextDecoder().decode(out.stdout).trim() };
    };
    assert.deepEqual(await run(bundle, keys.publicKey), {
      code: 0,
      stdout: '{"ok":true,"sealed":true,"calls":1}',
    });
    // The key file may be what GET /v1/ledger-key answers.
    const served2 = await (await served.request("/v1/ledger-key")).json();
    assert.equal((await run(bundle, served2)).code, 0);
    bundle.facts[0].content = { found: false };
    assert.deepEqual(await run(bundle, keys.publicKey), {
      code: 1,
      stdout: '{"ok":false,"toolCallId":null,"reason":"FACTS_ALTERED"}',
    });
    assert.equal((await run("not a bundle", keys.publicKey)).code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the verify command refuses a bundle or key file that names a member twice", async () => {
  const served = app(true);
  const runId = await runOver(served);
  const text = await (await served.request(`/v1/runs/${runId}/export`, { headers: harness }))
    .text();
  const dir = await Deno.makeTempDir({ prefix: "tb-verify-" });
  try {
    const run = async (bundleText: string, keyText: string) => {
      await Deno.writeTextFile(`${dir}/bundle.json`, bundleText);
      await Deno.writeTextFile(`${dir}/public.jwk`, keyText);
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          "src/verify/mod.ts",
          `${dir}/bundle.json`,
          `${dir}/public.jwk`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes).trim();
      return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
    };
    const key = JSON.stringify(keys.publicKey);
    assert.equal((await run(text, key)).code, 0);
    // The last of two members is what JSON.parse keeps: here the edited raw response.
    const record = '"raw":';
    assert.ok(text.includes(record));
    const twice = text.replace(record, `"raw":{"edited":true},${record}`);
    const refused = await run(twice, key);
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, "");
    assert.match(refused.stderr, /names the member "raw" twice/);
    // The same name spelled with an escape is the same name.
    const escaped = await run(text.replace('"format":', '"form\u0061t":"x","format":'), key);
    assert.equal(escaped.code, 2);
    assert.match(escaped.stderr, /names the member "format" twice/);
    const keyTwice = key.replace('"x":', `"x":"${otherKeys.publicKey.x}","x":`);
    const badKey = await run(text, keyTwice);
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /public\.jwk: an object names the member "x" twice/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET /v1/runs/:runId/verdict verifies the store's run with the boundary's key: ok, an edit in the store, no key", async () => {
  const store = new MemoryStore();
  const served = app(true, store);
  const runId = await runOver(served);
  const verdictOf = async () => {
    const res = await served.request(`/v1/runs/${runId}/verdict`, { headers: harness });
    assert.equal(res.status, 200);
    return (await res.json()).verdict;
  };
  assert.deepEqual(await verdictOf(), { ok: true, sealed: true, calls: 1 });
  // An operator with write access edits what the tool returned.
  const records = memoryStateForTests(store).records.get(runId)!;
  const record = records.get("call_1")!;
  records.set("call_1", { ...record, rawJson: JSON.stringify({ key: "a", value: "edited" }) });
  assert.deepEqual(await verdictOf(), { ok: false, toolCallId: "call_1", reason: "ALTERED" });
  const agent = await served.request(`/v1/runs/${runId}/verdict`, {
    headers: { authorization: `Bearer ${AGENT}` },
  });
  assert.equal(agent.status, 403);

  const unsigned = app(false);
  const plain = await runOver(unsigned);
  const res = await unsigned.request(`/v1/runs/${plain}/verdict`, { headers: harness });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { verdict: null });
});

Deno.test("GET /v1/runs/:runId/verdict is UNSIGNED for a call in flight at the seal whose proof was taken off in the store", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow = defineTool({
    name: "slow",
    readOnly: true,
    execute: async () => (await gate, { slow: true }),
    project: () => ({ evidence: "EVIDENCE_FOUND", scope: "slow", content: true }),
  });
  const store = new MemoryStore();
  const boundary = new ToolBoundary({ store, tools: [slow], ledgerKey: keys.privateKey });
  const served = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  const run = await boundary.startRun();
  const pending = boundary.invoke(run, {
    toolCallId: "s1",
    runId: run.runId,
    toolName: "slow",
    input: {},
  });
  while ((await store.get(run.runId, "s1")) === null) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const ended = await served.request(`/v1/runs/${run.runId}/end`, {
    method: "POST",
    headers: harness,
  });
  assert.equal(ended.status, 200);
  release();
  assert.equal((await pending).status, "READY");
  const verdictOf = async () => {
    const res = await served.request(`/v1/runs/${run.runId}/verdict`, { headers: harness });
    assert.equal(res.status, 200);
    return (await res.json()).verdict;
  };
  assert.deepEqual(await verdictOf(), { ok: true, sealed: true, calls: 1 });
  const records = memoryStateForTests(store).records.get(run.runId)!;
  const { proof: _proof, ...unsigned } = records.get("s1")!;
  records.set("s1", { ...unsigned, rawJson: JSON.stringify({ slow: "forged" }) });
  assert.deepEqual(await verdictOf(), { ok: false, toolCallId: "s1", reason: "UNSIGNED" });
});
