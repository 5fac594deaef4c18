/**
 * One whole run against a served app, the same in every runtime: start, calls that end READY
 * with and without evidence, a refused writable tool, a tool that throws, the record read by
 * each role, the end with its facts. Throws an AssertionError on the first surprise.
 *
 * `wholeRun` drives the demo tools of edge/; `exampleRun` drives any app with one read-only tool
 * (the examples/).
 */
import { verifyRun } from "../../src/verify/mod.ts";
import assert from "node:assert/strict";

export const AGENT_TOKEN = "agent-token-runtime-0123456789";
export const HARNESS_TOKEN = "harness-token-runtime-0123456789";

/** Sends a request to the app under test; `path` starts with `/`. */
export type Send = (path: string, init?: RequestInit) => Promise<Response>;

/** Sends to a server at `base` (no trailing slash). */
export const over = (base: string): Send => (path, init) => fetch(`${base}${path}`, init);

const headers = (token: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
});

async function body(res: Response): Promise<Record<string, unknown>> {
  return await res.json();
}

/** The steps every flow shares; each logs a one-line summary into `steps`. */
function session(send: Send, steps: string[]) {
  let runId = "";
  return {
    get runId() {
      return runId;
    },
    async start() {
      const health = await send("/healthz");
      assert.equal(health.status, 200);
      assert.deepEqual(await body(health), { status: "ok" });
      const started = await send("/v1/runs", {
        method: "POST",
        headers: headers(HARNESS_TOKEN),
        // Tool names that are Object.prototype keys, where `__proto__` has its setter (Bun, workerd).
        body: '{"ttlMs":60000,"budget":{"calls":10,"perTool":{"__proto__":1,"constructor":2}}}',
      });
      assert.equal(started.status, 201);
      const run = await body(started);
      const perTool = (run.budget as { perTool: Record<string, number> }).perTool;
      assert.deepEqual(
        [Object.hasOwn(perTool, "__proto__"), perTool["__proto__"], perTool["constructor"]],
        [true, 1, 2],
      );
      runId = String(run.runId);
      steps.push(`start ${started.status} ${runId}`);
    },
    async call(toolCallId: string, toolName: string, input: unknown) {
      const res = await send(`/v1/runs/${runId}/tool-calls`, {
        method: "POST",
        headers: headers(AGENT_TOKEN),
        body: JSON.stringify({ toolCallId, toolName, input }),
      });
      const result = await body(res);
      steps.push(
        `${toolCallId} ${res.status} ${result.status} ${result.evidence ?? result.code}`,
      );
      return { status: res.status, result };
    },
    /** Reads a record: refused to the agent, given to the harness. */
    async record(toolCallId: string) {
      const path = `/v1/runs/${runId}/tool-calls/${toolCallId}`;
      const denied = await send(path, { headers: headers(AGENT_TOKEN) });
      assert.equal(denied.status, 403);
      assert.equal((await body(denied)).code, "FORBIDDEN");
      const record = await send(path, { headers: headers(HARNESS_TOKEN) });
      assert.equal(record.status, 200);
      const stored = await body(record);
      steps.push(`record ${record.status} ${stored.status}`);
      return stored;
    },
    async end() {
      const ended = await send(`/v1/runs/${runId}/end`, {
        method: "POST",
        headers: headers(HARNESS_TOKEN),
      });
      assert.equal(ended.status, 200);
      const { facts } = await body(ended) as {
        facts: { toolCallId: string; kind: string }[];
      };
      steps.push(`end ${ended.status} ${facts.length} facts`);
      return facts.map((fact) => [fact.toolCallId, fact.kind]);
    },
  };
}

/**
 * Runs the flow on the demo tools of edge/.
 *
 * @param send How to reach the app.
 * @returns The run ID and a one-line summary per step, for the test log.
 */
