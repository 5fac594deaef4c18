/**
 * `POST /v1/runs/{runId}/mcp`: the boundary of one run as an MCP server. The small part of MCP it
 * needs is spoken here, with no SDK, so the core stays Web APIs + Hono + valibot and runs on
 * Workers: Streamable HTTP, JSON responses only (no SSE). Revision 2026-07-28 (stateless: every
 * request carries its revision in `_meta`; `server/discover`, `tools/list`, `tools/call`) beside
 * 2025-11-25, 2025-06-18 and 2025-03-26 (`initialize`, `ping`, `tools/list`, `tools/call`).
 * Notifications are 202; `notifications/cancelled` cancels a call of the same session. See
 * docs/mcp.md.
 *
 * Session IDs (before 2026-07-28) are signed, not stored: `<random>.<HMAC(secret, runId,
 * random)>`, valid only on the run they were issued for. They only keep two clients' JSON-RPC ids
 * apart (a call without `_meta` ID gets `<session>:<JSON-RPC id>`); the bearer token is still
 * checked on every request. At 2026-07-28 a call without `_meta` ID gets a fresh random ID.
 *
 * Before 2026-07-28 a dropped connection does not cancel a call (the request's signal is not
 * passed on): the call runs to its end and is recorded, as on the tool-call route. At 2026-07-28
 * a disconnect is that revision's cancel, so it cancels the call (the record ends CANCELLED).
 *
 * @module
 */
import type { Context } from "hono";
import { isSafeToolCallId, TOOL_CALL_ID_META } from "../core/ids.ts";
import type { ToolBoundary } from "../core/boundary.ts";
import type { BoundaryResult } from "../core/types.ts";
import { type AppEnv, runOf } from "../hono/auth.ts";
import { readBodyText } from "../hono/body.ts";
import { callError } from "../hono/status.ts";
import { InFlightCalls, type RpcId } from "./in_flight.ts";
import { modelView } from "../core/model_view.ts";
import { toBase64url } from "../core/ledger.ts";
import { decodeUtf8 } from "../core/utf8.ts";
import type { McpMount, McpSessions } from "./types.ts";

/** The MCP revisions served, newest first. */
export const MCP_PROTOCOL_VERSIONS = [
  "2026-07-28",
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
] as const;

// The stateless revision, and those with `initialize` (which falls back to the first of them).
const STATELESS_VERSION = "2026-07-28";
const SESSION_VERSIONS: readonly string[] = MCP_PROTOCOL_VERSIONS.slice(1);
const SERVED: readonly string[] = MCP_PROTOCOL_VERSIONS;
// The per-request `_meta` keys of 2026-07-28.
const VERSION_META = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo";
const SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";
// A revision name of 2026-07-28 or later (dates compare as strings): a client that asks for one
// we do not serve gets -32022 with the list, which 2026-era clients read to pick another.
const isStatelessEra = (version: string) =>
  /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= STATELESS_VERSION;

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
  /** The boundary served. */
  boundary: ToolBoundary;
  /** Issues and checks session IDs. */
  sessions: McpSessions;
  /** Largest request body, in bytes. */
  maxBytes: number;
  /** `serverInfo` of `initialize` (and `_meta` of 2026-07-28 results). */
  serverInfo: { name: string; version: string };
  /** The server's entry of a 2026-07-28 result's `_meta`, as JSON text (`"key":{...}`). */
  serverInfoMeta: string;
  /** The body of `tools/list`, made on its first request. */
  tools(): McpTool[];
  /** The calls of this process that `notifications/cancelled` can still cancel. */
  inFlight: InFlightCalls;
}

/**
 * The MCP server of an app.
 *
 * @param app What the app gives its MCP route.
 */
export function mcpServer({ boundary, sessions, maxBytes, info }: McpMount): McpServer {
  let tools: McpTool[] | undefined;
  const serverInfo = { name: info.title, version: info.version };
  return {
    boundary,
    sessions,
    maxBytes,
    serverInfo,
    serverInfoMeta: `${JSON.stringify(SERVER_INFO_META)}:${JSON.stringify(serverInfo)}`,
    // The tools' JSON Schemas are built when a client first lists them, not when the app starts.
    tools: () =>
      tools ??= boundary.describeTools().filter((tool) => tool.readOnly).map((tool) => ({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema,
        annotations: { readOnlyHint: true },
      })),
    inFlight: new InFlightCalls(),
  };
}

/**
 * A `result` already written as JSON text (a `tools/call`'s): spliced as it is into its reply, so
 * the projection is serialized once. `JSON.rawJSON` cannot carry an object.
 */
