/**
 * The MCP gateway's configuration and upstream connections: the tools of upstream MCP servers,
 * reached over Streamable HTTP with the official SDK's client, as tool definitions for the app
 * (through `mcpTools` of `@tool-boundary/mcp`). Every entry point serves them the same way as its
 * own tools: through `POST /v1/runs/{runId}/mcp` and the tool-call route, one record per call.
 *
 * `MCP_UPSTREAMS` is a JSON array, one object per server:
 *
 * ```json
 * [{ "url": "https://mcp.example.com/mcp", "trusted": true, "readOnly": { "get-env": false },
 *    "prefix": "docs_", "headers": { "authorization": "Bearer ..." }, "timeoutMs": 30000 }]
 * ```
 *
 * Only `url` is required; the rest are the options of `mcpTools` (`trusted` defaults to false:
 * nothing runs unless `readOnly` names it) plus the HTTP headers sent upstream.
 *
 * @module
 */
import * as v from "valibot";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { JsonSchemaType, JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import type { AnyToolDefinition } from "../src/mod.ts";
import { type McpClient, mcpTools } from "../packages/mcp/mod.ts";

/** One upstream server of `MCP_UPSTREAMS`. */
export interface Upstream {
  /** Its Streamable HTTP endpoint. */
  url: string;
  /** Believe its `readOnlyHint`. @default false */
  trusted?: boolean;
  /** Read-only by upstream tool name, either way. */
  readOnly?: Record<string, boolean>;
  /** Put before its tool names. */
  prefix?: string;
  /** HTTP headers sent with every request to it (e.g. its credentials). */
  headers?: Record<string, string>;
  /** Milliseconds a call may take. */
  timeoutMs?: number;
}

const isRecordOf = (check: (value: unknown) => boolean) => (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  Object.values(value).every(check);

// `readOnly` and `headers` are checked by hand: valibot's `record` leaves out keys named like
// Object.prototype's, and a dropped `"constructor": false` would let that tool run.
const UPSTREAM = v.strictObject({
  url: v.pipe(v.string(), v.url(), v.regex(/^https?:/i, "url must be http or https")),
  trusted: v.optional(v.boolean()),
  readOnly: v.optional(
    v.custom<Record<string, boolean>>(
      isRecordOf((value) => typeof value === "boolean"),
      "readOnly must map tool names to true or false",
    ),
  ),
  prefix: v.optional(v.string()),
  headers: v.optional(
    v.custom<Record<string, string>>(
      isRecordOf((value) => typeof value === "string"),
      "headers must map names to strings",
    ),
  ),
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

/**
 * Reads `MCP_UPSTREAMS`.
 *
 * @param text The variable's value.
 * @returns The servers, in order; none when it is unset or empty.
 * @throws {TypeError} When it is not a JSON array of valid upstream objects.
 */
export function upstreamsOf(text: string | undefined): Upstream[] {
  if (text === undefined || text.trim() === "") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TypeError("MCP_UPSTREAMS must be a JSON array");
  }
  const parsed = v.safeParse(v.array(UPSTREAM), value);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((item) => String(item.key)).join(".") ?? "";
    throw new TypeError(`MCP_UPSTREAMS is not valid at ${path || "the top"}: ${issue.message}`);
  }
  return parsed.output as Upstream[];
}

const CLIENT_INFO = { name: "tool-boundary-gateway", version: "0.1.0" };

async function connect(
  upstream: Upstream,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  // The SDK's default validator (ajv) compiles schemas with `new Function`, which Workers refuse
  // (EvalError as soon as a listed tool has an outputSchema); this one interprets them instead.
  const client = new Client(CLIENT_INFO, { jsonSchemaValidator: VALIDATOR });
  const transport = new StreamableHTTPClientTransport(new URL(upstream.url), {
    requestInit: { headers: upstream.headers ?? {} },
  });
  await client.connect(transport);
  return { client, transport };
}

/** The SDK client's error for a result its tool's outputSchema refuses (InvalidParams). */
const invalid = (message: string) => Object.assign(new Error(message), { code: -32602 });

/** Checks upstream tool results against their `outputSchema`, for every client here. */
const VALIDATOR = new CfWorkerJsonSchemaValidator();

/**
 * A client that connects for each request and closes after it: nothing lives between requests,
 * as on Workers, where one request may not use another's connections.
 */
function perRequestClient(upstream: Upstream): McpClient {
  const once = async <T>(fn: (client: Client) => Promise<T>): Promise<T> => {
    const { client, transport } = await connect(upstream);
    try {
      return await fn(client);
    } finally {
      // End the upstream session (DELETE), or every call would leave one open there; a server
      // that keeps none answers 405, which the SDK takes as done.
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  };
  // Learned with the listing, which `mcpTools` asks for before it asks for the server's name.
  let server: ReturnType<Client["getServerVersion"]>;
  // The SDK's client checks a result against its tool's outputSchema only after it listed the
  // tools itself; each call here has a fresh client, so the listed schemas are kept and checked
  // here, as that client would.
  const outputChecks = new Map<string, JsonSchemaValidator<unknown>>();
  return {
    listTools: async (params, options) => {
      const listed = await once(async (client) => {
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
      const result = await once((client) => client.callTool(params, undefined, options));
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

/** The gateway's tools and how to let go of its connections. */
export interface Gateway {
  /** Every upstream's tools, in the order of `MCP_UPSTREAMS`. */
  tools: AnyToolDefinition[];
  /** One line per upstream, for the startup log: its URL and tool names. */
  summary: string[];
  /** Closes the connections. */
  close(): Promise<void>;
}

/**
 * Connects to every upstream and wraps its tools.
 *
 * @param upstreams From {@linkcode upstreamsOf}.
 * @param perRequest Connect for each request instead of once (Workers). @default false
 * @returns The tools; the app fails to start (a duplicate name) when two servers share one.
 */
export async function connectGateway(
  upstreams: readonly Upstream[],
  perRequest = false,
): Promise<Gateway> {
  const open: Awaited<ReturnType<typeof connect>>[] = [];
  const closeAll = () =>
    Promise.allSettled(open.map(async ({ client, transport }) => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }));
  const tools: AnyToolDefinition[] = [];
  const summary: string[] = [];
  try {
    for (const upstream of upstreams) {
      let client: McpClient;
      if (perRequest) {
        client = perRequestClient(upstream);
      } else {
        const connected = await connect(upstream);
        open.push(connected);
        client = connected.client;
      }
      const wrapped = await mcpTools(client, {
        ...(upstream.trusted === undefined ? {} : { trusted: upstream.trusted }),
        ...(upstream.readOnly === undefined ? {} : { readOnly: upstream.readOnly }),
        ...(upstream.prefix === undefined ? {} : { prefix: upstream.prefix }),
        ...(upstream.timeoutMs === undefined ? {} : { timeoutMs: upstream.timeoutMs }),
      });
      tools.push(...wrapped);
      const names = wrapped.map((tool) => `${tool.name}${tool.readOnly ? "" : " (refused)"}`);
      summary.push(`${new URL(upstream.url).origin}: ${names.join(", ") || "no tools"}`);
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  return {
    tools,
    summary,
    close: async () => {
      await closeAll();
    },
  };
}
