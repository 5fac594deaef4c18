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
 * - `MCP_ALLOWED_ORIGINS`: optional, the origins (comma-separated, e.g.
 *   `https://app.example.com,http://localhost:5173`) whose browser pages may use the MCP route;
 *   a request with any other `Origin` is refused with 403 (`mcpRoute({ allowedOrigins })`).
 *
 * The run inspector and the MCP route are served only by the entry points that pass them
 * ({@linkcode EdgeOptions}); every entry of this folder does.
 *
 * Every variable is read and checked here, for every runtime: a mistake is a
 * {@linkcode StartupError}, one line that names the variable and its rule, which the process
 * entries print before they exit with status 2 (`edge/startup.ts`) and the Workers entries log
 * before they answer 500.
 *
 * @module
 */
import type { Hono } from "hono";
import {
  type AnyToolDefinition,
  ToolBoundary,
  type ToolBoundaryOptions,
} from "@tool-boundary/core";
import type { Store } from "@tool-boundary/core/store";
import { type AppEnv, createApp } from "@tool-boundary/core/hono";
import type { InspectorApp } from "@tool-boundary/core/inspector";
import type { McpRoute, McpRouteOptions } from "@tool-boundary/core/mcp";
import { MemoryStore } from "@tool-boundary/core/memory";
import { UpstashRestClient, UpstashStore } from "@tool-boundary/core/upstash";
import { BoundaryError } from "@tool-boundary/core";
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
  /** Origins, comma-separated, whose browser pages may use the MCP route. @default none */
  MCP_ALLOWED_ORIGINS?: string | undefined;
}

/**
 * A mistake in the configuration: its message is one line, `Refusing to start: <VARIABLE> <rule>`,
 * and never holds a value.
 */
export class StartupError extends Error {
  /** The variable at fault, e.g. `AGENT_TOKEN` (two joined by "and" when the pair is). */
  readonly variable: string;

  /**
   * @param variable The variable at fault.
   * @param rule What it must be, or what went wrong with it.
   */
  constructor(variable: string, rule: string) {
    super(`Refusing to start: ${variable} ${rule}`);
    this.name = "StartupError";
    this.variable = variable;
  }
}

/**
 * What an entry point serves besides the JSON API. The run inspector and the MCP route are
 * entries of their own (`@tool-boundary/core/inspector`, `@tool-boundary/core/mcp`): an entry
 * that does not pass them does not carry them in its bundle.
 */
export interface EdgeOptions {
  /** The tools to serve. @default TOOLS from edge/tools.ts */
  tools?: readonly AnyToolDefinition[];
  /** Receives the boundary's events (for logs). @default none */
  observe?: ToolBoundaryOptions["observe"];
  /**
   * `runInspector` of `@tool-boundary/core/inspector`: served at `/inspect` when INSPECTOR is
   * `on`. Without it INSPECTOR=on is a StartupError. @default none
   */
  inspector?: () => InspectorApp;
  /**
   * `mcpRoute` of `@tool-boundary/core/mcp`: served when SERVER_SECRET is set, with the origins
   * of MCP_ALLOWED_ORIGINS. Without it SERVER_SECRET still gives run tokens. @default none
   */
  mcp?: (options: McpRouteOptions) => McpRoute;
}

/** The app and what it was built with. */
export interface EdgeApp {
  /** The Hono app. */
  app: Hono<AppEnv>;
  /** Which store it uses. */
  store: "memory" | "upstash";
  /**
   * Reads the store once, as a process entry does before it listens.
   * @throws {StartupError} Naming UPSTASH_REDIS_REST_URL (or UPSTASH_REDIS_REST_TOKEN, when the
   *   endpoint refused it) when the Upstash store does not answer. The memory store always does.
   */
  checkStore(): Promise<void>;
}

/**
 * Builds the app from configuration. Fails closed: no tokens, no app. With both Upstash variables
 * the store is `UpstashStore` on its own `UpstashRestClient`.
 *
 * @param config Environment or bindings.
 * @param options The tools, the observer, and the inspector and MCP route when served.
 * @returns The app and the store kind.
 * @throws {StartupError} When a variable is missing or breaks its rule: AGENT_TOKEN or
 *   HARNESS_TOKEN missing, not a bearer token of at least 16 characters, or the same; only one
 *   Upstash variable set; UPSTASH_PREFIX, SERVER_SECRET (at least 32 characters), LEDGER_KEY (the
 *   JSON text of an Ed25519 private JWK) or MCP_ALLOWED_ORIGINS not as they must be; INSPECTOR
 *   `on` without `options.inspector`; or two upstreams of MCP_UPSTREAMS that serve a tool of the
 *   same name.
 */
