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
 * default 0.0.0.0), and refuses to start when one cannot be reached: like any mistake in the
 * configuration, that is one line on stderr naming the variable (an upstream by its origin, never
 * its query string, where an API key may be), and exit status 2. An upstream
 * process that ends is started again by the next call to it; on SIGTERM or SIGINT the server
 * stops, then the upstream processes.
 *
 * @module
 */
import { buildEdgeApp, StartupError } from "./app.ts";
import { INSPECTOR_AND_MCP } from "./parts.ts";
import { listenError, portOf, startOrExit, upstreamsError } from "./startup.ts";
import { connectGateway, upstreamsOf } from "@tool-boundary/mcp/gateway";
import { stdioTransport } from "@tool-boundary/mcp/stdio";

const env = Deno.env.toObject();
const hostname = env.HOST ?? "0.0.0.0";
const { app, store, gateway, port } = await startOrExit(async () => {
  const port = portOf(env.PORT, 8000);
  let gateway;
  try {
    const upstreams = upstreamsOf(env.MCP_UPSTREAMS);
    if (upstreams.length === 0) {
      throw new StartupError("MCP_UPSTREAMS", "names no upstream MCP server");
    }
    gateway = await connectGateway(upstreams, { stdio: stdioTransport });
  } catch (error) {
    throw upstreamsError(error);
  }
  try {
    const built = buildEdgeApp(
      env,
      { ...INSPECTOR_AND_MCP, tools: gateway.tools },
    );
    await built.checkStore();
    return { ...built, gateway, port };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}, Deno.exit);
console.log(`tool-boundary MCP gateway: ${store} store\n  ${gateway.summary.join("\n  ")}`);

const server = await startOrExit(async () => {
  try {
    return Deno.serve({
      hostname,
      port,
      onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
    }, app.fetch);
  } catch (error) {
    await gateway.close();
    throw listenError(error, hostname, port);
  }
}, Deno.exit);
// Let go of the upstream connections and processes once the server has stopped.
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, async () => {
    await server.shutdown();
    await gateway.close();
    Deno.exit(0);
  });
}
