/**
 * The MCP gateway's configuration and upstream connections: the tools of upstream MCP servers,
 * reached with the official SDK's client (`@modelcontextprotocol/sdk` 1.x) over Streamable HTTP
 * or over stdio (a process of their own), as tool definitions of a `ToolBoundary` (through
 * {@linkcode mcpTools}). The repository's edge entries serve them the same way as their own
 * tools: through `POST /v1/runs/{runId}/mcp` and the tool-call route, one record per call.
 *
 * `MCP_UPSTREAMS` is a JSON array, one object per server, each with exactly one of `url` and
 * `command`:
 *
 * ```json
 * [{ "url": "https://mcp.example.com/mcp", "trusted": true, "readOnly": { "get-env": false },
 *    "prefix": "docs_", "headers": { "authorization": "Bearer ..." }, "timeoutMs": 30000,
 *    "cost": 2, "toolCosts": { "search": 5 } },
 *  { "command": "node", "args": ["server.js", "/srv/notes"], "env": { "LOG": "1" },
 *    "cwd": "/srv", "readOnly": { "read_file": true } }]
 * ```
 *
 * The rest are the options of `mcpTools` (`trusted` defaults to false: nothing runs unless
 * `readOnly` names it; `cost` is what a call of each of its tools costs against a run's
 * `budget.cost`, `toolCosts` the same by upstream tool name, over `cost`), plus the HTTP headers sent to a `url`, or the arguments, extra
 * environment and working directory of a `command`. The stdio transport needs
 * `node:child_process`, so it lives in its own entry, `@tool-boundary/mcp/stdio`, which a
 * Workers bundle leaves out; {@linkcode connectGateway} is given it as `stdio`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { connectGateway, upstreamsOf } from "@tool-boundary/mcp/gateway";
 *
 * // Unset or empty: no upstreams, no tools, nothing to close.
 * const gateway = await connectGateway(upstreamsOf(undefined));
 * const boundary = new ToolBoundary({ tools: gateway.tools });
 * assert.deepEqual(boundary.describeTools(), []);
 * await gateway.close();
 * ```
 *
 * @module
 */
