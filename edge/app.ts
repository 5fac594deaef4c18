/**
 * What every entry point shares: read the configuration, pick the store, build the app.
 *
 * Configuration (environment variables, or bindings on Cloudflare):
 * - `AGENT_TOKEN`, `HARNESS_TOKEN`: required (at least 16 characters each).
 * - `SERVER_SECRET`: optional (at least 32 characters, the same on every instance): enables run
 *   tokens and the MCP route `POST /v1/runs/{runId}/mcp`.
 * - `UPSTASH_REDIS_REST_URL`, `UPSTASH_REDIS_REST_TOKEN`: when both are set the Upstash store is
 *   used; otherwise the in-memory store (one process only, lost on restart).
 * - `LEDGER_KEY`: optional, the ledger's Ed25519 private JWK as JSON text (`generateLedgerKeys`):
 *   every completed record and ended run is signed, `GET /v1/runs/{runId}/export` bundles verify
 *   offline, and `GET /v1/ledger-key` serves the public key (see docs/proof.md).
 * - `INSPECTOR`: `on` serves the run inspector at `/inspect` (off otherwise; `deno task dev` turns
 *   it on). The page holds no data: it reads runs with the harness token typed into it.
 *
 * @module
 */
import type { Hono } from "hono";
import {
  type AnyToolDefinition,
  type Store,
  ToolBoundary,
  type ToolBoundaryOptions,
} from "@tool-boundary/core";
import { type AppEnv, createApp } from "@tool-boundary/core/hono";
import { runInspector } from "@tool-boundary/core/inspector";
import { MemoryStore } from "@tool-boundary/core/memory";
import { type UpstashRedisClient, UpstashStore } from "@tool-boundary/core/upstash";
import { TOOLS } from "./tools.ts";

/** The variables an entry point reads. */
export interface EdgeConfig {
  /** Bearer token of the agent role. */
  AGENT_TOKEN?: string | undefined;
  /** Bearer token of the harness role. */
  HARNESS_TOKEN?: string | undefined;
  /** Signs run tokens and MCP session IDs; without it neither is served. */
  SERVER_SECRET?: string | undefined;
  /** Upstash REST URL. */
  UPSTASH_REDIS_REST_URL?: string | undefined;
  /** Upstash REST token. */
  UPSTASH_REDIS_REST_TOKEN?: string | undefined;
  /** Key prefix in Redis. @default "tb" */
  UPSTASH_PREFIX?: string | undefined;
  /** `on` serves the run inspector at `/inspect`. @default off */
  INSPECTOR?: string | undefined;
  /** The ledger's private JWK as JSON text; without it nothing is signed. */
  LEDGER_KEY?: string | undefined;
  /** The gateway's upstream MCP servers, a JSON array (`upstreamsOf` of `@tool-boundary/mcp/gateway`). */
  MCP_UPSTREAMS?: string | undefined;
}

/** How an entry point makes its runtime's `@upstash/redis` client from the credentials. */
export type RedisFactory = (url: string, token: string) => UpstashRedisClient;

/**
 * What every entry point gives its `@upstash/redis` client besides the credentials.
 *
 * Auto-pipelining off: with it on (the client's default) calls made in the same tick share one
 * `/pipeline` request, and when their sum passes Upstash's max request size (10 MB on the free
 * and pay-as-you-go plans) Upstash refuses the whole request, so every call in it fails, also
 * those that would fit alone (eight concurrent 1 MiB completes and a small begin: none
 * succeed). Each store operation is one request of its own instead.
 */
export const REDIS_CLIENT_OPTIONS: { readonly enableAutoPipelining: false } = Object.freeze({
  enableAutoPipelining: false,
});

/** The app and what it was built with. */
export interface EdgeApp {
  /** The Hono app. */
  app: Hono<AppEnv>;
  /** Which store it uses. */
  store: "memory" | "upstash";
}

/**
 * Builds the app from configuration. Fails closed: no tokens, no app.
 *
 * @param config Environment or bindings.
 * @param redis Makes the Redis client; used only when both Upstash variables are set.
 * @param tools The tools to serve. @default TOOLS from edge/tools.ts
 * @param observe Receives the boundary's events (for logs); none when omitted.
 * @returns The app and the store kind.
 * @throws {Error} When AGENT_TOKEN or HARNESS_TOKEN is missing, or only one Upstash variable is set.
 * @throws {TypeError} When a token or SERVER_SECRET is too short, or LEDGER_KEY is not the JSON
 *   text of an Ed25519 private JWK.
 */
export function buildEdgeApp(
  config: EdgeConfig,
  redis: RedisFactory,
  tools: readonly AnyToolDefinition[] = TOOLS,
  observe?: ToolBoundaryOptions["observe"],
): EdgeApp {
  const agentToken = config.AGENT_TOKEN?.trim();
  const harnessToken = config.HARNESS_TOKEN?.trim();
  if (!agentToken || !harnessToken) {
    throw new Error("Refusing to start: AGENT_TOKEN and HARNESS_TOKEN must both be set");
  }
  const url = config.UPSTASH_REDIS_REST_URL?.trim();
  const token = config.UPSTASH_REDIS_REST_TOKEN?.trim();
  if (Boolean(url) !== Boolean(token)) {
    throw new Error(
      "Refusing to start: set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or neither",
    );
  }
  const secret = config.SERVER_SECRET?.trim();
  const prefix = config.UPSTASH_PREFIX?.trim();
  const store: Store = url && token
    ? new UpstashStore({ redis: redis(url, token), ...(prefix ? { prefix } : {}) })
    : new MemoryStore();
  const ledgerKey = ledgerKeyOf(config.LEDGER_KEY);
  const boundary = new ToolBoundary({
    store,
    tools,
    ...(observe ? { observe } : {}),
    ...(ledgerKey ? { ledgerKey } : {}),
  });
  return {
    app: createApp({
      boundary,
      agentToken,
      harnessToken,
      ...(config.INSPECTOR?.trim().toLowerCase() === "on" ? { inspector: runInspector() } : {}),
      ...(secret ? { secret } : {}),
      // Internal detail goes to the server log only, never into a response.
      onError: (error, requestId) => console.error(`request ${requestId} failed:`, error),
    }),
    store: url && token ? "upstash" : "memory",
  };
}

/** LEDGER_KEY's JWK; `undefined` when unset. The value never reaches an error message. */
function ledgerKeyOf(text: string | undefined): JsonWebKey | undefined {
  if (!text?.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new TypeError("Refusing to start: LEDGER_KEY must be a private JWK as JSON text");
  }
}