class ResultText {
  constructor(readonly json: string) {}
}

/** A JSON-RPC reply. */
type RpcReply =
  | { jsonrpc: "2.0"; id: RpcId; result: Record<string, unknown> | ResultText }
  | {
    jsonrpc: "2.0";
    id: RpcId | null;
    error: { code: number; message: string; data?: Record<string, unknown> };
  };

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
// The code the SDK's own server uses for an unknown session (with HTTP 404).
const SESSION_NOT_FOUND = -32001;
// 2026-07-28: headers that disagree with the body, and a revision not served.
const HEADER_MISMATCH = -32020;
const UNSUPPORTED_VERSION = -32022;

const rpcError = (
  id: RpcId | null,
  code: number,
  message: string,
  data?: Record<string, unknown>,
): RpcReply => ({
  jsonrpc: "2.0",
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

/**
 * The JSON text of a reply: `JSON.stringify`'s, byte for byte, with a result written ahead of
 * time spliced in.
 */
function replyText(reply: RpcReply): string {
  return "result" in reply && reply.result instanceof ResultText
    ? `{"jsonrpc":"2.0","id":${JSON.stringify(reply.id)},"result":${reply.result.json}}`
    : JSON.stringify(reply);
}

/** The JSON text of a reply or of a batch of them. */
const bodyText = (body: RpcReply | RpcReply[]): string =>
  Array.isArray(body) ? `[${body.map(replyText).join(",")}]` : replyText(body);

const JSON_TYPE = { "Content-Type": "application/json" } as const;

const unsupported = (id: RpcId | null, requested: string) =>
  rpcError(id, UNSUPPORTED_VERSION, "Unsupported protocol version.", {
    supported: [...SERVED],
    requested,
  });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What one request is served with. */
interface Exchange {
  c: Context<AppEnv>;
  mcp: McpServer;
  boundary: ToolBoundary;
  runId: string;
  /** The verified session of the request, if it sent one (never at 2026-07-28). */
  session: string | null;
  /** The session issued by an `initialize` in this request. */
  issued: string | null;
  /** Whether the request speaks 2026-07-28. */
  stateless: boolean;
}

/**
 * Answers one HTTP request of the MCP route (after the bearer token and the run ID were checked).
 *
 * @param c The request's context.
 * @param mcp The app's MCP server.
 * @returns A JSON-RPC response (or batch of them), or 202 for notifications and responses.
 */
export async function serveMcp(c: Context<AppEnv>, mcp: McpServer): Promise<Response> {
  const { boundary } = mcp;
  // What `c.json` would send, with a `tools/call`'s result serialized once.
  const reply = (body: RpcReply | RpcReply[], status: 200 | 400 | 404 | 406 | 413 | 415) =>
    c.body(bodyText(body), status, JSON_TYPE);
  const accept = c.req.header("accept");
  if (accept !== undefined && !/(^|,)\s*(application\/(json|\*)|\*\/\*)\s*(;|,|$)/i.test(accept)) {
    return reply(rpcError(null, INVALID_REQUEST, "Accept must allow application/json."), 406);
  }
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "application/json") {
    return reply(rpcError(null, INVALID_REQUEST, "Content-Type must be application/json."), 415);
  }
  const version = c.req.header("mcp-protocol-version")?.trim();
  if (version !== undefined && !SERVED.includes(version)) {
    return reply(
      isStatelessEra(version)
        ? unsupported(null, version)
        : rpcError(null, INVALID_REQUEST, "Unsupported MCP-Protocol-Version."),
      400,
    );
  }
  const runId = c.req.param("runId")!;
  const text = await readBodyText(c.req.raw, mcp.maxBytes);
  if (text === null) return reply(rpcError(null, INVALID_REQUEST, "Request too large."), 413);
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return reply(rpcError(null, PARSE_ERROR, "Parse error."), 400);
  }
  // The revision is the body's (2026-07-28 names it in every request's `_meta`), the header a
  // check on it; a batch is never 2026-07-28.
  const stateless = Array.isArray(message)
    ? message.some((item) => claimOf(item) !== undefined)
    : claimOf(message) !== undefined || version === STATELESS_VERSION;
  if (Array.isArray(message) && stateless) {
    return reply(rpcError(null, INVALID_REQUEST, "Batches are not part of 2026-07-28."), 400);
  }
  if (stateless) {
    const refusal = checkStateless(c, message, version);
    if (refusal === "legacy") {
      // An envelope naming an older revision: that revision's rules (and its session) apply.
    } else if (refusal !== null) {
      return reply(refusal, 400);
    } else {
      const exchange: Exchange = {
        c,
        mcp,
        boundary,
        runId,
        session: null,
        issued: null,
        stateless: true,
      };
      const pending = answer1(exchange, message, false);
      const answer = pending instanceof Promise ? await pending : pending;
      return answer === null ? c.body(null, 202) : reply(answer, 200);
    }
  }
  const session = c.req.header("mcp-session-id") ?? null;
  const known = session === null ? true : mcp.sessions.check(session, runId);
  if (!(typeof known === "boolean" ? known : await known)) {
    // 404 tells the client to start a new session (initialize without a session ID).
    return reply(rpcError(null, SESSION_NOT_FOUND, "Session not found."), 404);
  }
  const exchange: Exchange = {
    c,
    mcp,
    boundary,
    runId,
    session,
    issued: null,
    stateless: false,
  };
  if (Array.isArray(message)) {
    if ((version ?? DEFAULT_VERSION) !== DEFAULT_VERSION) {
      return reply(rpcError(null, INVALID_REQUEST, "Batches are not part of this revision."), 400);
    }
    if (message.length === 0) return reply(rpcError(null, INVALID_REQUEST, "Empty batch."), 400);
    const replies: RpcReply[] = [];
    for (const item of message) {
      const pending = answer1(exchange, item, true);
      const answer = pending instanceof Promise ? await pending : pending;
      if (answer !== null) replies.push(answer);
    }
    return replies.length === 0 ? c.body(null, 202) : reply(replies, 200);
  }
  // Only a call waits: an answer that is ready takes no turn of the event loop.
  const pending = answer1(exchange, message, false);
  const answer = pending instanceof Promise ? await pending : pending;
  if (answer === null) return c.body(null, 202);
  if (exchange.issued !== null) c.header("Mcp-Session-Id", exchange.issued);
  const malformed = "error" in answer &&
    (answer.error.code === INVALID_REQUEST || answer.error.code === PARSE_ERROR);
  return reply(answer, malformed ? 400 : 200);
}