export function buildEdgeApp(config: EdgeConfig, options: EdgeOptions = {}): EdgeApp {
  const { tools = TOOLS, observe } = options;
  const agentToken = config.AGENT_TOKEN?.trim();
  const harnessToken = config.HARNESS_TOKEN?.trim();
  if (!agentToken || !harnessToken) {
    throw new StartupError("AGENT_TOKEN and HARNESS_TOKEN", "must both be set");
  }
  const url = config.UPSTASH_REDIS_REST_URL?.trim();
  const token = config.UPSTASH_REDIS_REST_TOKEN?.trim();
  if (Boolean(url) !== Boolean(token)) {
    throw new StartupError(
      "UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN",
      "must both be set, or neither",
    );
  }
  if (url && !/^https?:\/\/[^/]/i.test(url)) {
    throw new StartupError(
      "UPSTASH_REDIS_REST_URL",
      "must be the database's REST URL, https://<name>.upstash.io",
    );
  }
  const secret = config.SERVER_SECRET?.trim();
  const prefix = config.UPSTASH_PREFIX?.trim();
  const ledgerKey = ledgerKeyOf(config.LEDGER_KEY);
  const allowedOrigins = listOf(config.MCP_ALLOWED_ORIGINS);
  const inspector = config.INSPECTOR?.trim().toLowerCase() === "on";
  if (inspector && options.inspector === undefined) {
    throw new StartupError("INSPECTOR", "is on, but this entry point has no run inspector");
  }
  // Checked with or without SERVER_SECRET: a mistake shows before it matters.
  const mcp = options.mcp === undefined
    ? undefined
    : translated(() => options.mcp!(allowedOrigins.length > 0 ? { allowedOrigins } : {}));
  const upstash = url && token
    ? translated(() =>
      // The store's own REST client, not @upstash/redis: 2 KB in a Worker, not 78 KB (minified).
      new UpstashStore({
        redis: new UpstashRestClient({ url, token }),
        ...(prefix ? { prefix } : {}),
      })
    )
    : null;
  const store: Store = upstash ?? new MemoryStore();
  const boundary = translated(() =>
    new ToolBoundary({
      store,
      tools,
      ...(observe ? { observe } : {}),
      ...(ledgerKey ? { ledgerKey } : {}),
    })
  );
  const app = translated(() =>
    createApp({
      boundary,
      agentToken,
      harnessToken,
      ...(inspector ? { inspector: options.inspector!() } : {}),
      ...(secret ? { secret } : {}),
      // The MCP route needs the secret: its session IDs are signed.
      ...(secret && mcp !== undefined ? { mcp } : {}),
      // Internal detail goes to the server log only, never into a response: one line, which
      // names the error and its causes and holds no URL.
      onError: (error, requestId) =>
        console.error(`request ${requestId} failed: ${describeError(error)}`),
    })
  );
  return {
    app,
    store: upstash === null ? "memory" : "upstash",
    checkStore: () => upstash === null ? Promise.resolve() : checkUpstash(upstash),
  };
}

/** Each variable whose rule `createApp`, `ToolBoundary` or `UpstashStore` keeps. */
const RULES: readonly [RegExp, string][] = [
  [/^Cannot create app: options\.agentToken (.+)$/, "AGENT_TOKEN"],
  [/^Cannot create app: options\.harnessToken (.+)$/, "HARNESS_TOKEN"],
  [/^Cannot create app: options\.secret (.+)$/, "SERVER_SECRET"],
  [/^Cannot create MCP route: options\.allowedOrigins (.+)$/, "MCP_ALLOWED_ORIGINS"],
  [
    /^Cannot create app: the agent and harness tokens (must differ)$/,
    "AGENT_TOKEN and HARNESS_TOKEN",
  ],
  [/^Cannot create UpstashStore: prefix (.+)$/, "UPSTASH_PREFIX"],
  [/^Invalid ledgerKey: (.+)$/, "LEDGER_KEY"],
  [/^Cannot create ToolBoundary: (duplicate tool name .+)$/, "MCP_UPSTREAMS"],
];

