/**
 * The scripted run the inspector is shown: the dev server's app (edge/app.ts with the demo tools
 * and the inspector on), plus two tools only this test has: one held open until the test lets it
 * go (a PROJECTING call while the page loads) and one whose payloads carry markup and
 * `javascript:` links.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { type AnyToolDefinition, defineTool } from "../../src/mod.ts";
import { buildEdgeApp } from "../../edge/app.ts";
import { INSPECTOR_AND_MCP } from "../../edge/parts.ts";
import { DEMO_TOOLS } from "../../edge/demo/tools.ts";

export const AGENT_TOKEN = "agent-token-inspector-0123456789";
export const HARNESS_TOKEN = "harness-token-inspector-0123456789";
export const RUN_ID = "run-inspector-demo";

/** Markup that must show as text: each would set `window.__xss` if it ever ran. */
export const HOSTILE = {
  script: "<script>window.__xss = 'script'</script>",
  img: `<img src=x onerror="window.__xss = 'img'">`,
  link: `<a href="javascript:window.__xss = 'link'">open the runbook</a>`,
  href: "javascript:window.__xss = 'href'",
};

/** Lets the held call finish. */
export interface Gate {
  release(): void;
}

function heldTool(): { tool: AnyToolDefinition; gate: Gate } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const tool = defineTool({
    name: "wait_for_deploy",
    description: "Waits for a deploy to finish (held open by the test).",
    readOnly: true,
    timeoutMs: 120_000,
    input: v.object({ deployId: v.string() }),
    execute: async ({ deployId }, { signal }) => {
      await Promise.race([
        released,
        new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
      ]);
      return { deployId, state: "finished", at: "2025-03-01T12:40:00Z" };
    },
    project: (raw) => ({
      evidence: "EVIDENCE_FOUND",
      scope: `deploy ${raw.deployId}`,
      content: { state: raw.state, at: raw.at },
    }),
  });
  return { tool, gate: { release } };
}

const markupTool: AnyToolDefinition = defineTool({
  name: "fetch_status_page",
  description: "Reads the public status page (its HTML is hostile in this test).",
  readOnly: true,
  input: v.object({ page: v.string() }),
  execute: ({ page }) => ({
    page,
    html: `<h1>Status</h1>${HOSTILE.script}${HOSTILE.img}${HOSTILE.link}`,
    links: [HOSTILE.href],
  }),
  project: (raw) => ({
    evidence: "EVIDENCE_FOUND",
    scope: `status page ${raw.page} ${HOSTILE.img}`,
    content: { headline: HOSTILE.script, link: HOSTILE.link, href: raw.links[0] ?? null },
  }),
});

/** A message and a name that must show as text (the name is replaced: it is not plain). */
export const THROWN = { name: HOSTILE.img, message: `${HOSTILE.script} failed ${HOSTILE.link}` };

const throwingTool: AnyToolDefinition = defineTool({
  name: "render_report",
  description: "Renders a report (throws an error full of markup in this test).",
  readOnly: true,
  input: v.object({ report: v.string() }),
  execute: async () => {
    await new Promise((resolve) => setTimeout(resolve, 60));
    const error = new Error(THROWN.message);
    error.name = THROWN.name;
    throw error;
  },
  project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
});

/** A tool with a cost: 5 units reserved per call, settling what its input's `used` says. */
const pricedTool: AnyToolDefinition = defineTool({
  name: "estimate_spend",
  description: "Estimates a cloud bill (5 cost units a call, settling what it used).",
  readOnly: true,
  cost: 5,
  input: v.object({ account: v.string(), used: v.optional(v.number()) }),
  execute: ({ account, used }, { settle }) => {
    if (used !== undefined) settle(used);
    return { account, estimate: 1234 };
  },
  project: (raw) => ({
    evidence: "EVIDENCE_FOUND",
    scope: `bill of ${raw.account}`,
    content: { estimate: raw.estimate },
  }),
});

/** The app under test and the gate of its held tool. */
export function inspectorApp(): { fetch: (request: Request) => Promise<Response>; gate: Gate } {
  const held = heldTool();
  const { app } = buildEdgeApp(
    { AGENT_TOKEN, HARNESS_TOKEN, INSPECTOR: "on" },
    {
      ...INSPECTOR_AND_MCP,
      tools: [...DEMO_TOOLS, markupTool, held.tool, throwingTool, pricedTool],
    },
  );
  return { fetch: async (request) => await app.fetch(request), gate: held.gate };
}

