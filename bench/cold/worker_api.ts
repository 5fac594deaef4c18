/**
 * The Worker of edge/cloudflare.ts without the run inspector and the MCP route: the JSON API
 * alone, for the bundle size and cold start figures (`bench/cold.ts`). It is what a Worker that
 * does not use them carries.
 *
 * @module
 */
import { buildEdgeApp, type EdgeApp, type EdgeConfig } from "../../edge/app.ts";

let built: EdgeApp | undefined;

/** The worker. */
export default {
  fetch(request: Request, env: EdgeConfig, ctx: unknown): Response | Promise<Response> {
    built ??= buildEdgeApp(env);
    return built.app.fetch(request, env, ctx as never);
  },
};
