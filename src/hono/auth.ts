/**
 * Bearer tokens and roles: the agent token may only submit tool calls, the harness token may do
 * everything. Tokens are checked when the app is made (fail closed) and compared in constant
 * time on every request, without allocating: the header is read once and compared as it is. A run token (signed, see `run_token.ts`) is an agent token for one
 * run instance only: on any route of another run, or one without a run, it is FORBIDDEN; on a
 * later run started under the same ID its calls are RUN_NOT_FOUND, as the store's begin
 * refuses the instance it names (no instance keeps runs of its own to decide it).
 *
 * @module
 */
import type { Context } from "hono";
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
  /**
   * The instance a genuine, unexpired run token names (MAC checked first), else `null`;
   * synchronous when the token was checked (or signed) before and is held in memory.
   */
  scope(token: string): RunScope | null | Promise<RunScope | null>;
}

/**
 * A check of a request before its handler: a refusal to answer with, or `undefined` to go on.
 * Synchronous where it can be, so that a request that passes pays no turn of the event loop.
 */
export type Guard = (
  c: Context<AppEnv>,
) => Response | undefined | Promise<Response | undefined>;

/**
 * Answers a request without a valid bearer token. `challenge` is the `WWW-Authenticate` value
 * RFC 6750 gives for the case (`Bearer realm=""`, `Bearer error="invalid_request"` or
 * `Bearer error="invalid_token"`).
 */
export type Unauthenticated = (c: Context<AppEnv>, challenge: string) => Response;

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
const SCHEME = "bearer";
const NO_TOKEN = 'Bearer realm=""';
const MALFORMED = 'Bearer error="invalid_request"';
const WRONG_TOKEN = 'Bearer error="invalid_token"';

/** The app's 401: the error body, and the challenge in `WWW-Authenticate`. */
const challenged: Unauthenticated = (c, challenge) => {
  c.header("WWW-Authenticate", challenge);
  return errorResponse(c, "UNAUTHENTICATED");
};

/**
 * The bearer token of an `Authorization` header (`Bearer <token>`, the scheme in any case), or
 * `null` when there is none or the header is not of that form.
 */
function bearerOf(header: string | undefined): string | null {
  // "Bearer" in any case and a space, then the token (more spaces may come before it).
  if (header === undefined || header.charCodeAt(6) !== 32) return null;
  for (let i = 0; i < 6; i++) {
    // `| 0x20` lower-cases a letter, and makes nothing else a letter.
    if ((header.charCodeAt(i) | 0x20) !== SCHEME.charCodeAt(i)) return null;
  }
  const token = header.slice(7).trimStart();
  return TOKEN_PATTERN.test(token) ? token : null;
}

/**
 * The guard each access level needs, made once per app: the bearer token and the role, and for
 * a run token the run of the path.
 *
 * @param tokens Both roles' tokens.
 * @param runTokens How run tokens are checked; without it no run token is accepted.
 * @returns A function from a route's access (and, for a route that answers its own 401, how) to
 *   its guards, in order.
 * @throws {TypeError} When a token is missing, shorter than 16 characters, not a valid bearer
 *   token, or used by both roles.
 */
export function accessGuards(
  tokens: Tokens,
  runTokens?: RunTokenCheck,
): (access: Access, unauthenticated?: Unauthenticated) => Guard[] {
  const agentTokens = tokenList("agentToken", tokens.agentToken);
  const harnessTokens = tokenList("harnessToken", tokens.harnessToken);
  if (agentTokens.some((token) => harnessTokens.includes(token))) {
    throw new TypeError("Cannot create app: the agent and harness tokens must differ");
  }

  /** The static role a token is, compared against every token: timing tells no role apart. */
  const staticRole = (token: string): Role | null => {
    let role: Role | null = null;
    for (const candidate of harnessTokens) {
      if (constantTimeEqual(candidate, token) && role === null) role = "harness";
    }
    for (const candidate of agentTokens) {
      if (constantTimeEqual(candidate, token) && role === null) role = "agent";
    }
    return role;
  };

  /** After the token: the role the route needs, and for a run token the run of the path. */
  const admit = (c: Context<AppEnv>, access: Role, role: Role, scope?: RunScope) => {
    c.set("role", role);
    if (access === "harness") return role === "harness" ? undefined : errorResponse(c, "FORBIDDEN");
    if (scope === undefined) return undefined;
    c.set("runScope", scope);
    // After the MAC and the claims: the run of the path is the token's. Its instance is the
    // store's to check, in the begin of each call (the route passes the token's `startedAt` on).
    return c.req.param("runId") === scope.runId ? undefined : errorResponse(c, "FORBIDDEN");
  };

  const guard = (access: Role, unauthenticated: Unauthenticated): Guard => (c) => {
    const header = c.req.header("authorization");
    const token = bearerOf(header);
    if (token === null) return unauthenticated(c, header ? MALFORMED : NO_TOKEN);
    const role = staticRole(token);
    if (role !== null) return admit(c, access, role);
    if (runTokens === undefined) return unauthenticated(c, WRONG_TOKEN);
    const scope = runTokens.scope(token);
    const decide = (scope: RunScope | null) =>
      scope === null ? unauthenticated(c, WRONG_TOKEN) : admit(c, access, "agent", scope);
    return scope instanceof Promise ? scope.then(decide) : decide(scope);
  };
  return (access, unauthenticated = challenged) =>
    access === "public" ? [] : [guard(access, unauthenticated)];
}

/**
 * Compares a presented token with a configured one in time that depends only on the configured
 * token's length (a server secret's length, not the guess), so timing reveals nothing about how
 * much of a guess was right. Synchronous and without allocations: hashing both sides with
 * WebCrypto on every request cost about 75 µs per comparison. Both are bearer tokens (ASCII), so
 * UTF-16 code units are their bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { constantTimeEqual } from "./auth.ts";
 *
 * assert.equal(constantTimeEqual("agent-token-0123456789", "agent-token-0123456789"), true);
 * assert.equal(constantTimeEqual("agent-token-0123456789", "agent-token-012345678"), false);
 * assert.equal(constantTimeEqual("agent-token-0123456789", "agent-token-01234567890"), false);
 * ```
 */
export function constantTimeEqual(expected: string, given: string): boolean {
  let diff = expected.length ^ given.length;
  for (let i = 0; i < expected.length; i++) {
    // Past the end of `given`, charCodeAt is NaN, which `^` reads as 0.
    diff |= expected.charCodeAt(i) ^ given.charCodeAt(i);
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
