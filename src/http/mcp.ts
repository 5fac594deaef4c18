/**
 * `POST /v1/runs/{runId}/mcp`: the boundary of one run as an MCP server. The small part of MCP it
 * needs is spoken here, with no SDK, so the core stays Web APIs + Hono + valibot and runs on
 * Workers: Streamable HTTP, stateless, JSON responses only (no SSE), revisions 2025-11-25,
 * 2025-06-18 and 2025-03-26; methods `initialize`, `ping`, `tools/list`, `tools/call`, and
 * notifications (202, ignored). See docs/mcp.md.
 *
 * Session IDs are signed, not stored: `<random>.<HMAC(secret, runId, random)>`, valid only on the
 * run they were issued for. They only keep two clients' JSON-RPC ids apart (a call without
 * `_meta` ID gets `<session>:<JSON-RPC id>`); the bearer token is still checked on every request.
 *
 * @module
 */
import type { Context } from "hono";
import { TOOL_CALL_ID_META } from "../core/ids.ts";
import type { ToolBoundary } from "../core/boundary.ts";
import type { BoundaryResult } from "../core/types.ts";
import type { AppEnv } from "./auth.ts";
import { newSessionId, type Signer, verifySessionId } from "./run_token.ts";
import type { RunCache } from "./run_cache.ts";
import { callError } from "./status.ts";

/** The MCP revisions served, newest first; `initialize` falls back to the first. */
export const MCP_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;

export { TOOL_CALL_ID_META };

// The revision a request without MCP-Protocol-Version is taken to speak (the spec's rule), and
// the only one of those served with JSON-RPC batches (2025-06-18 removed them).
const DEFAULT_VERSION = "2025-03-26";

/** One tool as `tools/list` gives it. */
export interface McpTool {
  /** The tool's name. */
  name: string;
  /** Its description, when it has one. */
  description?: string;
  /** JSON Schema of its input. */
  inputSchema: Record<string, unknown>;
  /** Always read-only: only read-only tools are listed. */
  annotations: { readOnlyHint: true };
}

/** What the route works with, made once per app. */
export interface McpServer {
  /** Signs and checks session IDs. */
  signer: Signer;
  /** Largest request body, in bytes. */
  maxBytes: number;
  /** `serverInfo` of `initialize`. */
  serverInfo: { name: string; version: string };
  /** The body of `tools/list`. */
  tools: McpTool[];
}

/**
 * The MCP server of an app.
 *
 * @param boundary The boundary served.
 * @param signer The app's signer.
 * @param maxBytes Largest request body (the tool-call body limit).
 * @param info The app's title and version.
 */
export function mcpServer(
  boundary: ToolBoundary,
  signer: Signer,
  maxBytes: number,
  info: { title: string; version: string },
): McpServer {
  return {
    signer,
    maxBytes,
    serverInfo: { name: info.title, version: info.version },
    tools: boundary.describeTools().filter((tool) => tool.readOnly).map((tool) => ({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: tool.inputSchema,
      annotations: { readOnlyHint: true },
    })),
  };
}

type RpcId = string | number;
type RpcReply =
  | { jsonrpc: "2.0"; id: RpcId; result: Record<string, unknown> }
  | { jsonrpc: "2.0"; id: RpcId | null; error: { code: number; message: string } };

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
// The code the SDK's own server uses for an unknown session (with HTTP 404).
const SESSION_NOT_FOUND = -32001;