import * as v from "valibot";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { JsonSchemaType, JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import type { AnyToolDefinition } from "@tool-boundary/core";
import { MAX_TIMEOUT_MS, type McpClient, mcpTools } from "./mod.ts";
import { COST_RULE, isCost } from "./cost.ts";

// `deno doc --lint` counts a type of another package as private (denoland/deno#27364); these
// aliases name them for the docs.
/**
 * `AnyToolDefinition` of `@tool-boundary/core`: a tool definition for a `ToolBoundary`.
 * @internal
 */
type GatewayTool = AnyToolDefinition;
/**
 * `Transport` of `@modelcontextprotocol/sdk/shared/transport.js`: what the SDK client connects to.
 * @internal
 */
type McpTransport = Transport;

/**
 * What every upstream of `MCP_UPSTREAMS` may say about its tools: the options of
 * {@linkcode mcpTools} it is wrapped with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { upstreamsOf } from "@tool-boundary/mcp/gateway";
 *
 * const [upstream] = upstreamsOf('[{"url":"https://a.example/mcp","prefix":"a_"}]');
 * assert.equal(upstream?.prefix, "a_");
 * assert.equal(upstream?.trusted, undefined); // untrusted: only what readOnly names runs
 * ```
 */
export interface UpstreamOptions {
  /** Believe its `readOnlyHint`. @default false */
  trusted?: boolean;
  /** Read-only by upstream tool name, either way. */
  readOnly?: Record<string, boolean>;
  /** Put before its tool names. */
  prefix?: string;
  /** Milliseconds a call may take. */
  timeoutMs?: number;
  /** Cost units of a call of each of its tools, against the run's `budget.cost`. */
  cost?: number;
  /** Cost units of a call by upstream tool name, over `cost`. */
  toolCosts?: Record<string, number>;
}

/**
 * An upstream server reached over Streamable HTTP.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type HttpUpstream, upstreamsOf } from "@tool-boundary/mcp/gateway";
 *
 * const expected: HttpUpstream = {
 *   url: "https://docs.example/mcp",
 *   headers: { authorization: "Bearer t" },
 *   trusted: true,
 * };
 * assert.deepEqual(upstreamsOf(JSON.stringify([expected])), [expected]);
 * ```
 */
export interface HttpUpstream extends UpstreamOptions {
  /** Its Streamable HTTP endpoint. */
  url: string;
  /** HTTP headers sent with every request to it (e.g. its credentials). */
  headers?: Record<string, string>;
}

/**
 * An upstream server the gateway runs as a process of its own, spoken to over stdio.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type StdioUpstream, upstreamsOf } from "@tool-boundary/mcp/gateway";
 *
 * const expected: StdioUpstream = {
 *   command: "node",
 *   args: ["server.js", "/srv/notes"],
 *   env: { LOG: "1" },
 *   readOnly: { read_file: true },
 * };
 * assert.deepEqual(upstreamsOf(JSON.stringify([expected])), [expected]);
 * ```
 */
export interface StdioUpstream extends UpstreamOptions {
  /** The program (found on PATH, as a shell would). */
  command: string;
  /** Its arguments. */
  args?: string[];
  /**
   * Variables set for it, on top of the SDK's safe default set (HOME, LOGNAME, PATH, SHELL, TERM,
   * USER): the gateway's own environment, with its tokens and secrets, is not passed on.
   */
  env?: Record<string, string>;
  /** Its working directory. @default the gateway's */
  cwd?: string;
}

/**
 * One upstream server of `MCP_UPSTREAMS`: {@linkcode isStdio} tells which.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Upstream, upstreamsOf } from "@tool-boundary/mcp/gateway";
 *
 * const text = '[{"url":"https://a.example/mcp"},{"command":"node"}]';
 * const upstreams: Upstream[] = upstreamsOf(text);
 * assert.equal(upstreams.length, 2);
 * ```
 */
export type Upstream = HttpUpstream | StdioUpstream;

const isRecordOf = (check: (value: unknown) => boolean) => (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  Object.values(value).every(check);

/** A variable name or value a process can be given: no NUL, and no `=` or emptiness in a name. */
const ENV_ENTRY = ([name, value]: [string, unknown]) =>
  /^[^=\0]+$/.test(name) && typeof value === "string" && !value.includes("\0");

// `readOnly`, `toolCosts`, `headers` and `env` are checked by hand: valibot's `record` leaves out keys named
// like Object.prototype's, and a dropped `"constructor": false` would let that tool run.
const OPTIONS = {
  trusted: v.optional(v.boolean()),
  readOnly: v.optional(
    v.custom<Record<string, boolean>>(
      isRecordOf((value) => typeof value === "boolean"),
      "readOnly must map tool names to true or false",
    ),
  ),
  prefix: v.optional(v.string()),
  timeoutMs: v.optional(
    v.pipe(
      v.number(),
      v.integer("timeoutMs must be a whole number of milliseconds"),
      v.minValue(1, "timeoutMs must be at least 1"),
      v.maxValue(
        MAX_TIMEOUT_MS,
        `timeoutMs must be at most ${MAX_TIMEOUT_MS} (what a timer holds)`,
      ),
    ),
  ),
  cost: v.optional(v.custom<number>(isCost, `cost must be ${COST_RULE}`)),
  toolCosts: v.optional(
    v.custom<Record<string, number>>(
      isRecordOf(isCost),
      `toolCosts must map tool names to ${COST_RULE}`,
    ),
  ),
};

const HTTP_UPSTREAM = v.strictObject(
  {
    // Messages of their own: valibot's would quote the URL, and a query string may hold a key.
    url: v.pipe(
      v.string("url must be a string"),
      v.url("url must be an absolute URL"),
      v.regex(/^https?:/i, "url must be http or https"),
    ),
    headers: v.optional(
      v.custom<Record<string, string>>(
        isRecordOf((value) => typeof value === "string"),
        "headers must map names to strings",
      ),
    ),
    ...OPTIONS,
  },
  "an upstream with a url has only url, headers, trusted, readOnly, prefix, timeoutMs, cost and toolCosts",
);

const NO_NUL = (what: string) => v.check((value: string) => !value.includes("\0"), what);

const STDIO_UPSTREAM = v.strictObject(
  {
    command: v.pipe(
      v.string(),
      v.check((value) => value.trim() !== "", "command must name a program"),
      NO_NUL("command must not hold a NUL character"),
    ),
    args: v.optional(
      v.array(
        v.pipe(v.string("args must be strings"), NO_NUL("args must not hold a NUL character")),
        "args must be an array of strings",
      ),
    ),
    env: v.optional(
      v.custom<Record<string, string>>(
        (value) =>
          typeof value === "object" && value !== null && !Array.isArray(value) &&
          Object.entries(value).every(ENV_ENTRY),
        "env must map variable names (no '=') to strings",
      ),
    ),
    cwd: v.optional(
      v.pipe(v.string(), v.nonEmpty("cwd must name a folder"), NO_NUL("cwd must not hold NUL")),
    ),
    ...OPTIONS,
  },
  "an upstream with a command has only command, args, env, cwd, trusted, readOnly, prefix, timeoutMs, cost and toolCosts",
);

/**
 * Whether an upstream is one the gateway runs itself.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isStdio } from "@tool-boundary/mcp/gateway";
 *
 * assert.equal(isStdio({ command: "node" }), true);
 * assert.equal(isStdio({ url: "https://a.example/mcp" }), false);
 * ```
 */
export const isStdio = (upstream: Upstream): upstream is StdioUpstream => "command" in upstream;

/**
 * How {@linkcode upstreamsOf} reads `MCP_UPSTREAMS`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { upstreamsOf } from "@tool-boundary/mcp/gateway";
 *
 * assert.throws(
 *   () => upstreamsOf('[{"command":"node"}]', { noStdio: "Workers run no processes" }),
 *   /at 0\.command: Workers run no processes/,
 * );
 * ```
 */
export interface UpstreamsOptions {
  /**
   * Why this gateway cannot run a `command` (Workers have no processes), or undefined when it
   * can: an entry with a `command` is then refused with this reason.
   */
  noStdio?: string;
}

/**
 * Reads `MCP_UPSTREAMS`.
 *
 * @param text The variable's value.
 * @param options Whether `command` entries can be run here.
 * @returns The servers, in order; none when it is unset or empty.
 * @throws {TypeError} When it is not a JSON array of valid upstream objects.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { upstreamsOf } from "@tool-boundary/mcp/gateway";
 *
 * assert.deepEqual(upstreamsOf('[{"command":"node","args":["server.js"],"trusted":true}]'), [
 *   { command: "node", args: ["server.js"], trusted: true },
 * ]);
 * assert.throws(
 *   () => upstreamsOf('[{"url":"https://a.example/mcp","command":"node"}]'),
 *   /at 0: an upstream has exactly one of url and command/,
 * );
 * ```
 */
export function upstreamsOf(text: string | undefined, options: UpstreamsOptions = {}): Upstream[] {
  if (text === undefined || text.trim() === "") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON at all: the parser's own message would quote the text, headers included.
    throw new TypeError(
      "MCP_UPSTREAMS is not valid JSON: a JSON array of upstream objects is expected",
    );
  }
  const refuse = (path: string, message: string) =>
    new TypeError(`MCP_UPSTREAMS is not valid at ${path || "the top"}: ${message}`);
  if (!Array.isArray(value)) throw refuse("", "an array of upstream objects is expected");
  return value.map((entry: unknown, index) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      throw refuse(`${index}`, "an upstream object is expected");
    }
    const stdio = Object.hasOwn(entry, "command");
    if (stdio === Object.hasOwn(entry, "url")) {
      throw refuse(`${index}`, "an upstream has exactly one of url and command");
    }
    if (stdio && options.noStdio !== undefined) throw refuse(`${index}.command`, options.noStdio);
    const parsed = v.safeParse(stdio ? STDIO_UPSTREAM : HTTP_UPSTREAM, entry);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      const path = [index, ...(issue.path ?? []).map((item) => item.key)].join(".");
      throw refuse(path, issue.message);
    }
    return parsed.output as Upstream;
  });
}

