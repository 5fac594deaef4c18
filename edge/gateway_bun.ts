/**
 * The MCP gateway for Bun. Bun does not read deno.json, so run the bundle:
 * `npx -y deno@2 task build:gateway-bun && MCP_UPSTREAMS='[...]' AGENT_TOKEN=... HARNESS_TOKEN=... SERVER_SECRET=... npx -y bun@1 dist/gateway-bun.js`.
 *
 * Serves the tools of the upstream MCP servers in `MCP_UPSTREAMS` (see packages/mcp/gateway.ts)
 * instead of the demo tools, with everything else as in edge/bun.ts (PORT, HOST, the Upstash
 * variables). It connects to every upstream before it serves, and refuses to start when one cannot
 * be reached: like any mistake in the configuration, that is one line on stderr naming the
 * variable, and exit status 2. Upstreams with a `command` run as Bun's child processes over stdio
 * (the bundle keeps `node:` imports as imports, and Bun has `node:child_process`); one that ends is
 * started again by the next call to it, and SIGTERM or SIGINT stops them before the gateway exits.
 *
 * @module
 */
import { buildEdgeApp, StartupError } from "./app.ts";
import { INSPECTOR_AND_MCP } from "./parts.ts";
import { listenError, portOf, startOrExit, upstreamsError } from "./startup.ts";
import { connectGateway, upstreamsOf } from "@tool-boundary/mcp/gateway";
import { stdioTransport } from "@tool-boundary/mcp/stdio";

declare const process: {
  env: Record<string, string | undefined>;
  once(signal: "SIGTERM" | "SIGINT", listener: () => void): void;
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
const { app, store, gateway, port } = await startOrExit(async () => {
  const port = portOf(process.env.PORT, 3000);
  let gateway;
  try {
    const upstreams = upstreamsOf(process.env.MCP_UPSTREAMS);
    if (upstreams.length === 0) {
      throw new StartupError("MCP_UPSTREAMS", "names no upstream MCP server");
    }
    gateway = await connectGateway(upstreams, { stdio: stdioTransport });
  } catch (error) {
    throw upstreamsError(error);
  }
  try {
    const built = buildEdgeApp(
      process.env,
      { ...INSPECTOR_AND_MCP, tools: gateway.tools },
    );
    await built.checkStore();
    return { ...built, gateway, port };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}, process.exit);
const server = await startOrExit(async () => {
  try {
    return Bun.serve({ port, hostname, fetch: (request) => app.fetch(request) });
  } catch (error) {
    await gateway.close();
    throw listenError(error, hostname, port);
  }
}, process.exit);
console.log(
  `tool-boundary MCP gateway: ${store} store, listening on http://${hostname}:${server.port}
  ${gateway.summary.join("\n  ")}`,
);

// Stop the upstream processes before exiting (a signal's default would leave that to them).
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, async () => {
    await gateway.close();
    process.exit(0);
  });
}
