/**
 * The floor of the cold start figure (`bench/cold.ts`): a minimal Worker on the same two
 * libraries, Hono and `@upstash/redis`, made the same way as edge/cloudflare.ts (the client
 * from the bindings on the first request), one route that checks a bearer token and answers JSON.
 *
 * @module
 */
import { Hono } from "hono";
import { Redis } from "@upstash/redis/cloudflare";

interface Env {
  AGENT_TOKEN?: string;
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
}

let app: Hono | undefined;

/** The worker. */
export default {
  fetch(request: Request, env: Env): Response | Promise<Response> {
    if (app === undefined) {
      const redis = env.UPSTASH_REDIS_REST_URL && env.UPSTASH_REDIS_REST_TOKEN
        ? new Redis({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN })
        : null;
      app = new Hono();
      app.get("/healthz", (c) => c.json({ status: "ok" }));
      app.post("/v1/runs/:runId/tool-calls", async (c) => {
        if (c.req.header("authorization") !== `Bearer ${env.AGENT_TOKEN}`) {
          return c.json({ status: "ERROR", code: "UNAUTHENTICATED" }, 401);
        }
        const body = await c.req.json();
        await redis?.set(`call:${c.req.param("runId")}:${body.toolCallId}`, JSON.stringify(body));
        return c.json({ status: "READY", toolCallId: body.toolCallId });
      });
    }
    return app.fetch(request);
  },
};
