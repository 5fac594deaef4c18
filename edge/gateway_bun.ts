/**
 * The MCP gateway for Bun. Bun does not read deno.json, so run the bundle:
 * `npx -y deno@2 task build:gateway-bun && MCP_UPSTREAMS='[...]' AGENT_TOKEN=... HARNESS_TOKEN=... SERVER_SECRET=... npx -y bun@1 dist/gateway-bun.js`.
 *
 * Serves the tools of the upstream MCP servers in `MCP_UPSTREAMS` (see edge/gateway.ts) instead
 * of the demo tools, with everything else as in edge/bun.ts (PORT, HOST, the Upstash variables).
 * It connects to every upstream before it serves, and refuses to start when one cannot be reached.
 *
 * @module
 */
import { Redis } from "@upstash/redis";
import { buildEdgeApp, REDIS_CLIENT_OPTIONS } from "./app.ts";
import { connectGateway, upstreamsOf } from "./gateway.ts";

declare const process: { env: Record<string, string | undefined> };

const upstreams = upstreamsOf(process.env.MCP_UPSTREAMS);
if (upstreams.length === 0) {
  throw new Error("Refusing to start: MCP_UPSTREAMS names no upstream MCP server");
}
const gateway = await connectGateway(upstreams);
const { app, store } = buildEdgeApp(
  process.env,
  (url, token) => new Redis({ url, token, ...REDIS_CLIENT_OPTIONS }),
  gateway.tools,
);
const port = Number(process.env.PORT ?? 3000);
const hostname = process.env.HOST ?? "0.0.0.0";
console.log(`tool-boundary MCP gateway: ${store} store, listening on http://${hostname}:${port}
  ${gateway.summary.join("\n  ")}`);

/** Bun serves a default export that has `fetch`. */
export default { port, hostname, fetch: app.fetch };
