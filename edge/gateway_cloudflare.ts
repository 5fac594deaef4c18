/**
 * The MCP gateway as a Cloudflare Workers entry (module worker): the tools of the upstream MCP
 * servers in `MCP_UPSTREAMS` (see packages/mcp/gateway.ts) instead of the demo tools, with
 * everything else as in edge/cloudflare.ts.
 *
 * Bindings: AGENT_TOKEN and HARNESS_TOKEN (secrets, required); SERVER_SECRET (secret, at least 32
 * characters: without it there are no run tokens and no MCP route, so a gateway needs it);
 * MCP_UPSTREAMS (a JSON array of upstream servers; a secret when its `headers` carry
 * credentials); UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (optional: the in-memory store
 * lives in one isolate only, and a run's records may be in another isolate than its next call).
 *
 * Build with `npx -y deno@2 task build:gateway-worker` (writes dist/gateway-worker.js) and deploy
 * with wrangler, with the same secrets as in wrangler.toml plus MCP_UPSTREAMS, e.g.
 * `npx -y wrangler@4.116.0 deploy dist/gateway-worker.js --name tool-boundary-gateway
 * --compatibility-date 2025-01-01` (or a wrangler.toml whose `main` is that file and whose build
 * command is that task). `wrangler dev` reads the bindings from `.dev.vars`.
 *
 * Only `url` upstreams: an upstream with a `command` (stdio) is a configuration error here, as a
 * missing secret is (the JSON 500 below; the Worker log names the entry), since a Worker cannot
 * start a process. The stdio transport is not in this bundle.
 *
 * Workers let a request use only its own connections, so the gateway connects to the upstreams
 * per request: on the first request of an isolate it connects to each upstream to read its name
 * and list its tools, and then every tool call opens a connection of its own and closes it after
 * the call.
 *
 * Fails closed. Until it is built every request waits for the one build in flight; when the build
 * fails, each request waiting for it gets a JSON 500 naming what to set (the reason goes to the
 * Worker log only) and the next request builds again: an upstream that was down may be up by then,
 * and the bindings are checked before anything connects, so a missing secret costs no upstream
 * traffic however often it is retried.
 *
 * @module
 */
import { buildEdgeApp, type EdgeApp, type EdgeConfig, StartupError } from "./app.ts";
import { INSPECTOR_AND_MCP } from "./parts.ts";
import { connectGateway, upstreamsOf } from "@tool-boundary/mcp/gateway";

/** Names only what to set, never a value; the exact reason goes to the log. */
const NOT_CONFIGURED = "The gateway is not configured: set the AGENT_TOKEN, HARNESS_TOKEN and " +
  "SERVER_SECRET secrets and MCP_UPSTREAMS (for wrangler dev, in .dev.vars); the Worker log " +
  "says more.";
const UNREACHABLE = "The gateway could not reach the upstream MCP servers of MCP_UPSTREAMS: " +
  "check their url and headers; the next request tries again, and the Worker log says more.";

/** Why an upstream with a `command` is refused here, before anything connects. */
const NO_STDIO = "a Worker cannot run a command (Workers have no processes): run this MCP " +
  "server behind Streamable HTTP and give its url, or use the Deno or Bun gateway";

/** An upstream failed while the bindings were fine: worth telling apart in the answer. */
class UpstreamError extends Error {
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`An upstream of MCP_UPSTREAMS failed: ${reason}`, { cause });
  }
}

async function build(env: EdgeConfig): Promise<EdgeApp> {
  const upstreams = upstreamsOf(env.MCP_UPSTREAMS, { noStdio: NO_STDIO });
  if (upstreams.length === 0) {
    throw new StartupError("MCP_UPSTREAMS", "names no upstream MCP server");
  }
  // The bindings' own checks, before any upstream traffic (the tools come later).
  buildEdgeApp(env, { ...INSPECTOR_AND_MCP, tools: [] });
  let tools;
  try {
    tools = (await connectGateway(upstreams, { perRequest: true })).tools;
  } catch (error) {
    throw new UpstreamError(error);
  }
  return buildEdgeApp(env, { ...INSPECTOR_AND_MCP, tools });
}

let built: EdgeApp | undefined;
let building: Promise<EdgeApp> | undefined;

function failed(error: unknown): Response {
  console.error(error instanceof Error ? error.message : error);
  return Response.json(
    {
      status: "ERROR",
      code: "INTERNAL_ERROR",
      message: error instanceof UpstreamError ? UNREACHABLE : NOT_CONFIGURED,
    },
    { status: 500, headers: { "Cache-Control": "no-store" } },
  );
}

/** The worker. */
export default {
  async fetch(request: Request, env: EdgeConfig, ctx: unknown): Promise<Response> {
    if (built === undefined) {
      const attempt = building ??= build(env);
      try {
        built = await attempt;
      } catch (error) {
        // Not cached: the next request builds again (only one build is ever in flight).
        if (building === attempt) building = undefined;
        return failed(error);
      }
    }
    return await built.app.fetch(request, env, ctx as never);
  },
};
