/**
 * The stdio transport of the MCP gateway: runs an upstream of `MCP_UPSTREAMS` that has a
 * `command` (see edge/gateway.ts) with the official SDK's `StdioClientTransport`. It needs
 * `node:child_process`, so only the Deno, Bun and dev entries import it; the Workers entry does
 * not, and refuses such an upstream.
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

/**
 * The transport of one upstream process, for `connectGateway`'s `stdio` option; the process
 * starts when the client connects, and is stopped when it closes (stdin closed, then SIGTERM,
 * then SIGKILL).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stdioTransport } from "./gateway_stdio.ts";
 *
 * const transport = stdioTransport({ command: "node", args: ["server.js"] });
 * assert.equal(transport.pid, null); // not started until a client connects
 * ```
 */
export function stdioTransport(upstream: StdioUpstream): StdioClientTransport {
  return new StdioClientTransport({
    command: upstream.command,
    ...(upstream.args === undefined ? {} : { args: upstream.args }),
    ...(upstream.env === undefined ? {} : { env: upstream.env }),
    ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
  });
}
