/**
 * One cold start of a bundled Worker, in a process of its own (`bench/cold.ts` runs it): imports
 * the bundle, gives its `fetch` one tool call, reads the answer, and prints the milliseconds from
 * before the import to the answer's last byte, those of the import alone, and the answer's status.
 *
 * Run: `deno run --no-code-cache -A bench/cold/first_request.ts <bundle.js>`.
 *
 * @module
 */
const [bundle] = Deno.args;
if (bundle === undefined) throw new Error("usage: first_request.ts <bundle.js>");
const env = {
  AGENT_TOKEN: "bench-agent-token-0123456789",
  HARNESS_TOKEN: "bench-harness-token-0123456789",
  SERVER_SECRET: "bench-server-secret-0123456789-0123456789",
};
const body = '{"toolCallId":"call_1","toolName":"search_runbook","input":{"query":"disk full"}}';
// With the Content-Length every HTTP client sends for a body it holds whole (as fetch does), and
// a Worker's request carries.
const request = new Request("http://worker.test/v1/runs/run-cold/tool-calls", {
  method: "POST",
  headers: {
    authorization: `Bearer ${env.AGENT_TOKEN}`,
    "content-type": "application/json",
    "content-length": String(new TextEncoder().encode(body).byteLength),
  },
  body,
});
const ctx = { waitUntil() {}, passThroughOnException() {} };

const started = performance.now();
const worker = (await import(new URL(bundle, `file://${Deno.cwd()}/`).href)).default;
const imported = performance.now();
const answer = await worker.fetch(request, env, ctx);
await answer.arrayBuffer();
const elapsed = performance.now() - started;
console.log(JSON.stringify({ ms: elapsed, importMs: imported - started, status: answer.status }));
