/**
 * The Deno entry points over real HTTP on loopback: `deno serve edge/deno.ts` (what Deno Deploy
 * runs) and the dev server.
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, HARNESS_TOKEN, over, wholeRun } from "../runtime/flow.ts";
import { ROOT, serveDeno, start } from "../runtime/process.ts";
import { verifyRun } from "../../src/verify/mod.ts";

const DENO = Deno.execPath();
const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };

Deno.test("deno serve edge/deno.ts serves a whole run over HTTP", async () => {
  const [child, base] = await serveDeno("edge/deno.ts", {
    AGENT_TOKEN,
    HARNESS_TOKEN,
    ...NO_UPSTASH,
  });
  try {
    assert.match(child.output(), /tool-boundary: memory store/);
    const { steps } = await wholeRun(over(base));
    console.log(`deno serve: ${steps.join("; ")}`);
  } finally {
    await child.stop();
  }
});

Deno.test("deno serve edge/deno.ts refuses to start without both tokens", async () => {
  const child = start(
    DENO,
    ["serve", "--allow-net", "--allow-env", "--port", "0", "edge/deno.ts"],
    {
      cwd: ROOT,
      env: { AGENT_TOKEN: "", HARNESS_TOKEN, ...NO_UPSTASH },
    },
  );
  const status = await child.status;
  assert.notEqual(status.code, 0);
  assert.match(child.output(), /Refusing to start: AGENT_TOKEN and HARNESS_TOKEN must both be set/);
  assert.doesNotMatch(child.output(), /Listening/);
});

Deno.test("the dev server binds to loopback, prints its tokens and ledger key, they work, exports verify, and it logs failed calls by code and error name only", async () => {
  const child = start(
    DENO,
    ["run", "--allow-net", "--allow-env", "--allow-read", "edge/dev.ts"],
    { cwd: ROOT, env: { PORT: "0", AGENT_TOKEN: "", HARNESS_TOKEN: "", ...NO_UPSTASH } },
  );
  try {
    const [, base] = await child.waitFor(
      /dev server on (http:\/\/127\.0\.0\.1:\d+) \(loopback only\)/,
    );
    const [, agent] = await child.waitFor(/agent token +\(generated for this process\): (\S+)/);
    const [, harness] = await child.waitFor(/harness token \(generated for this process\): (\S+)/);
    assert.notEqual(agent, harness);
    const started = await fetch(`${base}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${harness}`, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(started.status, 201);
    const { runId } = await started.json();
    const res = await fetch(`${base}/v1/runs/${runId}/tool-calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${agent}`, "content-type": "application/json" },
      body: JSON.stringify({
        toolCallId: "call_1",
        toolName: "search_runbook",
        input: { query: "tls" },
      }),
    });
    assert.equal((await res.json()).evidence, "EVIDENCE_FOUND");
    for (const [toolCallId, toolName] of [["call_2", "query_metrics"], ["call_3", "no_such"]]) {
      const failed = await fetch(`${base}/v1/runs/${runId}/tool-calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${agent}`, "content-type": "application/json" },
        body: JSON.stringify({ toolCallId, toolName, input: { metric: "p99" } }),
      });
      assert.equal((await failed.json()).status, "ERROR");
    }
    // Its own ledger key: printed, served, and the run's export verifies with it.
    const [, printed] = await child.waitFor(
      /ledger key +\(generated for this process\): public JWK (\{[^\n]*\}) \(GET \/v1\/ledger-key\)/,
    );
    const served = await (await fetch(`${base}/v1/ledger-key`)).json();
    assert.deepEqual(served.publicKey, JSON.parse(printed!));
    assert.equal(JSON.parse(printed!).d, undefined);
    const ended = await fetch(`${base}/v1/runs/${runId}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${harness}` },
    });
    assert.equal(ended.status, 200);
    const bundle = await (await fetch(`${base}/v1/runs/${runId}/export`, {
      headers: { authorization: `Bearer ${harness}` },
    })).json();
    assert.deepEqual(await verifyRun(bundle, served.publicKey), {
      ok: true,
      sealed: true,
      calls: 2,
    });
    await child.waitFor(/call call_2 failed: EXECUTION_FAILED \(Error\)\n/);
    await child.waitFor(/call refused: UNKNOWN_TOOL\n/);
    // The executor's error message (an address and a token) is never logged.
    assert.doesNotMatch(child.output(), /ECONNREFUSED|demo-secret|p99/);
  } finally {
    await child.stop();
  }
});
