/**
 * The Worker of edge/cloudflare.ts without the run inspector and the MCP route: the JSON API
 * alone, for the bundle size and cold start figures (`bench/cold.ts`). It is what a Worker that
 * does not use them carries.
 *
 * @module
 */
import { Redis } from "@upstash/redis/cloudflare";
import {
  buildEdgeApp,
  type EdgeApp,
  type EdgeConfig,
  REDIS_CLIENT_OPTIONS,
} from "../../edge/app.ts";

let built: EdgeApp | undefined;

/** The worker. */
export default {
  fetch(request: Request, env: EdgeConfig, ctx: unknown): Response | Promise<Response> {
    built ??= buildEdgeApp(
      env,
      (url, token) => new Redis({ url, token, ...REDIS_CLIENT_OPTIONS }),
    );
    return built.app.fetch(request, env, ctx as never);
  },
};