/** The `_meta` of a message's params, when both are objects. */
function metaOf(message: unknown): Record<string, unknown> | undefined {
  if (!isObject(message) || !isObject(message.params)) return undefined;
  const meta = message.params._meta;
  return isObject(meta) ? meta : undefined;
}

/** The revision a message's `_meta` claims (2026-07-28's envelope), present or not valid. */
function claimOf(message: unknown): unknown {
  const meta = metaOf(message);
  return meta !== undefined && Object.hasOwn(meta, VERSION_META) ? meta[VERSION_META] : undefined;
}

/**
 * The checks of a 2026-07-28 message before its method: the envelope, the revision it names,
 * and the standard headers against the body. `null` when it passes, `"legacy"` when its envelope
 * names an older revision, else the error to answer with HTTP 400.
 */
function checkStateless(
  c: Context<AppEnv>,
  message: unknown,
  header: string | undefined,
): RpcReply | "legacy" | null {
  if (!isObject(message) || typeof message.method !== "string") {
    // A response posted to a stateless server, or no JSON-RPC message at all.
    return rpcError(null, INVALID_REQUEST, "Invalid request.");
  }
  const id = typeof message.id === "string" ||
      (typeof message.id === "number" && Number.isFinite(message.id))
    ? message.id
    : null;
  const isRequest = "id" in message;
  const meta = metaOf(message);
  const claim = claimOf(message);
  if (claim === undefined) {
    // The header names 2026-07-28 and the body has no envelope.
    return isRequest ? rpcError(id, INVALID_PARAMS, `Missing _meta["${VERSION_META}"].`) : null;
  }
  if (typeof claim !== "string") {
    return rpcError(id, INVALID_PARAMS, `_meta["${VERSION_META}"] must be a string.`);
  }
  if (header !== undefined && header !== claim) {
    return rpcError(id, HEADER_MISMATCH, "MCP-Protocol-Version does not match the body.");
  }
  const methodHeader = c.req.header("mcp-method")?.trim();
  if (methodHeader !== undefined && methodHeader !== message.method) {
    return rpcError(id, HEADER_MISMATCH, "Mcp-Method does not match the body.");
  }
  if (SESSION_VERSIONS.includes(claim)) return "legacy";
  if (claim !== STATELESS_VERSION) return unsupported(id, claim);
  if (!isRequest) return null; // a notification needs no capabilities or headers
  if (isObject(meta) && !isObject(meta[CAPABILITIES_META])) {
    return rpcError(id, INVALID_PARAMS, `_meta["${CAPABILITIES_META}"] must be an object.`);
  }
  const info = meta?.[CLIENT_INFO_META];
  if (info !== undefined && !isObject(info)) {
    return rpcError(id, INVALID_PARAMS, `_meta["${CLIENT_INFO_META}"] must be an object.`);
  }
  if (header === undefined) {
    return rpcError(id, HEADER_MISMATCH, "MCP-Protocol-Version is required.");
  }
  if (methodHeader === undefined) return rpcError(id, HEADER_MISMATCH, "Mcp-Method is required.");
  if (message.method === "tools/call" && isObject(message.params)) {
    const name = message.params.name;
    const nameHeader = c.req.header("mcp-name")?.trim();
    if (typeof name === "string") {
      if (nameHeader === undefined) return rpcError(id, HEADER_MISMATCH, "Mcp-Name is required.");
      if (decodeHeaderValue(nameHeader) !== name) {
        return rpcError(id, HEADER_MISMATCH, "Mcp-Name does not match the body.");
      }
    }
  }
  return null;
}

