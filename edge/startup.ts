/**
 * What the process entries (edge/dev.ts, edge/deno.ts, edge/bun.ts, edge/gateway_deno.ts,
 * edge/gateway_bun.ts) share around their start, for Deno and Bun alike: a mistake in the
 * configuration is one line on stderr, `Refusing to start: <VARIABLE> <rule>`, and exit status 2,
 * never a stack trace. The variables themselves are read and checked in edge/app.ts.
 *
 * @module
 */
import { describeError, StartupError } from "./app.ts";

/**
 * Runs a start: a {@linkcode StartupError} is printed as its one line on stderr and the process
 * exits with status 2; any other error is thrown on.
 *
 * @param start What the entry does before it serves.
 * @param exit The runtime's exit (`Deno.exit`, `process.exit`).
 * @returns What `start` returned.
 */
export async function startOrExit<T>(
  start: () => T | Promise<T>,
  exit: (code: number) => never,
): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    console.error(error.message);
    return exit(2);
  }
}

/**
 * PORT as a number.
 *
 * @param text The variable.
 * @param fallback The entry's default port.
 * @returns The port; 0 asks for any free one.
 * @throws {StartupError} When it is not a port number.
 */
export function portOf(text: string | undefined, fallback: number): number {
  const value = text?.trim() ?? "";
  if (value === "") return fallback;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new StartupError("PORT", "must be a port number from 0 to 65535 (0: any free port)");
  }
  return Number(value);
}

/**
 * A failure to listen as the StartupError of PORT or HOST (Deno's error names and Bun's codes
 * both), or the error itself when it is neither's fault.
 *
 * @param error What the runtime's serve threw.
 * @param hostname The address it was asked to listen on.
 * @param port The port it was asked to listen on.
 * @returns The error to throw.
 */
export function listenError(error: unknown, hostname: string, port: number): unknown {
  const name = error instanceof Error ? error.name : "";
  const code = (error as { code?: unknown } | null)?.code;
  if (name === "AddrInUse" || code === "EADDRINUSE") {
    return new StartupError(
      "PORT",
      `${port} is in use on ${hostname}: stop what listens there, or set PORT to a free port ` +
        "(0 for any)",
    );
  }
  if (name === "PermissionDenied" || code === "EACCES") {
    return new StartupError(
      "PORT",
      `${port} may not be opened by this process (ports below 1024 need privileges): set PORT ` +
        "to 1024 or above",
    );
  }
  if (name === "AddrNotAvailable" || code === "EADDRNOTAVAIL") {
    return new StartupError(
      "HOST",
      `${hostname} is not an address of this machine: set HOST to one (0.0.0.0 for all)`,
    );
  }
  return error;
}

/**
 * A failure of MCP_UPSTREAMS (`upstreamsOf` refused the text, or `connectGateway` could not reach
 * or start an upstream) as its StartupError.
 *
 * @param error What was thrown.
 * @returns The StartupError.
 */
export function upstreamsError(error: unknown): StartupError {
  if (error instanceof StartupError) return error;
  const prefix = "MCP_UPSTREAMS ";
  if (error instanceof TypeError && error.message.startsWith(prefix)) {
    return new StartupError("MCP_UPSTREAMS", error.message.slice(prefix.length));
  }
  return new StartupError(
    "MCP_UPSTREAMS",
    `names an upstream that did not connect (it must be up and speak MCP at its url, or start ` +
      `with its command): ${describeError(error)}`,
  );
}

/** The host names a dev server on loopback answers to without configuration. */
export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/**
 * Serves `fetch` only to requests whose `Host` names one of `hosts` (any port): a page on
 * another name that resolves to this machine (DNS rebinding) gets 403, whatever its route.
 *
 * @param fetch The app's fetch.
 * @param hosts The allowed host names, lower case (`[::1]` for IPv6).
 * @returns The guarded fetch.
 */
export function hostGuarded<R>(
  fetch: (request: Request) => R,
  hosts: readonly string[],
): (request: Request) => R | Response {
  const allowed = new Set(hosts.map((host) => host.toLowerCase()));
  return (request) => {
    let hostname = "";
    try {
      hostname = new URL(request.url).hostname.toLowerCase();
    } catch {
      // No readable host: refused.
    }
    if (allowed.has(hostname)) return fetch(request);
    return Response.json(
      {
        status: "ERROR",
        code: "FORBIDDEN",
        message: `Host not allowed: this server answers only to ${[...allowed].join(", ")} ` +
          "(ALLOWED_HOSTS adds names).",
      },
      { status: 403, headers: { "Cache-Control": "no-store" } },
    );
  };
}