/** One call the scenario makes, and what it must come to. */
export interface ScriptedCall {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  /** The listing's status, or `null` for a call that is refused and never begun. */
  status: "READY" | "ERROR" | "PROJECTING" | null;
  evidence: "EVIDENCE_FOUND" | "NO_EVIDENCE" | "ERROR" | null;
  code: string | null;
}

/** Every call of the scripted run, in submission order. */
export const CALLS: readonly ScriptedCall[] = [
  {
    toolCallId: "call_found",
    toolName: "search_runbook",
    input: { query: "disk full" },
    status: "READY",
    evidence: "EVIDENCE_FOUND",
    code: null,
  },
  {
    toolCallId: "call_none",
    toolName: "search_logs",
    input: { service: "worker", query: HOSTILE.img },
    status: "READY",
    evidence: "NO_EVIDENCE",
    code: null,
  },
  {
    toolCallId: "call_large",
    toolName: "export_traces",
    input: { service: "api" },
    status: "ERROR",
    evidence: "ERROR",
    code: "RESULT_TOO_LARGE",
  },
  {
    toolCallId: "call_write",
    toolName: "restart_service",
    input: { service: "api" },
    status: null,
    evidence: null,
    code: "NOT_READ_ONLY",
  },
  {
    toolCallId: "call_failed",
    toolName: "query_metrics",
    input: { metric: "p99 <script>window.__xss = 'input'</script>" },
    status: "ERROR",
    evidence: "ERROR",
    code: "EXECUTION_FAILED",
  },
  {
    toolCallId: "call_timeout",
    toolName: "trace_lookup",
    input: { traceId: "4bf92f3577b34da6" },
    status: "ERROR",
    evidence: "ERROR",
    code: "TOOL_TIMEOUT",
  },
  {
    toolCallId: "call_markup",
    toolName: "fetch_status_page",
    input: { page: HOSTILE.href },
    status: "READY",
    evidence: "EVIDENCE_FOUND",
    code: null,
  },
  {
    toolCallId: "call_held",
    toolName: "wait_for_deploy",
    input: { deployId: "deploy-812" },
    status: "PROJECTING",
    evidence: null,
    code: null,
  },
];

const json = (token: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
});

/**
 * Starts the run and submits every call over HTTP as the agent, each after the one before has
 * answered, except the held one, whose answer is returned unawaited.
 *
 * @returns The held call's pending response body (wrapped: an async function would await it).
 */
export async function scriptedRun(base: string): Promise<{ held: Promise<unknown> }> {
  const started = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: json(HARNESS_TOKEN),
    body: JSON.stringify({ runId: RUN_ID, ttlMs: 600_000, budget: { calls: 20 } }),
  });
  assert.equal(started.status, 201, await started.clone().text());
  await started.body?.cancel();
  let held: Promise<unknown> | null = null;
  for (const call of CALLS) {
    const response = fetch(`${base}/v1/runs/${RUN_ID}/tool-calls`, {
      method: "POST",
      headers: json(AGENT_TOKEN),
      body: JSON.stringify({
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
      }),
    }).then((res) => res.json());
    if (call.status === "PROJECTING") {
      held = response;
      continue;
    }
    const body = await response;
    assert.equal(body.status, call.status ?? "ERROR", JSON.stringify(body));
    if (call.code !== null) assert.equal(body.code, call.code, JSON.stringify(body));
    if (call.evidence !== null && call.status === "READY") {
      assert.equal(body.evidence, call.evidence);
    }
  }
  assert.ok(held !== null);
  // Loaded only once the held call has begun: its record exists, PROJECTING.
  for (;;) {
    const record = await fetch(`${base}/v1/runs/${RUN_ID}/tool-calls/call_held`, {
      headers: json(HARNESS_TOKEN),
    });
    const body = await record.json();
    if (record.status === 200) {
      assert.equal(body.status, "PROJECTING");
      return { held };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The run of the README's screenshot: the demo tools as an on-call agent might use them. */
export const DOCS_RUN_ID = "incident-2025-03-01-disk";

/** Starts the screenshot's run and submits its calls; returns the NO_EVIDENCE call's ID. */
export async function docsRun(base: string): Promise<string> {
  const started = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: json(HARNESS_TOKEN),
    body: JSON.stringify({ runId: DOCS_RUN_ID, ttlMs: 900_000, budget: { calls: 12 } }),
  });
  assert.equal(started.status, 201);
  await started.body?.cancel();
  const calls: [string, string, Record<string, unknown>][] = [
    ["call_7Qx1", "search_logs", { service: "api", query: "no space", level: "ERROR" }],
    ["call_7Qx2", "search_runbook", { query: "disk full" }],
    ["call_7Qx3", "search_logs", { service: "worker", query: "timeout" }],
    ["call_7Qx4", "query_metrics", { metric: 'disk_used_bytes{host="api-2"}' }],
    ["call_7Qx5", "trace_lookup", { traceId: "4bf92f3577b34da6" }],
    ["call_7Qx6", "export_traces", { service: "api" }],
  ];
  for (const [toolCallId, toolName, input] of calls) {
    const res = await fetch(`${base}/v1/runs/${DOCS_RUN_ID}/tool-calls`, {
      method: "POST",
      headers: json(AGENT_TOKEN),
      body: JSON.stringify({ toolCallId, toolName, input }),
    });
    await res.body?.cancel();
  }
  return "call_7Qx3";
}