/**
 * Runs a constructor of the core and turns the TypeError it throws for an option into the
 * StartupError of the variable that option came from: the rule stays where it is kept.
 */
function translated<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    for (const [pattern, variable] of RULES) {
      const match = pattern.exec(error.message);
      if (match === null) continue;
      const rule = match[1]!;
      if (variable === "LEDGER_KEY") throw new StartupError(variable, `is not valid: ${rule}`);
      if (variable === "MCP_UPSTREAMS") {
        throw new StartupError(
          variable,
          `has two upstreams with a tool of one name (${rule}): give one a prefix`,
        );
      }
      throw new StartupError(variable, rule);
    }
    throw error;
  }
}

/** LEDGER_KEY's JWK; `undefined` when unset. The value never reaches an error message. */
function ledgerKeyOf(text: string | undefined): JsonWebKey | undefined {
  if (!text?.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new StartupError("LEDGER_KEY", "must be a private JWK as JSON text (generateLedgerKeys)");
  }
}

/** A comma-separated list; empty when unset. */
function listOf(text: string | undefined): string[] {
  return (text ?? "").split(",").map((item) => item.trim()).filter((item) => item !== "");
}

/** A run ID no run has: reading it costs one round trip and proves the URL, token and scripts. */
const PROBE_RUN_ID = "tool-boundary-startup-check";

async function checkUpstash(store: UpstashStore): Promise<void> {
  try {
    await store.getRun(PROBE_RUN_ID);
  } catch (error) {
    const cause = error instanceof BoundaryError ? error.cause : error;
    const refused = cause instanceof Error &&
      /unauthori[sz]ed|WRONGPASS|NOAUTH/i.test(cause.message);
    if (refused) {
      throw new StartupError(
        "UPSTASH_REDIS_REST_TOKEN",
        `was refused by the REST endpoint (${describeError(cause)})`,
      );
    }
    throw new StartupError(
      "UPSTASH_REDIS_REST_URL",
      `did not answer as an Upstash REST endpoint (${describeError(cause)})`,
    );
  }
}

/** At most this many errors of a cause chain, and characters of each message, in a log line. */
const MAX_CAUSES = 5;
const MAX_MESSAGE = 200;
// A URL runs to the next space: a ")" or ":" in it may be part of its query.
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/\S*/gi;

/**
 * A URL as its origin: its path, query and credentials may hold keys. The punctuation it ends
 * with (the sentence's, as in `(url):`) is kept after the origin.
 */
function originOnly(url: string): string {
  const [, body = url, tail = ""] = /^(.*?)([).,:;]*)$/.exec(url) ?? [];
  try {
    const { origin } = new URL(body);
    return origin === "null" ? "<url>" : `${origin}${tail}`;
  } catch {
    return "<url>";
  }
}

/**
 * An error and its causes on one line, `Name: message <- Name: message`, for logs: the first
 * line of each message, each URL cut to its origin (a fetch error's cause names the whole URL,
 * query string included), each message cut at 200 characters, and a cause that only repeats the
 * end of the message before it left out.
 *
 * @param error Anything thrown.
 * @returns One line.
 */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let previous = "";
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSES && current !== undefined && current !== null; depth++) {
    if (!(current instanceof Error)) {
      parts.push(`(a thrown ${typeof current})`);
      break;
    }
    const name = /^[A-Za-z0-9_.$-]{1,64}$/.test(current.name) ? current.name : "Error";
    let text = String(current.message).split("\n")[0]!.replace(URL_PATTERN, originOnly).trim();
    if (text.length > MAX_MESSAGE) text = `${text.slice(0, MAX_MESSAGE)}…`;
    const code = (current as { code?: unknown }).code;
    const tag = typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code) && !text.includes(code)
      ? ` [${code}]`
      : "";
    if (depth === 0 || !previous.endsWith(text) || tag !== "") {
      parts.push(`${name}: ${text}${tag}`);
    }
    previous = text;
    current = current.cause;
  }
  return parts.join(" <- ");
}
