/**
 * Bun entry. Bun does not read deno.json, so run the bundle:
 * `npx -y deno@2 task build:bun && PORT=3000 AGENT_TOKEN=... HARNESS_TOKEN=... npx -y bun@1 dist/bun.js`.
 *
 * Refuses to start without AGENT_TOKEN and HARNESS_TOKEN. SERVER_SECRET (at least 32 characters)
 * enables run tokens and the MCP route. Uses the Upstash store when
 * UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set, else the in-memory store, and reads
 * it once before serving. A mistake in the configuration (a busy PORT too) is one line on stderr
 * naming the variable, and exit status 2.
 *
 * @module
 */
import { buildEdgeApp } from "./app.ts";
import { INSPECTOR_AND_MCP } from "./parts.ts";
import { listenError, portOf, startOrExit } from "./startup.ts";

declare const process: {
  env: Record<string, string | undefined>;
  exit(code: number): never;
};
/** What this entry uses of Bun's global. */
declare const Bun: {
  serve(options: {
    port: number;
    hostname: string;
    fetch: (request: Request) => Response | Promise<Response>;
  }): { port: number };
};

const hostname = process.env.HOST ?? "0.0.0.0";
const { app, store, port } = await startOrExit(async () => {
  const port = portOf(process.env.PORT, 3000);
  const built = buildEdgeApp(
    process.env,
    INSPECTOR_AND_MCP,
  );
  await built.checkStore();
  return { ...built, port };
}, process.exit);
const server = await startOrExit(() => {
  try {
    return Bun.serve({ port, hostname, fetch: (request) => app.fetch(request) });
  } catch (error) {
    throw listenError(error, hostname, port);
  }
}, process.exit);
console.log(`tool-boundary: ${store} store, listening on http://${hostname}:${server.port}`);