/** A header value as 2026-07-28 writes it: plain, or `=?base64?<UTF-8 as base64>?=`. */
function decodeHeaderValue(value: string): string | undefined {
  const sentinel = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (sentinel === null) return value;
  try {
    const bytes = Uint8Array.from(atob(sentinel[1]!), (char) => char.charCodeAt(0));
    return decodeUtf8(bytes);
  } catch {
    return undefined;
  }
}

/** A reply now, or once it is ready: only `tools/call` and `initialize` wait for anything. */
type Answer = RpcReply | null | Promise<RpcReply | null>;

/** The reply to one message; `null` for a notification or a client's response. */
function answer1(x: Exchange, message: unknown, inBatch: boolean): Answer {
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
  if (!("id" in message)) {
    // A notification. Only a cancel of this session's own call does anything.
    if (method === "notifications/cancelled" && x.session !== null && isObject(params)) {
      const target = params.requestId;
      if (typeof target === "string" || typeof target === "number") {
        x.mcp.inFlight.cancel(x.runId, x.session, target);
      }
    }
    return null;
  }
  if (!validId) return rpcError(null, INVALID_REQUEST, "Invalid request.");
  if (params !== undefined && !isObject(params)) {
    return rpcError(id, INVALID_PARAMS, "Invalid params.");
  }
  const result = (value: Record<string, unknown>): RpcReply => ({
    jsonrpc: "2.0",
    id,
    result: x.stateless ? stateless(x.mcp, value) : value,
  });
  if (x.stateless) {
    switch (method) {
      case "server/discover":
        return result({
          supportedVersions: [...SERVED],
          capabilities: { tools: {} },
          ...NOT_CACHED,
        });
      case "tools/list":
        return result({ tools: x.mcp.tools(), ...NOT_CACHED });
      case "tools/call":
        return callTool(x, id, params ?? {});
      default:
        // `initialize` and `ping` are not part of 2026-07-28.
        return rpcError(id, METHOD_NOT_FOUND, "Method not found.");
    }
  }
  switch (method) {
    case "initialize": {
      if (inBatch) return rpcError(id, INVALID_REQUEST, "initialize must not be in a batch.");
      const asked = params?.protocolVersion;
      if (typeof asked !== "string") return rpcError(id, INVALID_PARAMS, "Invalid params.");
      return x.mcp.sessions.issue(x.runId).then((issued) => {
        x.issued = issued;
        return result({
          protocolVersion: SESSION_VERSIONS.includes(asked) ? asked : SESSION_VERSIONS[0],
          capabilities: { tools: {} },
          serverInfo: x.mcp.serverInfo,
        });
      });
    }
    case "ping":
      return result({});
    case "tools/list":
      return result({ tools: x.mcp.tools() });
    case "tools/call":
      return callTool(x, id, params ?? {});
    default:
      return rpcError(id, METHOD_NOT_FOUND, "Method not found.");
  }
}

// A listing is this app's and may change when it restarts: no client keeps it.
const NOT_CACHED = { ttlMs: 0, cacheScope: "private" } as const;

