/**
 * Bearer tokens and roles: the agent token may only submit tool calls, the harness token may do
 * everything. Tokens are checked when the app is made (fail closed) and compared in constant
 * time on every request. A run token (signed, see `run_token.ts`) is an agent token for one
 * run instance only: on any route of another run, or one without a run, it is FORBIDDEN; on a
 * later run started under the same ID its calls are RUN_NOT_FOUND, as the store's begin
 * refuses the instance it names (no instance keeps runs of its own to decide it).
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import type { RunRef } from "../core/types.ts";
import { errorResponse } from "./status.ts";

/**
 * Which token a request carried.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { createApp, type Role } from "@tool-boundary/core/hono";
 *
 * const app = createApp({
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 * });
 * const tokens: Record<Role, string> = {
 *   agent: "agent-token-0123456789",
 *   harness: "harness-token-0123456789",
 * };
 * const listing = async (role: Role) =>
 *   (await app.request("/v1/tools", { headers: { authorization: `Bearer ${tokens[role]}` } }))
 *     .status;
 * // The agent token may only submit tool calls; the harness token may do everything.
 * assert.deepEqual([await listing("agent"), await listing("harness")], [403, 200]);
 * ```
 */
export type Role = "agent" | "harness";

/**
 * Who may call a route: `public` anyone, `agent` the agent or the harness token, `harness` the
 * harness token only.
 */
export type Access = "public" | Role;

/**
 * The Hono environment of the app: the request ID and the caller's role.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Hono } from "hono";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { type AppEnv, createApp } from "@tool-boundary/core/hono";
 *
 * const app: Hono<AppEnv> = createApp({
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 * });
 * const res = await app.request("/healthz", { headers: { "x-request-id": "req-42" } });
 * assert.equal(res.headers.get("x-request-id"), "req-42");
 * ```
 */
export interface AppEnv {
  /** Set by the middleware. */
  Variables: {
    requestId: string;
    role: Role;
    /** The run instance a run token is valid on; unset for the static tokens. */
    runScope?: { runId: string; startedAt: number };
    /** A JSON route's body, as its guards admitted it (the schema's output, and as sent). */
    body?: { data: unknown; sent: Record<string, unknown> };
  };
}

/** The tokens of both roles, as `createApp` takes them. */
export interface Tokens {
  /** Bearer token(s) of the agent role. */
  agentToken: string | readonly string[];
  /** Bearer token(s) of the harness role. */
  harnessToken: string | readonly string[];
}

/** The run instance a run token names: the run ID and that run's `startedAt`. */
export interface RunScope {
  /** The run ID. */
  runId: string;
  /** The `startedAt` of the run the token was issued for. */
  startedAt: number;
}

/** How the guards check run tokens. */
export interface RunTokenCheck {
  /** The instance a genuine, unexpired run token names (MAC checked first), else `null`. */
  scope(token: string): Promise<RunScope | null>;
}

/**
 * The run a request of a run's route is for: the path's run ID and, for a run token, the
 * instance it was issued for. The boundary's calls take it as it is: the store's begin (or
 * lookup) checks the run and its instance, so no instance reads or keeps runs of its own.
 */
export function runOf(c: Context<AppEnv>): RunRef {
  const runId = c.req.param("runId") ?? "";
  const scope = c.get("runScope");
  return scope === undefined ? { runId } : { runId, startedAt: scope.startedAt };
}

const MIN_TOKEN_LENGTH = 16;
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]+=*$/;
const encoder = new TextEncoder();

/**
 * The middleware each access level needs, made once per app.
 *
 * @param tokens Both roles' tokens.
 * @param runTokens How run tokens are checked; without it no run token is accepted.
 * @returns A function from a route's access to its guards, in order.
 * @throws {TypeError} When a token is missing, shorter than 16 characters, not a valid bearer
 *   token, or used by both roles.
 */
export function accessGuards(
  tokens: Tokens,
  runTokens?: RunTokenCheck,
): (access: Access) => MiddlewareHandler<AppEnv>[] {
  const agentTokens = tokenList("agentToken", tokens.agentToken);
  const harnessTokens = tokenList("harnessToken", tokens.harnessToken);
  if (agentTokens.some((token) => harnessTokens.includes(token))) {
    throw new TypeError("Cannot create app: the agent and harness tokens must differ");
  }
  const agentKeys = agentTokens.map((token) => encoder.encode(token));
  const harnessKeys = harnessTokens.map((token) => encoder.encode(token));

  const authenticate = bearerAuth<AppEnv>({
    verifyToken: async (token, c) => {
      // Compare against every token so timing says nothing about which role matched.
      const given = encoder.encode(token);
      let role: Role | null = null;
      for (const candidate of harnessKeys) {
        if (constantTimeEqual(candidate, given) && role === null) role = "harness";
      }
      for (const candidate of agentKeys) {
        if (constantTimeEqual(candidate, given) && role === null) role = "agent";
      }
      if (role === null && runTokens !== undefined) {
        const scope = await runTokens.scope(token);
        if (scope !== null) {
          role = "agent";
          c.set("runScope", scope);
        }
      }
      if (role !== null) c.set("role", role);
      return role !== null;
    },
    noAuthenticationHeader: { message: (c) => errorResponse(c, "UNAUTHENTICATED") },
    invalidAuthenticationHeader: { message: (c) => errorResponse(c, "UNAUTHENTICATED") },
    invalidToken: { message: (c) => errorResponse(c, "UNAUTHENTICATED") },
  });
  const harnessOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (c.get("role") !== "harness") return errorResponse(c, "FORBIDDEN");
    await next();
  };
  // After the MAC and the claims: the run of the path is the token's. Its instance is the store's
  // to check, in the begin of each call (the route passes the token's `startedAt` on).
  const ownRunOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
    const scope = c.get("runScope");
    if (scope !== undefined && c.req.param("runId") !== scope.runId) {
      return errorResponse(c, "FORBIDDEN");
    }
    await next();
  };
  const guards: Record<Access, MiddlewareHandler<AppEnv>[]> = {
    public: [],
    agent: [authenticate, ownRunOnly],
    harness: [authenticate, harnessOnly],
  };
  return (access) => guards[access];
}

/**
 * Compares a presented token with a configured one in time that depends only on the configured
 * token's length (a server secret's length, not the guess), so timing reveals nothing about how
 * much of a guess was right. Synchronous: hashing both sides with WebCrypto on every request cost
 * about 75 µs per comparison.
 */
export function constantTimeEqual(expected: Uint8Array, given: Uint8Array): boolean {
  let diff = expected.length ^ given.length;
  for (let i = 0; i < expected.length; i++) {
    diff |= expected[i]! ^ (given[i] ?? 0);
  }
  return diff === 0;
}

function tokenList(name: string, value: string | readonly string[] | undefined): string[] {
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? [...value] : [];
  if (list.length === 0) {
    throw new TypeError(`Cannot create app: options.${name} is required`);
  }
  for (const token of list) {
    // Each refusal names the rule the token broke, not the first rule there is.
    if (typeof token !== "string") {
      throw new TypeError(`Cannot create app: options.${name} must be a string`);
    }
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new TypeError(
        `Cannot create app: options.${name} must be at least ${MIN_TOKEN_LENGTH} characters`,
      );
    }
    if (!TOKEN_PATTERN.test(token)) {
      throw new TypeError(
        `Cannot create app: options.${name} may hold only A-Z a-z 0-9 - . _ ~ + / ` +
          "(and = at its end), no spaces: it goes in an Authorization: Bearer header",
      );
    }
  }
  return list;
}