const CLIENT_INFO = { name: "tool-boundary-gateway", version: "0.1.0" };

/**
 * Makes the transport of an upstream the gateway runs: `stdioTransport` of
 * `@tool-boundary/mcp/stdio`, kept out of this module so that a Workers bundle has no
 * `node:child_process`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { StdioTransportFactory } from "@tool-boundary/mcp/gateway";
 * import { stdioTransport } from "@tool-boundary/mcp/stdio";
 *
 * const stdio: StdioTransportFactory = stdioTransport;
 * assert.equal(typeof stdio({ command: "node" }).start, "function"); // started on connect
 * ```
 */
export type StdioTransportFactory = (upstream: StdioUpstream) => McpTransport;

/** An open connection to one upstream. */
interface Connection {
  client: Client;
  /** Ends it: its HTTP session, or its process. */
  close(): Promise<void>;
  /** Its process, when the transport has one. */
  pid?: number;
}

/**
 * How an upstream is named in the log: never its headers, arguments or environment, nor more of
 * its URL than the origin (a query string may carry an API key, the user part a password).
 */
const labelOf = (upstream: Upstream) =>
  isStdio(upstream) ? `${upstream.command} (stdio)` : originOf(upstream.url);

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "<url>";
  }
}

/** Anything that looks like a URL in a runtime's message: up to a space, quote or bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'()<>\[\]]*/gi;