/** A result as 2026-07-28 has it: `resultType`, and the server named in `_meta`. */
function stateless(mcp: McpServer, value: Record<string, unknown>): Record<string, unknown> {
  const meta = isObject(value._meta) ? value._meta : {};
  return {
    resultType: "complete",
    ...value,
    _meta: { ...meta, [SERVER_INFO_META]: mcp.serverInfo },
  };
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
  const sent = meta !== undefined && Object.hasOwn(meta, TOOL_CALL_ID_META)
    ? meta[TOOL_CALL_ID_META]
    : undefined;
  const toolCallId = sent !== undefined
    ? sent
    : x.session !== null
    ? `${x.session}:${typeof id === "number" ? String(id) : id}`
    : x.stateless
    ? mintToolCallId()
    : undefined;
  const reply = (value: BoundaryResult): RpcReply => ({
    jsonrpc: "2.0",
    id,
    result: toolResult(
      value,
      isSafeToolCallId(toolCallId) ? toolCallId : null,
      x.stateless ? x.mcp : null,
    ),
  });
  if (typeof toolCallId !== "string") return reply(callError(null, "INVALID_TOOL_CALL_ID"));
  // Before 2026-07-28 a dropped connection is not a cancel (the transport says a disconnect
  // SHOULD NOT be read as one, and a retry should find the call's real outcome): a session's call
  // is cancelled by its `notifications/cancelled`, while this process runs it. At 2026-07-28 the
  // disconnect IS the cancel (the server MUST treat it so; no notification is sent), so the
  // request's own signal is the call's.
  const session = x.session;
  const held = x.stateless || session === null
    ? undefined
    : x.mcp.inFlight.add(x.runId, session, id);
  const signal = x.stateless ? x.c.req.raw.signal : held;
  // The run as the path and the token name it: the store's begin checks it, no read before.
  const done = x.boundary.invoke(
    runOf(x.c),
    { toolCallId, runId: x.runId, toolName: name, input },
    signal === undefined ? {} : { signal },
  );
  keepAlive(x.c, done);
  try {
    return reply(await done);
  } finally {
    if (held !== undefined) x.mcp.inFlight.remove(x.runId, session!, id);
  }
}

/** A fresh tool call ID for a 2026-07-28 call without `_meta` ID: `mcp-` and 128 random bits. */
function mintToolCallId(): string {
  return `mcp-${toBase64url(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/**
 * Whether this runtime may cut a handler whose client went away: Cloudflare Workers (their
 * `navigator.userAgent`). Elsewhere nothing cuts a running handler.
 */
const CUTS_HANDLERS = globalThis.navigator?.userAgent === "Cloudflare-Workers";

/**
 * On Workers, keeps the isolate until the call ended even when the client went away first (a
 * handler may otherwise be cut when its client disconnects). Only there is the execution context
 * asked for: Hono's getter throws without one, and a throw costs more than the rest of a
 * `tools/call`'s routing (about 4 µs in Deno).
 */
function keepAlive(c: Context<AppEnv>, done: Promise<unknown>): void {
  if (!CUTS_HANDLERS) return;
  let ctx: { waitUntil(promise: Promise<unknown>): void } | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    return; // app.fetch was called without one
  }
  ctx?.waitUntil(done.catch(() => {}));
}

/**
 * A boundary result as a `CallToolResult`, written as JSON text: the same JSON as structured
 * content and as text, and the tool call ID it was recorded under in `_meta`; at 2026-07-28 (`mcp`
 * given) with `resultType` and the server in `_meta`. The projection is serialized once; the text
 * is what `JSON.stringify` makes of `{ resultType?, content, structuredContent, isError?, _meta? }`,
 * at 2026-07-28 the members {@linkcode stateless} gives every other result, written by hand because
 * building the object for it costs each call about 1.5 µs (tests/mcp/route_test.ts holds the two
 * equal).
 */
function toolResult(
  result: BoundaryResult,
  toolCallId: string | null,
  mcp: McpServer | null,
): ResultText {
  const structured = JSON.stringify(modelView(result));
  let json = `${mcp === null ? "{" : '{"resultType":"complete",'}"content":[{"type":"text","text":${
    JSON.stringify(structured)
  }}],"structuredContent":${structured}`;
  if (result.status === "ERROR") json += ',"isError":true';
  if (toolCallId !== null) {
    json += `,"_meta":{${TOOL_CALL_ID_META_JSON}:${JSON.stringify(toolCallId)}${
      mcp === null ? "}" : `,${mcp.serverInfoMeta}}`
    }`;
  } else if (mcp !== null) json += `,"_meta":{${mcp.serverInfoMeta}}`;
  return new ResultText(`${json}}`);
}

const TOOL_CALL_ID_META_JSON = JSON.stringify(TOOL_CALL_ID_META);