export async function wholeRun(
  send: Send,
): Promise<{ runId: string; steps: string[] }> {
  const steps: string[] = [];
  const run = session(send, steps);
  await run.start();
  const found = await run.call("call_1", "search_runbook", {
    query: "disk full",
  });
  assert.equal(found.status, 200);
  assert.equal(found.result.evidence, "EVIDENCE_FOUND");
  const none = await run.call(
    "call_2",
    "search_logs",
    '{"service":"worker","query":"timeout"}',
  );
  assert.equal(none.result.evidence, "NO_EVIDENCE");
  assert.match(String(none.result.scope), /^worker logs/);
  const write = await run.call("call_3", "restart_service", { service: "api" });
  assert.deepEqual([write.status, write.result.code], [403, "NOT_READ_ONLY"]);
  const thrown = await run.call("call_4", "query_metrics", { metric: "p99" });
  assert.deepEqual([thrown.status, thrown.result.code], [
    200,
    "EXECUTION_FAILED",
  ]);
  assert.ok(!JSON.stringify(thrown.result).includes("secret"));

  const stored = await run.record("call_1");
  assert.deepEqual([stored.status, stored.toolCallId, stored.request], [
    "READY",
    "call_1",
    { query: "disk full" },
  ]);
  assert.ok(stored.raw !== undefined);

  assert.deepEqual(await run.end(), [
    ["call_1", "EVIDENCE"],
    ["call_2", "NEGATIVE_OBSERVATION"],
  ]);
  return { runId: run.runId, steps };
}

/** The one tool an example serves, and an input that finds evidence and one that does not. */
export interface ExampleTool {
  /** The tool's name. */
  name: string;
  /** An input that ends READY with EVIDENCE_FOUND. */
  found: Record<string, unknown>;
  /** An input that ends READY with NO_EVIDENCE. */
  missing: Record<string, unknown>;
}

/**
 * Runs the flow on an app with one read-only tool: evidence, no evidence, a duplicate key, an
 * unknown tool, the record, the facts.
 *
 * @param send How to reach the app.
 * @param tool The tool and its inputs.
 * @returns The run ID and a one-line summary per step, for the test log.
 */
export async function exampleRun(
  send: Send,
  tool: ExampleTool,
): Promise<{ runId: string; steps: string[] }> {
  const steps: string[] = [];
  const run = session(send, steps);
  await run.start();
  const found = await run.call("call_1", tool.name, tool.found);
  assert.deepEqual([found.status, found.result.status, found.result.evidence], [
    200,
    "READY",
    "EVIDENCE_FOUND",
  ]);
  const missing = await run.call("call_2", tool.name, tool.missing);
  assert.deepEqual([missing.status, missing.result.evidence], [
    200,
    "NO_EVIDENCE",
  ]);
  const again = await run.call("call_1", tool.name, tool.found);
  assert.deepEqual([again.status, again.result.code], [
    409,
    "DUPLICATE_TOOL_CALL",
  ]);
  const unknown = await run.call("call_3", "no_such_tool", {});
  assert.deepEqual([unknown.status, unknown.result.code], [
    404,
    "UNKNOWN_TOOL",
  ]);
  const stored = await run.record("call_1");
  assert.deepEqual([stored.status, stored.toolName, stored.request], [
    "READY",
    tool.name,
    tool.found,
  ]);
  assert.deepEqual(await run.end(), [
    ["call_1", "EVIDENCE"],
    ["call_2", "NEGATIVE_OBSERVATION"],
  ]);
  return { runId: run.runId, steps };
}

/**
 * A whole run on an app with a LEDGER_KEY, then its export, checked with `verifyRun` against
 * the key `GET /v1/ledger-key` serves: the runtime signed, Deno verifies.
 *
 * @param send How to reach the app.
 * @param publicKey The public half of the LEDGER_KEY the app was given.
 * @returns One line for the test log.
 */
export async function ledgerRun(send: Send, publicKey: JsonWebKey): Promise<string> {
  const { runId } = await wholeRun(send);
  const keyRes = await send("/v1/ledger-key");
  assert.equal(keyRes.status, 200);
  const served = await keyRes.json();
  assert.equal(served.publicKey.x, publicKey.x);
  const res = await send(`/v1/runs/${runId}/export`, {
    headers: { authorization: `Bearer ${HARNESS_TOKEN}` },
  });
  assert.equal(res.status, 200);
  const bundle = await res.json();
  assert.equal(bundle.records.length, 3);
  assert.ok(bundle.records.every((r: { proof?: unknown }) => r.proof !== undefined));
  const verdict = await verifyRun(bundle, publicKey, { keyId: served.keyId });
  assert.deepEqual(verdict, { ok: true, sealed: true, calls: 3 });
  bundle.records[0].raw = { edited: true };
  assert.deepEqual(await verifyRun(bundle, publicKey), {
    ok: false,
    toolCallId: "call_1",
    reason: "ALTERED",
  });
  return `ledger: ${bundle.records.length} signed records and a receipt verify`;
}
