/**
 * Deno and Deno Deploy entry: `deno serve --allow-net --allow-env edge/deno.ts`.
 *
 * Refuses to start without AGENT_TOKEN and HARNESS_TOKEN. SERVER_SECRET (at least 32 characters)
 * enables run tokens and the MCP route. Uses the Upstash store when
 * UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set, else the in-memory store, and reads
 * it once before serving. A mistake in the configuration is one line on stderr naming the variable,
 * and exit status 2 (`deno serve` chooses the port itself: a busy one is its own error).
 *
 * @module
 */
import { buildEdgeApp } from "./app.ts";
import { INSPECTOR_AND_MCP } from "./parts.ts";
import { startOrExit } from "./startup.ts";

const { app, store } = await startOrExit(async () => {
  const built = buildEdgeApp(
    Deno.env.toObject(),
    INSPECTOR_AND_MCP,
  );
  await built.checkStore();
  return built;
}, Deno.exit);
console.log(`tool-boundary: ${store} store`);

/** The `deno serve` handler. */
export default { fetch: app.fetch } satisfies Deno.ServeDefaultExport;
