/**
 * A Cloudflare Worker that serves one tool behind the boundary over HTTP.
 *
 * Secrets: AGENT_TOKEN and HARNESS_TOKEN (required; for `wrangler dev`, in `.dev.vars`: copy
 * `.dev.vars.example`), SERVER_SECRET (optional, at least 32 characters: run tokens and the MCP
 * route), UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (optional: without them the store
 * is in memory, one per isolate, fine for trying it out).
 *
 * @module
 */
import { Redis } from "@upstash/redis/cloudflare";
import * as v from "valibot";
import { defineTool, ToolBoundary } from "@tool-boundary/core";
import type { Store } from "@tool-boundary/core/store";
import { type BoundaryApp, createApp } from "@tool-boundary/core/hono";
import { mcpRoute } from "@tool-boundary/core/mcp";
import { MemoryStore } from "@tool-boundary/core/memory";
import { UpstashStore } from "@tool-boundary/core/upstash";

/** The Worker's bindings. */
export interface Env {
  AGENT_TOKEN?: string;
  HARNESS_TOKEN?: string;
  SERVER_SECRET?: string;
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  /** The ledger's private JWK as JSON text (optional): records and runs are signed. */
  LEDGER_KEY?: string;
}

const STATUS: Record<string, string> = {
  api: "degraded: p99 latency above 2 s since 09:40 UTC",
  billing: "operational",
};

const serviceStatus = defineTool({
  name: "service_status",
  description: "The current status of one service.",
  readOnly: true,
  input: v.object({ service: v.string() }),
  execute: ({ service }) => ({ service, status: STATUS[service] ?? null }),
  project: (raw) => ({
    evidence: raw.status === null ? "NO_EVIDENCE" : "EVIDENCE_FOUND",
    scope: `status page entry of "${raw.service}"`,
    content: raw.status,
  }),
});

function build(env: Env): BoundaryApp {
  const { AGENT_TOKEN: agentToken, HARNESS_TOKEN: harnessToken } = env;
  if (!agentToken || !harnessToken) {
    throw new Error("AGENT_TOKEN and HARNESS_TOKEN must be set");
  }
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  const store: Store = url && token
    // One request per call: an auto-pipelined batch of large calls can pass the request limit.
    ? new UpstashStore({ redis: new Redis({ url, token, enableAutoPipelining: false }) })
    : new MemoryStore();
  // With a ledger key every record and run is signed: GET /v1/runs/:runId/export verifies offline.
  const ledgerKey = env.LEDGER_KEY ? JSON.parse(env.LEDGER_KEY) as JsonWebKey : undefined;
  const boundary = new ToolBoundary({
    store,
    tools: [serviceStatus],
    ...(ledgerKey ? { ledgerKey } : {}),
  });
  // With a secret: run tokens, and the MCP route (its session IDs are signed). Without one,
  // neither, and POST /v1/runs/:runId/mcp answers 404.
  const secret = env.SERVER_SECRET;
  return createApp({
    boundary,
    agentToken,
    harnessToken,
    ...(secret ? { secret, mcp: mcpRoute() } : {}),
  });
}

let app: BoundaryApp | undefined;

export default {
  fetch(request: Request, env: Env): Response | Promise<Response> {
    try {
      app ??= build(env);
    } catch (error) {
      // Fail closed until the secrets are set; the reason goes to the log only.
      console.error(error);
      return Response.json({
        status: "ERROR",
        code: "INTERNAL_ERROR",
        message: "Not configured: set AGENT_TOKEN and HARNESS_TOKEN (see .dev.vars.example).",
      }, { status: 500, headers: { "Cache-Control": "no-store" } });
    }
    return app.fetch(request, env);
  },
};
