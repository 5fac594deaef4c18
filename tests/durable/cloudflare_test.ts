/**
 * Cloudflare Workflows in workerd (through miniflare's Workflows binding): a step calls the tool
 * through the boundary, and the engine's own step retries never run it twice. Each step's first
 * attempt dies at another point: before the call, while the tool runs (the step throws, the call
 * goes on in the isolate: the retry sees OUTCOME_UNKNOWN and backs off until the record
 * completes), after the call returned. On the MemoryStore (in the isolate) and the UpstashStore.
 */
import assert from "node:assert/strict";
import { stepToolCallId } from "@tool-boundary/durable";
import { run, WORKSPACE_CONFIG } from "../runtime/process.ts";
import { serveScript } from "../runtime/setup.ts";
import { startUpstashFixture, type UpstashFixture } from "../support/upstash_fixture.ts";
import { assertOnce, type Harness, type Outcome, startHarness } from "./harness.ts";
import type { LookupsInput } from "./lookups.ts";

const AGENT_TOKEN = "agent-token-durable-0123";
const HARNESS_TOKEN = "harness-token-durable-0123";

/** The Worker's entry: the Workflow class workerd needs, around the bundled worker. */
const WORKER_ENTRY = `import { WorkflowEntrypoint } from "cloudflare:workers";
import { fetchLookups, runLookups } from "./worker.js";

export class Lookups extends WorkflowEntrypoint {
  run(event, step) {
    return runLookups(this.env, event, step);
  }
}

export default { fetch: fetchLookups };
`;

/** Bundles the worker and serves it in workerd with the bindings; calls `fn` with its URL. */
async function serveWorkflows(
  bindings: Record<string, string>,
  fn: (base: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tb-workflows-" });
  try {
    await run(Deno.execPath(), [
      "bundle",
      ...WORKSPACE_CONFIG,
      "--platform",
      "browser",
      "-o",
      `${dir}/worker.js`,
      new URL("./cloudflare_worker.ts", import.meta.url).pathname,
    ]);
    await Deno.writeTextFile(`${dir}/entry.mjs`, WORKER_ENTRY);
    await serveScript(`${dir}/entry.mjs`, bindings, fn, {
      LOOKUPS: { name: "lookups", className: "Lookups" },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs the workflow once (a new run), to its end, and reads what the boundary recorded. */
async function runWorkflow(base: string, lookups: LookupsInput["lookups"]): Promise<Outcome> {
  const harness = {
    authorization: `Bearer ${HARNESS_TOKEN}`,
    "content-type": "application/json",
  };
  const api = async (path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: harness,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    assert.ok(res.ok, `${path}: ${res.status}`);
    return await res.json();
  };
  const runId = `wf-${crypto.randomUUID()}`;
  await api("/v1/runs", { runId, ttlMs: 120_000, budget: { calls: 20 } });
  await api("/workflows", { id: runId, params: { runId, lookups } });
  let status;
  for (const until = Date.now() + 30_000; Date.now() < until;) {
    status = await api(`/workflows/${runId}`);
    if (status.status !== "queued" && status.status !== "running") break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(status.status, "complete", JSON.stringify(status));
  const values = status.output;
  const { calls } = await api(`/v1/runs/${runId}`);
  const records = [];
  for (const value of values) {
    records.push(await api(`/v1/runs/${runId}/tool-calls/${value.toolCallId}`));
  }
  const { facts } = await api(`/v1/runs/${runId}/end`, {});
  return { runId, values, calls, records, facts };
}

const LOOKUPS: LookupsInput["lookups"] = [
  { key: "a", onUnknown: "retry" },
  { key: "b", onUnknown: "retry" },
  { key: "c", onUnknown: "retry" },
];

async function crashEveryPoint(harness: Harness, base: string): Promise<void> {
  harness.plan({});
  const clean = await runWorkflow(base, LOOKUPS);
  harness.plan({
    "lookup-a": "throw-before",
    "lookup-b": "throw-during",
    "lookup-c": "throw-after",
  });
  const crashed = await runWorkflow(base, LOOKUPS);

  assertOnce(harness, crashed, clean);
  const ids = await Promise.all(
    ["a", "b", "c"].map((k) => stepToolCallId([crashed.runId, `lookup-${k}`])),
  );
  assert.deepEqual(crashed.calls.map((call) => call.toolCallId), ids);
  assert.deepEqual(harness.crashes, [
    "lookup-a before throw",
    "lookup-b during throw",
    "lookup-c after throw",
  ]);
  // The retry of b saw the record still PROJECTING and backed off; c's retry got the record.
  assert.deepEqual(harness.unknowns.slice(0, 1), [`${ids[1]} retry`]);
  assert.ok(harness.unknowns.every((line) => line === `${ids[1]} retry`));
  assert.deepEqual(crashed.values.map((value) => value.replayed === true), [false, true, true]);
}

Deno.test("Cloudflare Workflows (workerd), MemoryStore: every step's tool runs once across the engine's retries", async () => {
  const harness = startHarness();
  try {
    await serveWorkflows({
      HARNESS_URL: harness.url,
      STORE: "memory",
      AGENT_TOKEN,
      HARNESS_TOKEN,
    }, (base) => crashEveryPoint(harness, base));
  } finally {
    await harness.stop();
  }
});

Deno.test("Cloudflare Workflows (workerd), UpstashStore: every step's tool runs once across the engine's retries", async () => {
  const harness = startHarness();
  let fixture: UpstashFixture | undefined;
  try {
    fixture = await startUpstashFixture();
    await serveWorkflows({
      HARNESS_URL: harness.url,
      STORE: "upstash",
      UPSTASH_URL: fixture.endpoint.url,
      UPSTASH_TOKEN: fixture.endpoint.token,
      AGENT_TOKEN,
      HARNESS_TOKEN,
    }, (base) => crashEveryPoint(harness, base));
  } finally {
    await fixture?.stop();
    await harness.stop();
  }
});