/**
 * A failure of an HTTP upstream at the start (connecting, listing its tools), named by its label,
 * with its cause's messages and every URL in them cut to its origin: a runtime's own message
 * holds the whole URL (Deno's "error sending request for url (...)"), query string included, and
 * the entry points print it. The cause itself is left out for the same reason.
 */
function upstreamFailure(upstream: HttpUpstream, error: unknown): Error {
  const label = labelOf(upstream);
  const messages: string[] = [];
  let at: unknown = error;
  for (let depth = 0; depth < 4 && at instanceof Error; depth++, at = at.cause) {
    messages.push(at.message);
  }
  let text = messages.join(": ") || String(error);
  // The URL as given and as parsed first, whatever it holds; then any other URL.
  for (
    const url of new Set([
      upstream.url,
      URL.canParse(upstream.url) ? new URL(upstream.url).href : "",
    ])
  ) {
    if (url !== "") text = text.replaceAll(url, label);
  }
  text = text.replace(URL_IN_TEXT, originOf);
  return new Error(`${label}: ${text}`);
}

async function connect(
  upstream: Upstream,
  stdio: StdioTransportFactory | undefined,
  onclose?: () => void,
): Promise<Connection> {
  // The SDK's default validator (ajv) compiles schemas with `new Function`, which Workers refuse
  // (EvalError as soon as a listed tool has an outputSchema); this one interprets them instead.
  const client = new Client(CLIENT_INFO, { jsonSchemaValidator: VALIDATOR });
  // Set before connecting: a process that ends during the handshake is noticed too.
  if (onclose !== undefined) client.onclose = onclose;
  if (isStdio(upstream)) {
    if (stdio === undefined) {
      throw new TypeError(
        `${labelOf(upstream)}: this gateway cannot run a command; give the upstream a url`,
      );
    }
    const transport = stdio(upstream);
    await client.connect(transport);
    const { pid } = transport as { pid?: unknown };
    return { client, close: () => client.close(), ...(typeof pid === "number" ? { pid } : {}) };
  }
  const streams = eventStreams();
  const transport = new StreamableHTTPClientTransport(new URL(upstream.url), {
    requestInit: { headers: upstream.headers ?? {} },
    fetch: streams.fetch,
  });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      // End the upstream session (DELETE); a server that keeps none answers 405, which the SDK
      // takes as done.
      await transport.terminateSession().catch(() => {});
      await client.close();
      streams.cancel();
    },
  };
}