/** The run of the console's steps: calls submitted at once, so that they overlap in time. */
export const CONSOLE_RUN_ID = "run-console-overlap";

/** The console run's calls: tool call ID, tool, input, and the code it ends with. */
export const CONSOLE_CALLS: readonly [string, string, Record<string, unknown>, string | null][] = [
  ["call_slow", "trace_lookup", { traceId: "4bf92f3577b34da6" }, "TOOL_TIMEOUT"],
  ["call_threw", "render_report", { report: "weekly" }, "EXECUTION_FAILED"],
  ["call_metrics", "query_metrics", { metric: "p99" }, "EXECUTION_FAILED"],
  ["call_book", "search_runbook", { query: "disk full" }, null],
];

/** Starts the console run and submits its calls all at once; resolves when all answered. */
export async function consoleRun(base: string): Promise<void> {
  const started = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: json(HARNESS_TOKEN),
    body: JSON.stringify({ runId: CONSOLE_RUN_ID, ttlMs: 600_000, budget: { calls: 10 } }),
  });
  assert.equal(started.status, 201);
  await started.body?.cancel();
  await Promise.all(CONSOLE_CALLS.map(async ([toolCallId, toolName, input, code]) => {
    const res = await fetch(`${base}/v1/runs/${CONSOLE_RUN_ID}/tool-calls`, {
      method: "POST",
      headers: json(AGENT_TOKEN),
      body: JSON.stringify({ toolCallId, toolName, input }),
    });
    const body = await res.json();
    assert.equal(body.status === "ERROR" ? body.code : null, code, JSON.stringify(body));
    // The agent never sees what a tool threw.
    assert.ok(!JSON.stringify(body).includes("__xss"), JSON.stringify(body));
  }));
}

/** The run of the cost step: a cost budget of 10, two calls of a 5-unit tool, one refused. */
export const COST_RUN_ID = "run-cost-budget";

/** The cost run's calls: tool call ID, tool, input, and the code it ends with. */
export const COST_CALLS: readonly [string, string, Record<string, unknown>, string | null][] = [
  ["call_settled", "estimate_spend", { account: "ops", used: 2 }, null],
  ["call_full", "estimate_spend", { account: "web" }, null],
  ["call_free", "search_runbook", { query: "disk full" }, null],
  // 2 + 5 spent, 5 more would pass 10: refused, never begun.
  ["call_over", "estimate_spend", { account: "data" }, "BUDGET_EXHAUSTED"],
];

/** Starts the cost run and submits its calls one after the other. */
export async function costRun(base: string): Promise<void> {
  const started = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: json(HARNESS_TOKEN),
    body: JSON.stringify({ runId: COST_RUN_ID, ttlMs: 600_000, budget: { calls: 10, cost: 10 } }),
  });
  assert.equal(started.status, 201);
  assert.equal((await started.json()).budget.cost, 10);
  for (const [toolCallId, toolName, input, code] of COST_CALLS) {
    const res = await fetch(`${base}/v1/runs/${COST_RUN_ID}/tool-calls`, {
      method: "POST",
      headers: json(AGENT_TOKEN),
      body: JSON.stringify({ toolCallId, toolName, input }),
    });
    const body = await res.json();
    assert.equal(body.status === "ERROR" ? body.code : null, code, JSON.stringify(body));
    assert.equal(res.status, code === null ? 200 : 429);
  }
}
