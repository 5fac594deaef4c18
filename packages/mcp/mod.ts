/**
 * An MCP gateway for tool-boundary: the tools of an upstream MCP server as tool definitions of a
 * `ToolBoundary`, so that every call to them is preflighted, bounded and recorded like any other.
 *
 * The MCP spec says a client must treat tool annotations as untrusted unless the server is
 * trusted, so a tool counts as read-only only when `trusted` is set and the server says
 * `readOnlyHint: true`, or when `readOnly` names it; every other tool is refused NOT_READ_ONLY
 * by the boundary, before anything reaches the upstream server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { type McpClient, mcpTools } from "@tool-boundary/mcp";
 *
 * // Any MCP client with listTools and callTool: the official SDK's `Client`, once connected.
 * const sent: unknown[] = [];
 * const client: McpClient = {
 *   listTools: () =>
 *     Promise.resolve({
 *       tools: [
 *         { name: "search", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
 *         { name: "delete", inputSchema: { type: "object" } },
 *       ],
 *     }),
 *   callTool: (params) => {
 *     sent.push(params);
 *     return Promise.resolve({ content: [{ type: "text", text: "2 hits" }] });
 *   },
 * };
 * const boundary = new ToolBoundary({ tools: await mcpTools(client, { trusted: true }) });
 * const run = await boundary.startRun({ ttlMs: 60_000 });
 * const envelope = { runId: run.runId, input: {} };
 * const found = await boundary.invoke(run, { ...envelope, toolCallId: "c1", toolName: "search" });
 * assert.deepEqual(found.status === "READY" && found.content, ["2 hits"]);
 * const refused = await boundary.invoke(run, { ...envelope, toolCallId: "c2", toolName: "delete" });
 * assert.equal(refused.status === "ERROR" && refused.code, "NOT_READ_ONLY");
 * assert.deepEqual(sent, [
 *   { name: "search", arguments: {}, _meta: { "io.tool-boundary/toolCallId": "c1" } },
 * ]);
 * ```
 *
 * @module
 */
import * as v from "valibot";
import {
  defineTool,
  type JsonObject,
  type ProjectContext,
  type ProjectorOutput,
  TOOL_CALL_ID_META,
  type ToolDefinition,
  toolError,
} from "@tool-boundary/core";

/** A tool as an MCP server lists it (`tools/list`); only these fields are read. */
export interface McpToolInfo {
  /** The tool's name on the server. */
  name: string;
  /** Its description. */
  description?: string | undefined;
  /** JSON Schema of its arguments. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of its `structuredContent`, when it declares one. */
  outputSchema?: Record<string, unknown> | undefined;
  /** Hints; `readOnlyHint` counts only for a trusted server. */
  annotations?: { readOnlyHint?: boolean | undefined } | undefined;
}

/** What a request to the upstream server may be given. */
export interface McpRequestOptions {
  /** Aborts the request (the SDK then sends `notifications/cancelled`). */
  signal?: AbortSignal;
  /** Milliseconds before the client gives up. */
  timeout?: number;
}

/**
 * The part of an MCP client the gateway uses. The official SDK's `Client`
 * (`@modelcontextprotocol/sdk/client`, 1.x) fits as it is, once connected.
 */
export interface McpClient {
  /** One page of `tools/list`. */
  listTools(
    params?: { cursor?: string },
    options?: McpRequestOptions,
  ): Promise<{ tools: McpToolInfo[]; nextCursor?: string | undefined }>;
  /** `tools/call`; the result is read as JSON, whatever its declared type. */
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<unknown>;
  /** The server's `serverInfo`, used in the default scope. */
  getServerVersion?(): { name: string; version?: string | undefined } | undefined;
}

/** What a gateway projector receives besides the raw result. */
export interface McpProjectContext extends ProjectContext {
  /** The upstream tool as the server listed it. */
  tool: Readonly<McpToolInfo>;
  /** The upstream server's name (`serverInfo.name`), or `"MCP server"` when it gave none. */
  server: string;
}