/**
 * A `fetch` for the SDK's transport that pipes every event stream it hands out (the SDK's GET
 * stream, and any POST answered with a stream) under a signal of its own, and a `cancel` that
 * aborts those pipes. The SDK ends its streams by aborting their request's signal, but Deno's
 * fetch can miss an abort that comes while a read of the body is pending: the connection then
 * stays open, and a server that keeps the stream never sees the client go (its graceful shutdown
 * waits for ever). An aborted pipe cancels the body at its source, which closes it on every
 * runtime.
 */
function eventStreams(): { fetch: typeof fetch; cancel(): void } {
  const streams = new AbortController();
  return {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const type = response.headers.get("content-type") ?? "";
      if (response.body === null || !type.startsWith("text/event-stream")) return response;
      const body = response.body.pipeThrough(new TransformStream(), { signal: streams.signal });
      return new Response(body, response);
    },
    cancel: () => streams.abort(),
  };
}

/** The SDK client's error for a result its tool's outputSchema refuses (InvalidParams). */
const invalid = (message: string) => Object.assign(new Error(message), { code: -32602 });

/** Checks upstream tool results against their `outputSchema`, for every client here. */
const VALIDATOR = new CfWorkerJsonSchemaValidator();

/** Runs a request on a connected client: one for this request, or the one that is up. */
type Use = <T>(fn: (client: Client) => Promise<T>) => Promise<T>;

/**
 * A client whose requests may each meet another SDK client (one per request, or one per
 * process of a restarted upstream). The SDK's client checks a result against its tool's
 * outputSchema only after it listed the tools itself, so the listed schemas are kept and checked
 * here, as that client would.
 */
function checkedClient(use: Use): McpClient {
  // Learned with the listing, which `mcpTools` asks for before it asks for the server's name.
  let server: ReturnType<Client["getServerVersion"]>;
  const outputChecks = new Map<string, JsonSchemaValidator<unknown>>();
  return {
    listTools: async (params, options) => {
      const listed = await use(async (client) => {
        server = client.getServerVersion();
        return await client.listTools(params, options);
      });
      for (const tool of listed.tools) {
        if (tool.outputSchema) {
          outputChecks.set(tool.name, VALIDATOR.getValidator(tool.outputSchema as JsonSchemaType));
        }
      }
      return listed;
    },
    callTool: async (params, _schema, options) => {
      const result = await use((client) => client.callTool(params, undefined, options));
      const check = outputChecks.get(params.name);
      const { isError, structuredContent } = result as {
        isError?: boolean;
        structuredContent?: unknown;
      };
      if (check !== undefined && !isError) {
        if (structuredContent === undefined) {
          throw invalid(
            `Tool ${params.name} has an output schema but did not return structured content`,
          );
        }
        const verdict = check(structuredContent);
        if (!verdict.valid) {
          throw invalid(
            `Structured content does not match the tool's output schema: ${verdict.errorMessage}`,
          );
        }
      }
      return result;
    },
    getServerVersion: () => server,
  };
}

/**
 * A client that connects for each request and closes after it: nothing lives between requests,
 * as on Workers, where one request may not use another's connections.
 */
function perRequestClient(upstream: HttpUpstream): McpClient {
  return checkedClient(async (fn) => {
    const { client, close } = await connect(upstream, undefined);
    try {
      return await fn(client);
    } finally {
      // Every call would otherwise leave an upstream session open.
      await close();
    }
  });
}

