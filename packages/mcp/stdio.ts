/**
 * The stdio transport of the MCP gateway: runs an upstream of `MCP_UPSTREAMS` that has a
 * `command` (see `@tool-boundary/mcp/gateway`) with the official SDK's `StdioClientTransport`.
 * It needs `node:child_process`, so it is an entry of its own: Deno, Bun and Node import it; a
 * Workers gateway does not, and refuses such an upstream.
 *
 * The process gets the SDK's safe default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER)
 * and the upstream's `env` on top: never the gateway's own variables, which hold its tokens and
 * secrets. Its stderr is the gateway's.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StdioUpstream } from "./gateway.ts";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364).
/**
 * `StdioClientTransport` of `@modelcontextprotocol/sdk/client/stdio.js`: the SDK's transport to
 * a process, started when a client connects to it.
 * @internal
 */
type UpstreamProcess = StdioClientTransport;

/**
 * The transport of one upstream process, for `connectGateway`'s `stdio` option; the process
 * starts when the client connects, and is stopped when it closes (stdin closed, then SIGTERM,
 * then SIGKILL).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stdioTransport } from "@tool-boundary/mcp/stdio";
 *
 * const transport = stdioTransport({ command: "node", args: ["server.js"] });
 * assert.equal(transport.pid, null); // not started until a client connects
 * ```
 */
export function stdioTransport(upstream: StdioUpstream): UpstreamProcess {
  return new StdioClientTransport({
    command: upstream.command,
    ...(upstream.args === undefined ? {} : { args: upstream.args }),
    ...(upstream.env === undefined ? {} : { env: upstream.env }),
    ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
  });
}