/**
 * Projects an upstream result: the `CallToolResult` as the server sent it, or its
 * `structuredContent` when the tool declares an `outputSchema`.
 */
export type McpProjector = (
  raw: JsonObject,
  ctx: McpProjectContext,
) => ProjectorOutput | Promise<ProjectorOutput>;

/** How upstream tools become tool definitions. */
export interface McpToolsOptions {
  /**
   * Whether the server's `readOnlyHint: true` is believed. Without it no tool is read-only unless
   * `readOnly` says so. @default false
   */
  trusted?: boolean;
  /**
   * Read-only by name (the upstream name), overriding the server's hint in either direction:
   * `true` lets a tool run whatever the server says, `false` refuses it even when trusted. Every
   * name must be a tool the server lists.
   */
  readOnly?: Readonly<Record<string, boolean>>;
  /**
   * The projector: one for all tools, or one per upstream name (the others get
   * {@linkcode defaultProjector}). @default defaultProjector
   */
  project?: McpProjector | Readonly<Record<string, McpProjector>>;
  /** Put before each upstream name, to keep the tools of several servers apart. @default "" */
  prefix?: string;
  /** Milliseconds each call may take (the tool's `timeoutMs`). @default 30000 */
  timeoutMs?: number;
}

/** Pages of `tools/list` read at most: a server that keeps answering a cursor is refused. */
const MAX_PAGES = 100;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The tools of an upstream MCP server as tool definitions, under the trust policy of `options`.
 *
 * Each call goes upstream as `tools/call` with the boundary's tool call ID in
 * `_meta["io.tool-boundary/toolCallId"]` and the call's signal. The upstream result is the raw
 * response the record keeps. An `isError` result, or a JSON-RPC error the client reports (an
 * error with a numeric `code`), becomes `toolError(raw)`: the record ends ERROR EXECUTION_FAILED
 * with it, the projector is not called, and the agent sees only the code. Arguments are checked
 * by the upstream server against its own schema (a failure comes back as an `isError` result);
 * the listed `inputSchema` is the server's, unchanged.
 *
 * @param client A connected MCP client.
 * @param options Trust policy, overrides, projectors, name prefix, time limit.
 * @returns One definition per upstream tool, in the server's order.
 * @throws {TypeError} When `readOnly` or a projector record names a tool the server does not
 *   list, a `readOnly` value is not a boolean, the server lists a name twice or one that is not
 *   well-formed Unicode, or `tools/list` does not end within 100 pages.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type McpClient, mcpTools } from "@tool-boundary/mcp";
 *
 * const client: McpClient = {
 *   listTools: () =>
 *     Promise.resolve({
 *       tools: [
 *         { name: "get_env", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
 *         { name: "echo", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
 *         { name: "add_note", inputSchema: { type: "object" } },
 *       ],
 *     }),
 *   callTool: () => Promise.resolve({ content: [] }),
 * };
 * // Trusted, but get_env's hint is not believed, and add_note may run although it has none.
 * const tools = await mcpTools(client, {
 *   trusted: true,
 *   readOnly: { get_env: false, add_note: true },
 *   prefix: "notes_",
 * });
 * assert.deepEqual(tools.map((tool) => [tool.name, tool.readOnly]), [
 *   ["notes_get_env", false],
 *   ["notes_echo", true],
 *   ["notes_add_note", true],
 * ]);
 * ```
 */
export async function mcpTools(
  client: McpClient,
  options: McpToolsOptions = {},
): Promise<ToolDefinition<JsonObject, JsonObject>[]> {
  // Every option is read once, before the server is asked: what is listed is what was asked for.
  const { trusted, readOnly, project, prefix = "", timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  if (typeof prefix !== "string") {
    throw new TypeError("Cannot wrap MCP tools: prefix must be a string");
  }
  const vetoes = new Map(Object.entries(readOnly ?? {}));
  for (const [name, value] of vetoes) {
    if (typeof value !== "boolean") {
      throw new TypeError(`Cannot wrap MCP tools: readOnly["${name}"] must be a boolean`);
    }
  }
  const projectors = typeof project === "function" ? null : new Map(Object.entries(project ?? {}));
  for (const [name, value] of projectors ?? []) {
    if (typeof value !== "function") {
      throw new TypeError(`Cannot wrap MCP tools: project["${name}"] must be a function`);
    }
  }
  const listed = await listAll(client);
  const names = new Set(listed.map((tool) => tool.name));
  for (const [option, entries] of [["readOnly", vetoes], ["project", projectors]] as const) {
    for (const name of entries?.keys() ?? []) {
      if (!names.has(name)) {
        throw new TypeError(`Cannot wrap MCP tools: ${option} names "${name}", not a listed tool`);
      }
    }
  }
  const server = client.getServerVersion?.()?.name;
  const serverName = typeof server === "string" && server !== "" ? server : "MCP server";
  return listed.map((tool) =>
    wrap(client, tool, {
      readOnly: (vetoes.get(tool.name) as boolean | undefined) ??
        (trusted === true && tool.annotations?.readOnlyHint === true),
      name: `${prefix}${tool.name}`,
      project: typeof project === "function"
        ? project
        : (projectors?.get(tool.name) as McpProjector | undefined) ?? defaultProjector,
      server: serverName,
      timeoutMs,
    })
  );
}

/** Every page of `tools/list`, each tool read once into a plain copy. */
async function listAll(client: McpClient): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.listTools(cursor === undefined ? undefined : { cursor });
    for (const tool of answer.tools) {
      // The SDK's objects came from JSON; a copy keeps later changes to them out of the tools.
      const copy = JSON.parse(JSON.stringify(tool)) as McpToolInfo;
      if (seen.has(copy.name)) {
        throw new TypeError(`Cannot wrap MCP tools: the server lists "${copy.name}" twice`);
      }
      seen.add(copy.name);
      tools.push(copy);
    }
    if (answer.nextCursor === undefined) return tools;
    cursor = answer.nextCursor;
  }
  throw new TypeError(`Cannot wrap MCP tools: tools/list did not end within ${MAX_PAGES} pages`);
}

/** The upstream arguments' JSON Schema, listed as it is; any JSON object is passed on. */
function inputOf(tool: McpToolInfo) {
  const schema = typeof tool.inputSchema === "object" && tool.inputSchema !== null
    ? tool.inputSchema
    : { type: "object" };
  // valibot's metadata is merged into the JSON Schema of `describeTools`, key for key.
  return v.pipe(
    v.custom<JsonObject>((value) => typeof value === "object" && value !== null),
    v.metadata(schema),
  );
}

function wrap(
  client: McpClient,
  tool: McpToolInfo,
  how: {
    readOnly: boolean;
    name: string;
    project: McpProjector;
    server: string;
    timeoutMs: number;
  },
): ToolDefinition<JsonObject, JsonObject> {
  const structured = tool.outputSchema !== undefined;
  const frozen = Object.freeze(tool);
  return defineTool<JsonObject, JsonObject>({
    name: how.name,
    ...(typeof tool.description === "string" ? { description: tool.description } : {}),
    readOnly: how.readOnly,
    input: inputOf(tool),
    timeoutMs: how.timeoutMs,
    execute: async (input, ctx) => {
      let result: unknown;
      try {
        result = await client.callTool(
          { name: tool.name, arguments: input, _meta: { [TOOL_CALL_ID_META]: ctx.toolCallId } },
          undefined,
          // A little past the boundary's own stop, so the boundary names the timeout.
          { signal: ctx.signal, timeout: how.timeoutMs + 1_000 },
        );
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        // A JSON-RPC error (or an HTTP status) is what the server answered: kept as the raw.
        const code = (error as { code?: unknown })?.code;
        if (typeof code === "number") {
          return toolError({ error: { code, message: String((error as Error).message) } });
        }
        throw error;
      }
      if (typeof result !== "object" || result === null || Array.isArray(result)) {
        return toolError({ error: { message: "tools/call gave no result object" }, result });
      }
      const answer = result as Record<string, unknown>;
      if (answer.isError === true) return toolError(answer);
      return answer as JsonObject;
    },
    project: (raw, ctx) => {
      const context: McpProjectContext = { ...ctx, tool: frozen, server: how.server };
      if (!structured) return how.project(raw, context);
      const content = raw.structuredContent;
      if (typeof content !== "object" || content === null || Array.isArray(content)) {
        // The SDK's client refuses such a result before this; another client may not.
        throw new TypeError(`${tool.name} declares an outputSchema but sent no structuredContent`);
      }
      return how.project(content as JsonObject, context);
    },
  });
}

/**
 * The projector used unless `options.project` names one: the upstream result for the model,
 * without binary data.
 *
 * - With an `outputSchema`: `content` is the `structuredContent`.
 * - Otherwise `content` is the result's content list, each item made plain: a text item is its
 *   text; an image or audio item is `{ type, mimeType }` (its data is left out); a resource link
 *   is `{ type, uri, name }`; an embedded resource is `{ type, uri, mimeType, text }` (a blob is
 *   left out).
 * - `evidence` is NO_EVIDENCE when there is nothing (no items, or empty text only, or an empty
 *   structured object), EVIDENCE_FOUND otherwise; `scope` names the tool and the server.
 *
 * A result past the boundary's agent-result limit fails closed (RESULT_TOO_LARGE); a projector
 * of your own can shorten it instead.
 *
 * @param raw The upstream result, or its structured content.
 * @param ctx Which tool of which server.
 * @returns The bounded result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultProjector } from "@tool-boundary/mcp";
 *
 * const ctx = { tool: { name: "get_tiny_image", inputSchema: {} }, server: "everything" };
 * const raw = {
 *   content: [
 *     { type: "text", text: "Here is an image:" },
 *     { type: "image", mimeType: "image/png", data: "iVBORw0KGgo..." },
 *   ],
 * };
 * assert.deepEqual(defaultProjector(raw, ctx), {
 *   evidence: "EVIDENCE_FOUND",
 *   scope: 'tool "get_tiny_image" of MCP server "everything"',
 *   content: ["Here is an image:", { type: "image", mimeType: "image/png" }],
 * });
 * ```
 */
export function defaultProjector(
  raw: JsonObject,
  ctx: Pick<McpProjectContext, "tool" | "server">,
): ProjectorOutput {
  const scope = `tool "${ctx.tool.name}" of MCP server "${ctx.server}"`;
  if (ctx.tool.outputSchema !== undefined) {
    const empty = Object.keys(raw).length === 0;
    return { evidence: empty ? "NO_EVIDENCE" : "EVIDENCE_FOUND", scope, content: raw };
  }
  const items = Array.isArray(raw.content) ? raw.content : [];
  const content = items.map(plainItem);
  const empty = content.every((item) => item === "");
  return { evidence: empty ? "NO_EVIDENCE" : "EVIDENCE_FOUND", scope, content };
}

/** One content item for the model: its text, or what it is without its bytes. */
function plainItem(item: unknown): unknown {
  if (typeof item !== "object" || item === null) return item;
  const { type, text, mimeType, uri, name, resource } = item as Record<string, unknown>;
  switch (type) {
    case "text":
      return typeof text === "string" ? text : "";
    case "image":
    case "audio":
      return strings({ type, mimeType });
    case "resource_link":
      return strings({ type, uri, name });
    case "resource": {
      const embedded = typeof resource === "object" && resource !== null
        ? resource as Record<string, unknown>
        : {};
      return strings({ type, uri: embedded.uri, mimeType: embedded.mimeType, text: embedded.text });
    }
    default:
      return strings({ type });
  }
}

/** The fields that are strings: a server may leave any of them out. */
function strings(fields: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields).filter((entry): entry is [string, string] =>
      typeof entry[1] === "string"
    ),
  );
}