/** A process that lived this long started well: its next restart waits for nothing. */
const STABLE_MS = 10_000;
/** The longest wait before restarting an upstream that keeps failing. */
const MAX_RESTART_DELAY_MS = 30_000;

/**
 * How long after its `failures`-th failure in a row an upstream is started again: the first
 * restart is at once, then 250 ms, doubling up to 30 s, so a process that cannot start or keeps
 * dying is not started over and over.
 */
const restartDelay = (failures: number) =>
  failures <= 1 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 250 * 2 ** (failures - 2));

/**
 * A client for an upstream process: started once, and started again by the first request after
 * it ended (a call in flight then fails: the SDK rejects it as the connection closed, and the
 * record ends EXECUTION_FAILED). Nothing restarts it without a request, so a dead upstream costs
 * nothing until it is used; one that fails again soon after starting waits longer each time, and
 * until then its calls fail at once. The tools are those it listed when the gateway started.
 */
function restartingClient(
  upstream: StdioUpstream,
  stdio: StdioTransportFactory | undefined,
  log: (line: string) => void,
): { client: McpClient; close(): Promise<void> } {
  const label = labelOf(upstream);
  let live: Promise<Connection> | undefined;
  let closed = false;
  let failures = 0;
  let notBefore = 0;
  const failed = () => {
    failures++;
    notBefore = Date.now() + restartDelay(failures);
  };
  const open = (): Promise<Connection> => {
    const wait = notBefore - Date.now();
    if (wait > 0) {
      return Promise.reject(
        new Error(`${label} failed ${failures} times in a row; it is started again in ${wait} ms`),
      );
    }
    const startedAt = Date.now();
    let up = false;
    const attempt: Promise<Connection> = connect(upstream, stdio, () => {
      // Only the process that is up counts: not one we closed, nor a handshake that failed.
      if (!up || live !== attempt) return;
      live = undefined;
      if (Date.now() - startedAt < STABLE_MS) failed();
      else failures = 0;
      log(`MCP upstream ${label} ended; the next call starts it again`);
    }).then(
      (connection) => {
        up = true;
        log(`MCP upstream ${label} started (pid ${connection.pid ?? "unknown"})`);
        return connection;
      },
      (error) => {
        if (live === attempt) live = undefined;
        failed();
        throw error;
      },
    );
    live = attempt;
    return attempt;
  };
  const use: Use = async (fn) => {
    if (closed) throw new Error(`${label}: the gateway is closed`);
    const { client } = await (live ?? open());
    return await fn(client);
  };
  return {
    client: checkedClient(use),
    close: async () => {
      closed = true;
      const current = live;
      live = undefined;
      await current?.then((connection) => connection.close(), () => {});
    },
  };
}

/**
 * The gateway's tools and how to let go of its connections.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectGateway, type Gateway } from "@tool-boundary/mcp/gateway";
 *
 * const gateway: Gateway = await connectGateway([]);
 * assert.deepEqual([gateway.tools, gateway.summary], [[], []]);
 * await gateway.close();
 * ```
 */
export interface Gateway {
  /** Every upstream's tools, in the order of `MCP_UPSTREAMS`. */
  tools: GatewayTool[];
  /** One line per upstream, for the startup log: its URL or command, and its tool names. */
  summary: string[];
  /** Closes the connections and stops the upstream processes. */
  close(): Promise<void>;
}

/**
 * How {@linkcode connectGateway} reaches the upstreams.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectGateway, type GatewayOptions } from "@tool-boundary/mcp/gateway";
 *
 * // Without `stdio`, an upstream with a command is refused before anything is started.
 * const options: GatewayOptions = { log: () => {} };
 * await assert.rejects(
 *   connectGateway([{ command: "node" }], options),
 *   /node \(stdio\): this gateway cannot run a command/,
 * );
 * ```
 */
