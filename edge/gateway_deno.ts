/**
 * The MCP gateway for Deno and Deno Deploy:
 * `MCP_UPSTREAMS='[{"url":"https://.../mcp","trusted":true}]' deno run --config deno.gateway.json --allow-net --allow-env edge/gateway_deno.ts`
 * (with `--allow-run --allow-read` too for upstreams with a `command`, which it runs over stdio;
 * `--config deno.gateway.json`, the core and packages/mcp alone, resolves packages/mcp).
 *
 * Serves the tools of the upstream MCP servers in `MCP_UPSTREAMS` (see packages/mcp/gateway.ts)
 * instead of the demo tools, with everything else as in edge/deno.ts: AGENT_TOKEN and HARNESS_TOKEN
 * required, SERVER_SECRET for run tokens and the MCP route, the Upstash store when its two
 * variables are set. It connects to every upstream before it listens (on PORT, default 8000; HOST,
 * default 0.0.0.0), and refuses to start when one cannot be reached: one line on stderr naming it
 * by its origin (never its query string, where an API key may be), exit status 2. An upstream
 * process that ends is started again by the next call to it; on SIGTERM or SIGINT the server
 * stops, then the upstream processes.
 *
 * @module
 */
import { Redis } from "@upstash/redis";
import { buildEdgeApp, REDIS_CLIENT_OPTIONS } from "./app.ts";
import { connectGateway, upstreamsOf } from "@tool-boundary/mcp/gateway";
import { stdioTransport } from "@tool-boundary/mcp/stdio";

const env = Deno.env.toObject();
const upstreams = upstreamsOf(env.MCP_UPSTREAMS);
if (upstreams.length === 0) {
  throw new Error("Refusing to start: MCP_UPSTREAMS names no upstream MCP server");
}
// An upstream that cannot be reached or started: one line (an HTTP upstream's error names it by
// its origin, and holds no more of its URL).
const gateway = await connectGateway(upstreams, { stdio: stdioTransport }).catch((error) => {
  console.error(
    `Refusing to start: MCP_UPSTREAMS: ${error instanceof Error ? error.message : error}`,
  );
  Deno.exit(2);
});
const { app, store } = buildEdgeApp(
  env,
  (url, token) => new Redis({ url, token, ...REDIS_CLIENT_OPTIONS }),
  gateway.tools,
);
console.log(`tool-boundary MCP gateway: ${store} store\n  ${gateway.summary.join("\n  ")}`);

const server = Deno.serve({
  hostname: env.HOST ?? "0.0.0.0",
  port: Number(env.PORT ?? 8000),
  onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
}, app.fetch);
// Let go of the upstream connections and processes once the server has stopped.
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, async () => {
    await server.shutdown();
    await gateway.close();
    Deno.exit(0);
  });
}