const rpcError = (id: RpcId | null, code: number, message: string): RpcReply => ({
  jsonrpc: "2.0",
  id,
  error: { code, message },
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What one request is served with. */
interface Exchange {
  c: Context<AppEnv>;
  mcp: McpServer;
  boundary: ToolBoundary;
  runs: RunCache;
  runId: string;
  /** The verified session of the request, if it sent one. */
  session: string | null;
  /** The session issued by an `initialize` in this request. */
  issued: string | null;
}

/**
 * Answers one HTTP request of the MCP route (after the bearer token and the run ID were checked).
 *
 * @param c The request's context.
 * @param mcp The app's MCP server.
 * @param boundary The boundary.
 * @param runs The app's run contexts.
 * @returns A JSON-RPC response (or batch of them), or 202 for notifications and responses.
 */
export async function serveMcp(
  c: Context<AppEnv>,
  mcp: McpServer,
  boundary: ToolBoundary,
  runs: RunCache,
): Promise<Response> {
  const reply = (body: RpcReply | RpcReply[], status: 200 | 400 | 404 | 406 | 413 | 415) =>
    c.json(body, status);
  const accept = c.req.header("accept");
  if (accept !== undefined && !/(^|,)\s*(application\/(json|\*)|\*\/\*)\s*(;|,|$)/i.test(accept)) {
    return reply(rpcError(null, INVALID_REQUEST, "Accept must allow application/json."), 406);
  }
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "application/json") {
    return reply(rpcError(null, INVALID_REQUEST, "Content-Type must be application/json."), 415);
  }
  const version = c.req.header("mcp-protocol-version");
  if (version !== undefined && !(MCP_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
    return reply(rpcError(null, INVALID_REQUEST, "Unsupported MCP-Protocol-Version."), 400);
  }
  const runId = c.req.param("runId")!;
  const session = c.req.header("mcp-session-id") ?? null;
  if (session !== null && !await verifySessionId(mcp.signer, session, runId)) {
    // 404 tells the client to start a new session (initialize without a session ID).
    return reply(rpcError(null, SESSION_NOT_FOUND, "Session not found."), 404);
  }
  const text = await readLimited(c.req.raw, mcp.maxBytes);
  if (text === null) return reply(rpcError(null, INVALID_REQUEST, "Request too large."), 413);
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return reply(rpcError(null, PARSE_ERROR, "Parse error."), 400);
  }
  const exchange: Exchange = { c, mcp, boundary, runs, runId, session, issued: null };
  if (Array.isArray(message)) {
    if ((version ?? DEFAULT_VERSION) !== DEFAULT_VERSION) {
      return reply(rpcError(null, INVALID_REQUEST, "Batches are not part of this revision."), 400);
    }
    if (message.length === 0) return reply(rpcError(null, INVALID_REQUEST, "Empty batch."), 400);
    const replies: RpcReply[] = [];
    for (const item of message) {
      const answer = await answer1(exchange, item, true);
      if (answer !== null) replies.push(answer);
    }
    return replies.length === 0 ? c.body(null, 202) : reply(replies, 200);
  }
  const answer = await answer1(exchange, message, false);
  if (answer === null) return c.body(null, 202);
  if (exchange.issued !== null) c.header("Mcp-Session-Id", exchange.issued);
  const malformed = "error" in answer &&
    (answer.error.code === INVALID_REQUEST || answer.error.code === PARSE_ERROR);
  return reply(answer, malformed ? 400 : 200);
}

/** The reply to one message; `null` for a notification or a client's response. */
async function answer1(
  x: Exchange,
  message: unknown,
  inBatch: boolean,
): Promise<RpcReply | null> {
  if (!isObject(message)) return rpcError(null, INVALID_REQUEST, "Invalid request.");
  const { id, method, params } = message;
  const validId = typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
  if (message.jsonrpc !== "2.0") {
    return rpcError(validId ? id : null, INVALID_REQUEST, "Invalid request.");
  }
  if (typeof method !== "string") {
    // A response to a server request (there are none) is accepted and dropped.
    const isResponse = validId && ("result" in message || "error" in message);
    return isResponse ? null : rpcError(validId ? id : null, INVALID_REQUEST, "Invalid request.");
  }
  if (!("id" in message)) return null; // a notification
  if (!validId) return rpcError(null, INVALID_REQUEST, "Invalid request.");
  if (params !== undefined && !isObject(params)) {
    return rpcError(id, INVALID_PARAMS, "Invalid params.");
  }
  const result = (value: Record<string, unknown>): RpcReply => ({
    jsonrpc: "2.0",
    id,
    result: value,
  });
  switch (method) {
    case "initialize": {
      if (inBatch) return rpcError(id, INVALID_REQUEST, "initialize must not be in a batch.");
      const asked = params?.protocolVersion;
      if (typeof asked !== "string") return rpcError(id, INVALID_PARAMS, "Invalid params.");
      x.issued = await newSessionId(x.mcp.signer, x.runId);
      return result({
        protocolVersion: (MCP_PROTOCOL_VERSIONS as readonly string[]).includes(asked)
          ? asked
          : MCP_PROTOCOL_VERSIONS[0],
        capabilities: { tools: {} },
        serverInfo: x.mcp.serverInfo,
      });
    }
    case "ping":
      return result({});
    case "tools/list":
      return result({ tools: x.mcp.tools });
    case "tools/call":
      return await callTool(x, id, params ?? {});
    default:
      return rpcError(id, METHOD_NOT_FOUND, "Method not found.");
  }
}

async function callTool(
  x: Exchange,
  id: RpcId,
  params: Record<string, unknown>,
): Promise<RpcReply> {
  const { name, arguments: input = {}, _meta: meta } = params;
  if (typeof name !== "string" || !isObject(input) || (meta !== undefined && !isObject(meta))) {
    return rpcError(id, INVALID_PARAMS, "Invalid params.");
  }
  // MCP reports an unknown tool as a protocol error; a writable one reaches the boundary, which
  // answers NOT_READ_ONLY.
  if (!x.boundary.tools.has(name)) return rpcError(id, INVALID_PARAMS, "Unknown tool.");
  const reply = (value: BoundaryResult): RpcReply => ({
    jsonrpc: "2.0",
    id,
    result: toolResult(value),
  });
  const sent = meta !== undefined && Object.hasOwn(meta, TOOL_CALL_ID_META)
    ? meta[TOOL_CALL_ID_META]
    : undefined;
  const toolCallId = sent !== undefined
    ? sent
    : x.session !== null
    ? `${x.session}:${typeof id === "number" ? String(id) : id}`
    : undefined;
  if (typeof toolCallId !== "string") return reply(callError(null, "INVALID_TOOL_CALL_ID"));
  const run = await x.runs.get(x.runId, x.boundary);
  if (run === null) return reply(callError(toolCallId, "RUN_NOT_FOUND"));
  return reply(
    await x.boundary.invoke(
      run,
      { toolCallId, runId: x.runId, toolName: name, input },
      { signal: x.c.req.raw.signal },
    ),
  );
}

/** A boundary result as a `CallToolResult`: the same JSON as structured content and as text. */
function toolResult(result: BoundaryResult): Record<string, unknown> {
  const structured = result.status === "READY"
    ? { evidence: result.evidence, scope: result.scope, content: result.content }
    : {
      code: result.code,
      message: result.message,
      ...(result.issues === undefined ? {} : { issues: result.issues }),
    };
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
    ...(result.status === "ERROR" ? { isError: true } : {}),
  };
}

/** The body as text, or `null` past `maxBytes` (not read any further). */
async function readLimited(request: Request, maxBytes: number): Promise<string | null> {
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length > maxBytes) return null;
  if (request.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return ""; // not UTF-8: a parse error, as malformed JSON is
  }
}