export interface GatewayOptions {
  /** Connect to `url` upstreams for each request instead of once (Workers). @default false */
  perRequest?: boolean;
  /**
   * Runs `command` upstreams (`stdioTransport` of `@tool-boundary/mcp/stdio`); without it they
   * are refused.
   */
  stdio?: StdioTransportFactory;
  /** Where each start and end of an upstream process is told. @default console.log */
  log?: (line: string) => void;
}

/**
 * Connects to every upstream (starting those with a `command`) and wraps its tools.
 *
 * @param upstreams From {@linkcode upstreamsOf}.
 * @param options Per request or not, and how to run a `command`.
 * @returns The tools; the app fails to start (a duplicate name) when two servers share one.
 * @throws When an upstream cannot be reached or started, an Error whose message starts with its
 *   origin or command (`https://mcp.example.com: ...`); those already up are closed first. For a
 *   `url` upstream the message holds its failure's messages with every URL cut to its origin, and
 *   there is no `cause` (a runtime's own error holds the whole URL, query string and all); for a
 *   `command` the `cause` is the failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectGateway, upstreamsOf } from "@tool-boundary/mcp/gateway";
 * import { stdioTransport } from "@tool-boundary/mcp/stdio";
 *
 * // In use: upstreamsOf(Deno.env.get("MCP_UPSTREAMS")); with none there is nothing to reach.
 * const gateway = await connectGateway(upstreamsOf(""), { stdio: stdioTransport });
 * assert.deepEqual(gateway.tools, []);
 * await gateway.close();
 * ```
 */
export async function connectGateway(
  upstreams: readonly Upstream[],
  options: GatewayOptions = {},
): Promise<Gateway> {
  const { perRequest = false, stdio, log = console.log } = options;
  const open: { close(): Promise<void> }[] = [];
  const closeAll = () => Promise.allSettled(open.map((connection) => connection.close()));
  const tools: GatewayTool[] = [];
  const summary: string[] = [];
  let current: Upstream | undefined;
  try {
    for (const upstream of upstreams) {
      current = upstream;
      let client: McpClient;
      if (isStdio(upstream)) {
        const restarting = restartingClient(upstream, stdio, log);
        open.push(restarting);
        client = restarting.client;
      } else if (perRequest) {
        client = perRequestClient(upstream);
      } else {
        let connected;
        try {
          connected = await connect(upstream, stdio);
        } catch (error) {
          throw upstreamFailure(upstream, error);
        }
        open.push(connected);
        client = connected.client;
      }
      let wrapped;
      try {
        wrapped = await mcpTools(client, {
          ...(upstream.trusted === undefined ? {} : { trusted: upstream.trusted }),
          ...(upstream.readOnly === undefined ? {} : { readOnly: upstream.readOnly }),
          ...(upstream.prefix === undefined ? {} : { prefix: upstream.prefix }),
          ...(upstream.timeoutMs === undefined ? {} : { timeoutMs: upstream.timeoutMs }),
          ...(upstream.cost === undefined ? {} : { cost: upstream.cost }),
          ...(upstream.toolCosts === undefined ? {} : { toolCosts: upstream.toolCosts }),
        });
      } catch (error) {
        throw isStdio(upstream) ? error : upstreamFailure(upstream, error);
      }
      tools.push(...wrapped);
      const names = wrapped.map((tool) =>
        `${tool.name}${
          !tool.readOnly
            ? " (refused)"
            : typeof tool.cost === "number"
            ? ` (cost ${tool.cost})`
            : ""
        }`
      );
      summary.push(`${labelOf(upstream)}: ${names.join(", ") || "no tools"}`);
    }
  } catch (error) {
    await closeAll();
    // Name the upstream that failed (its origin or command, never its headers or query).
    const label = current === undefined ? "" : labelOf(current);
    const message = error instanceof Error ? error.message : String(error);
    if (label === "" || message.startsWith(`${label}:`)) throw error;
    throw new Error(`${label}: ${message}`, { cause: error });
  }
  return {
    tools,
    summary,
    close: async () => {
      await closeAll();
    },
  };
}
