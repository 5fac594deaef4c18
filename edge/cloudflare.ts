/**
 * Cloudflare Workers entry (module worker). Build with `npx -y deno@2 task build:worker`; deploy
 * with wrangler (wrangler.toml at the repository root builds it for you).
 *
 * Bindings: AGENT_TOKEN and HARNESS_TOKEN (secrets, required: without them every request gets a
 * JSON 500 that names them, and the log says why); UPSTASH_REDIS_REST_URL and
 * UPSTASH_REDIS_REST_TOKEN (optional: the in-memory store lives in one isolate only, so use it for
 * trying things out); SERVER_SECRET (optional secret, at least 32 characters: run tokens and the
 * MCP route). `wrangler dev` reads them from `.dev.vars`: copy `.dev.vars.example`.
 *
 * @module
 */
import { buildEdgeApp, type EdgeApp, type EdgeConfig } from "./app.ts";
import { INSPECTOR_AND_MCP } from "./parts.ts";

let built: EdgeApp | undefined;

/** Names only what to set, never a value; the exact reason goes to the log. */
const NOT_CONFIGURED = "The server is not configured: set the AGENT_TOKEN and HARNESS_TOKEN " +
  "secrets (at least 16 characters each; SERVER_SECRET, when set, at least 32) (for wrangler " +
  "dev, in .dev.vars, see .dev.vars.example); the Worker log says more.";

/** The worker. */
export default {
  fetch(request: Request, env: EdgeConfig, ctx: unknown): Response | Promise<Response> {
    if (built === undefined) {
      try {
        built = buildEdgeApp(
          env,
          INSPECTOR_AND_MCP,
        );
      } catch (error) {
        // Fail closed on every request until the bindings are fixed; say why in the log only.
        console.error(error instanceof Error ? error.message : error);
        return Response.json(
          {
            status: "ERROR",
            code: "INTERNAL_ERROR",
            message: NOT_CONFIGURED,
          },
          { status: 500, headers: { "Cache-Control": "no-store" } },
        );
      }
    }
    return built.app.fetch(request, env, ctx as never);
  },
};
