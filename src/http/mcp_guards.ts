/**
 * The MCP route's own request checks, before its token is read: the `Origin` a browser sends
 * (DNS rebinding protection, as the Streamable HTTP transport asks), and a 401 that names the
 * token the route takes instead of an OAuth challenge.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./auth.ts";

/**
 * The message of the MCP route's 401. MCP clients read a `WWW-Authenticate: Bearer` challenge
 * (RFC 6750, RFC 9728) as a call to start OAuth; this route takes a static bearer token, so its
 * 401 has no challenge and says which token to send.
 */
export const MCP_UNAUTHENTICATED_MESSAGE = "This MCP route takes a bearer token, not OAuth: " +
  "send `Authorization: Bearer <token>` with the agent token, or the run token (agentToken) " +
  "that POST /v1/runs answered for this run.";

/** The JSON-RPC error a refused Origin gets (no id: the request was not read). */
const ORIGIN_REFUSED = {
  jsonrpc: "2.0",
  id: null,
  error: {
    code: -32600,
    message: "Origin not allowed: a browser page may use this MCP route only from an origin " +
      "the server lists (allowedOrigins).",
  },
} as const;

/**
 * The allow-list of {@linkcode CreateAppOptions.allowedOrigins}, checked once: each entry an
 * `http:` or `https:` origin (scheme, host and port; a trailing `/` is dropped).
 *
 * @param value The option.
 * @returns The origins, as browsers send them in `Origin`.
 * @throws {TypeError} When it is not an array of such origins.
 */
export function originList(value: readonly string[] | undefined): ReadonlySet<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value)) {
    throw new TypeError("Cannot create app: options.allowedOrigins must be an array of origins");
  }
  const origins = new Set<string>();
  for (const entry of value) {
    const text = typeof entry === "string" ? entry.trim().replace(/\/$/, "") : "";
    let origin: string | null = null;
    try {
      const url = new URL(text);
      if ((url.protocol === "http:" || url.protocol === "https:") && url.origin === text) {
        origin = url.origin;
      }
    } catch {
      // Not a URL: refused below.
    }
    if (origin === null) {
      throw new TypeError(
        "Cannot create app: options.allowedOrigins must list origins such as " +
          "https://app.example.com (http or https, host and port only, no path)",
      );
    }
    origins.add(origin);
  }
  return origins;
}

/**
 * Refuses with 403 a request whose `Origin` is not on the list. A request without `Origin` (a
 * client that is not a browser page) passes: the bearer token still guards it.
 *
 * @param allowed From {@linkcode originList}.
 * @returns The middleware.
 */
export function originGuard(allowed: ReadonlySet<string>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !allowed.has(origin)) return c.json(ORIGIN_REFUSED, 403);
    await next();
  };
}

/**
 * Wraps a token guard so that its 401 carries {@linkcode MCP_UNAUTHENTICATED_MESSAGE} and no
 * `WWW-Authenticate` challenge.
 *
 * @param guard A guard of `accessGuards`.
 * @returns The guard, with the MCP route's 401.
 */
export function withoutChallenge(guard: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    try {
      return await guard(c, next);
    } catch (error) {
      // Only the guard's own refusal lands here: what runs after it has its own error handling.
      if (!(error instanceof HTTPException) || error.status !== 401) throw error;
      return c.json(
        { status: "ERROR", code: "UNAUTHENTICATED", message: MCP_UNAUTHENTICATED_MESSAGE },
        401,
      );
    }
  };
}
