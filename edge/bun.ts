/**
 * Bun entry. Bun does not read deno.json, so run the bundle:
 * `npx -y deno@2 task build:bun && PORT=3000 AGENT_TOKEN=... HARNESS_TOKEN=... npx -y bun@1 dist/bun.js`.
 *
 * Refuses to start without AGENT_TOKEN and HARNESS_TOKEN. SERVER_SECRET (at least 32 characters)
 * enables run tokens and the MCP route. Uses the Upstash store when
 * UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set, else the in-memory store.
 *
 * @module
 */
import { Redis } from "@upstash/redis";
import { buildEdgeApp, REDIS_CLIENT_OPTIONS } from "./app.ts";

declare const process: { env: Record<string, string | undefined> };

const { app, store } = buildEdgeApp(
  process.env,
  (url, token) => new Redis({ url, token, ...REDIS_CLIENT_OPTIONS }),
);
const port = Number(process.env.PORT ?? 3000);
const hostname = process.env.HOST ?? "0.0.0.0";
console.log(`tool-boundary: ${store} store, listening on http://${hostname}:${port}`);

/** Bun serves a default export that has `fetch`. */
export default { port, hostname, fetch: app.fetch };
