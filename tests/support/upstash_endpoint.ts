/**
 * An Upstash-compatible REST endpoint in front of a local redis-server, for tests and local
 * development: `POST /` (one command), `/pipeline`, `/multi-exec`, bearer auth,
 * `Upstash-Encoding: base64` at every depth, Upstash's error statuses. It counts requests,
 * records commands, and injects faults: 5xx answers, responses dropped after the command ran
 * (the connection is closed before any byte of the answer, so the client's `fetch` throws and
 * the client retries), and delays.
 *
 * Like Upstash, it takes scripts whose first line is `#!lua flags=allow-key-locking`, which stock
 * redis-server refuses: it drops that flag before passing a script on (`EVAL`, `EVAL_RO`,
 * `SCRIPT LOAD`), and maps the SHA-1 of a flagged source to that of the source passed on
 * (`EVALSHA`, `EVALSHA_RO`, `SCRIPT EXISTS`, and the answer of `SCRIPT LOAD`). Its log records
 * commands as the client sent them.
 *
 * Every request goes through one connection to redis-server, written in order. So `WAIT` covers
 * every write made through the endpoint before it, from any client, as `WAIT` does on Upstash
 * (there it covers writes from other connections too); while it blocks, later requests wait.
 * `connectTo` points the endpoint at another redis-server, as after a failover.
 *
 * It is a raw HTTP/1.1 server over `Deno.listen`, because dropping a response mid-request needs
 * control of the socket that `Deno.serve` does not give.
 *
 * @module
 */
import { type RespConnection, RespError, RespStatus, type RespValue } from "./resp.ts";
import { RoundTripDelay } from "./round_trip.ts";
import { sha1Hex } from "./sha1.ts";

/** Options of {@linkcode startUpstashEndpoint}. */
export interface UpstashEndpointOptions {
  /** Opens a connection to redis-server (called again after the connection is lost). */
  connectRedis: () => Promise<RespConnection>;
  /** Bearer token clients must send. @default "test-token" */
  token?: string;
  /** Port to listen on; a free one when omitted. */
  port?: number;
  /** Hostname to listen on. @default "127.0.0.1" */
  hostname?: string;
  /**
   * The largest request body accepted, in bytes, as Upstash's max request size (10 MB on the free
   * and pay-as-you-go plans). A larger request runs nothing and is answered 400
   * `{"error":"ERR max request size exceeded. Limit: <n> bytes, Actual: <m> bytes. ..."}`.
   * @default 10485760
   */
  maxRequestBytes?: number;
}

/** One HTTP request as the endpoint received it. */
export interface RecordedRequest {
  /** `/`, `/pipeline` or `/multi-exec` (or anything else that was asked). */
  path: string;
  /** The commands in it, arguments as strings. */
  commands: string[][];
  /** Bytes of its body as sent. */
  bytes: number;
  /**
   * The `upstash-sync-token` header it carried (read-your-writes), or `undefined`. Every answer
   * carries a new one, `sync-<n>`, as Upstash's do.
   */
  syncToken: string | undefined;
}

/** A running endpoint and its controls. */
export interface UpstashEndpoint {
  /** `http://127.0.0.1:<port>`: the UPSTASH_REDIS_REST_URL. */
  readonly url: string;
  /** The UPSTASH_REDIS_REST_TOKEN. */
  readonly token: string;
  /** HTTP requests received since the start or the last {@linkcode UpstashEndpoint.reset}. */
  readonly requests: number;
  /** Requests being handled now (received, not yet answered or dropped). */
  readonly inFlight: number;
  /** Resolves once no request is being handled. */
  idle(): Promise<void>;
  /** The requests, in arrival order. */
  readonly log: readonly RecordedRequest[];
  /** Every command of {@linkcode UpstashEndpoint.log}, flattened, names as the client sent them. */
  commands(): string[][];
  /** Clears the counter and the log. */
  reset(): void;
  /** Answers the next `count` requests with `status` without running them. */
  failNext(count: number, status?: number): void;
  /** Runs the next `count` requests, then closes the connection instead of answering. */
  dropNext(count: number): void;
  /**
   * Delays every answer by `ms` (after the command ran) until set back to 0: a simulated round
   * trip, held to a deadline (see round_trip.ts), not `setTimeout(ms)`, which fires 1 ms or more
   * late.
   */
  setDelay(ms: number): void;
  /**
   * Points the endpoint at another redis-server (as after a failover): closes its connection;
   * the next request connects with `connectRedis`.
   */
  connectTo(connectRedis: () => Promise<RespConnection>): Promise<void>;
  /** Stops listening, closes client connections and the redis connection. */
  stop(): Promise<void>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface HttpRequest {
  method: string;
  path: string;
  headers: Map<string, string>;
  /** Empty when the body was over the limit (it was read and dropped). */
  body: Uint8Array;
  /** Bytes of the body as sent. */
  size: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Upstash's max request size on the free and pay-as-you-go plans. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** The script flag Upstash reads and stock redis-server refuses. */
const KEY_LOCKING_FLAG = "allow-key-locking";
/** A script's first line when it carries flags, e.g. `#!lua flags=no-writes,allow-key-locking`. */
const SHEBANG = /^#!lua[ \t]+flags=([^\r\n]*)(\r?\n|$)/;

/**
 * The script without the `allow-key-locking` flag: without its first line when that was the only
 * flag, with the other flags kept otherwise. `null` when the script does not carry the flag.
 *
 * @param source A script as a client sent it.
 * @returns The script to pass on to redis-server, or `null` to pass it on unchanged.
 */
export function stripKeyLocking(source: string): string | null {
  const match = SHEBANG.exec(source);
  if (match === null) return null;
  const flags = match[1]!.split(",").map((flag) => flag.trim());
  if (!flags.includes(KEY_LOCKING_FLAG)) return null;
  const rest = flags.filter((flag) => flag !== KEY_LOCKING_FLAG && flag !== "");
  const body = source.slice(match[0].length);
  return rest.length === 0 ? body : `#!lua flags=${rest.join(",")}\n${body}`;
}

/** A command as passed on to redis-server, and how to turn its reply into the client's. */
interface Prepared {
  command: string[];
  reply?: (reply: RespValue) => RespValue;
}

/**
 * Starts the endpoint.
 *
 * @param options How to reach redis, the token and the port.
 * @returns The endpoint and its fault controls.
 */
export function startUpstashEndpoint(options: UpstashEndpointOptions): UpstashEndpoint {
  const token = options.token ?? "test-token";
  const maxRequestBytes = options.maxRequestBytes ?? MAX_REQUEST_BYTES;
  if (!Number.isSafeInteger(maxRequestBytes) || maxRequestBytes < 1) {
    throw new RangeError("maxRequestBytes must be a positive integer");
  }
  const listener = Deno.listen({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
  });
  const conns = new Set<Deno.Conn>();
  const handlers = new Set<Promise<void>>();
  let log: RecordedRequest[] = [];
  let requests = 0;
  let syncTokens = 0;
  let inFlight = 0;
  let failing: { count: number; status: number } = { count: 0, status: 503 };
  let dropping = 0;
  let delayMs = 0;
  const roundTrip = new RoundTripDelay();
  let connectRedis = options.connectRedis;
  let redis: RespConnection | undefined;
  let connecting: Promise<RespConnection> | undefined;
  let stopped = false;
  /** SHA-1 of a flagged source the client sent -> SHA-1 of the source passed on to redis. */
  const flaggedShas = new Map<string, string>();

  /** Notes a flagged source and the one passed on; returns the flagged source's SHA-1. */
  const remember = async (flagged: string, stripped: string): Promise<string> => {
    const [from, to] = await Promise.all([sha1Hex(flagged), sha1Hex(stripped)]);
    flaggedShas.set(from, to);
    return from;
  };
  const mapSha = (sha: string): string => flaggedShas.get(sha.toLowerCase()) ?? sha;

  /** Drops the key-locking flag and maps SHAs, as Upstash accepts what redis-server refuses. */
  const prepare = async (command: string[]): Promise<Prepared> => {
    const [name = "", first] = command;
    const upper = name.toUpperCase();
    if ((upper === "EVAL" || upper === "EVAL_RO") && first !== undefined) {
      const stripped = stripKeyLocking(first);
      if (stripped === null) return { command };
      await remember(first, stripped);
      return { command: [name, stripped, ...command.slice(2)] };
    }
    if ((upper === "EVALSHA" || upper === "EVALSHA_RO") && first !== undefined) {
      return { command: [name, mapSha(first), ...command.slice(2)] };
    }
    if (upper === "SCRIPT" && first?.toUpperCase() === "LOAD" && command.length === 3) {
      const stripped = stripKeyLocking(command[2]!);
      if (stripped === null) return { command };
      const sha = await remember(command[2]!, stripped);
      // redis-server answers the SHA-1 of what it got; the client's is that of what it sent.
      return {
        command: [name, first, stripped],
        reply: (reply) => (reply instanceof RespError ? reply : encoder.encode(sha)),
      };
    }
    if (upper === "SCRIPT" && first?.toUpperCase() === "EXISTS") {
      return { command: [name, first, ...command.slice(2).map(mapSha)] };
    }
    return { command };
  };
  const replyFor = (prepared: Prepared, reply: RespValue): RespValue =>
    prepared.reply === undefined ? reply : prepared.reply(reply);

  const getRedis = async (): Promise<RespConnection> => {
    if (redis !== undefined && !redis.closed) return redis;
    connecting ??= connectRedis().finally(() => (connecting = undefined));
    redis = await connecting;
    return redis;
  };

  const execute = async (
    path: string,
    body: Json,
    base64: boolean,
    bytes: number,
    syncToken: string | undefined,
  ): Promise<{ status: number; body: Json }> => {
    const normalized = path.replace(/\/+$/, "") || "/";
    if (normalized === "/") {
      const command = toCommand(body);
      if (command === null) return { status: 400, body: { error: "ERR malformed command" } };
      log.push({ path: normalized, commands: [command], bytes, syncToken });
      const prepared = await prepare(command);
      const reply = replyFor(prepared, await (await getRedis()).command(prepared.command));
      if (reply instanceof RespError) return { status: 400, body: { error: reply.text } };
      return { status: 200, body: { result: toJson(reply, base64, true) } };
    }
    if (normalized === "/pipeline" || normalized === "/multi-exec") {
      const commands = Array.isArray(body) ? body.map(toCommand) : null;
      if (commands === null || commands.length === 0 || commands.some((c) => c === null)) {
        return { status: 400, body: { error: "ERR malformed pipeline" } };
      }
      const list = commands as string[][];
      log.push({ path: normalized, commands: list, bytes, syncToken });
      const prepared = await Promise.all(list.map(prepare));
      const sent = prepared.map((p) => p.command);
      const connection = await getRedis();
      if (normalized === "/pipeline") {
        const replies = await connection.commands(sent);
        return {
          status: 200,
          body: replies.map((reply, i) => toEntry(replyFor(prepared[i]!, reply), base64)),
        };
      }
      // One write: MULTI, the commands, EXEC; nothing else can come in between on this connection.
      const replies = await connection.commands([["MULTI"], ...sent, ["EXEC"]]);
      const exec = replies[replies.length - 1];
      if (exec instanceof RespError) return { status: 400, body: { error: exec.text } };
      if (!Array.isArray(exec)) {
        return { status: 400, body: { error: "ERR transaction discarded" } };
      }
      return {
        status: 200,
        body: exec.map((reply, i) => toEntry(replyFor(prepared[i]!, reply), base64)),
      };
    }
    return { status: 404, body: { error: "ERR unknown endpoint" } };
  };

  const respond = async (request: HttpRequest): Promise<{ status: number; body: Json } | null> => {
    requests++;
    if (request.headers.get("authorization") !== `Bearer ${token}`) {
      return { status: 401, body: { error: "Unauthorized" } };
    }
    if (request.method !== "POST") return { status: 405, body: { error: "Method not allowed" } };
    if (request.size > maxRequestBytes) {
      // Upstash's answer: an error reply, nothing run. Its REST docs give 400 for a command that
      // fails; the text is the one its clients report.
      return {
        status: 400,
        body: {
          error: `ERR max request size exceeded. Limit: ${maxRequestBytes} bytes, Actual: ` +
            `${request.size} bytes. See https://upstash.com/docs/redis/troubleshooting/` +
            "max_request_size_exceeded for details",
        },
      };
    }
    if (failing.count > 0) {
      failing.count--;
      return { status: failing.status, body: { error: "Injected failure" } };
    }
    let body: Json;
    try {
      body = JSON.parse(decoder.decode(request.body));
    } catch {
      return { status: 400, body: { error: "ERR failed to parse the request body" } };
    }
    const base64 = request.headers.get("upstash-encoding")?.toLowerCase() === "base64";
    let answer: { status: number; body: Json };
    try {
      answer = await execute(
        request.path,
        body,
        base64,
        request.size,
        request.headers.get("upstash-sync-token"),
      );
    } catch {
      answer = { status: 503, body: { error: "Service unavailable: redis is unreachable" } };
    }
    if (delayMs > 0) await roundTrip.hold(delayMs);
    if (dropping > 0) {
      dropping--;
      return null;
    }
    return answer;
  };

  const serveConn = async (conn: Deno.Conn): Promise<void> => {
    const reader = new HttpReader(conn, maxRequestBytes);
    try {
      while (!stopped) {
        const request = await reader.next();
        if (request === null) break;
        inFlight++;
        let answer: { status: number; body: Json } | null;
        try {
          answer = await respond(request);
        } finally {
          inFlight--;
        }
        if (answer === null || stopped) break; // dropped: close without answering
        await writeAll(conn, formatResponse(answer.status, answer.body, `sync-${++syncTokens}`));
      }
    } catch {
      // a client went away or sent garbage
    } finally {
      conns.delete(conn);
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
  };

  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        conns.add(conn);
        const handler = serveConn(conn);
        handlers.add(handler);
        handler.finally(() => handlers.delete(handler));
      }
    } catch {
      // the listener was closed
    }
  })();

  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    token,
    get requests() {
      return requests;
    },
    get inFlight() {
      return inFlight;
    },
    async idle() {
      while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    get log() {
      return log;
    },
    commands: () => log.flatMap((entry) => entry.commands),
    reset() {
      log = [];
      requests = 0;
    },
    failNext(count, status = 503) {
      failing = { count, status };
    },
    dropNext(count) {
      dropping = count;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    async connectTo(connect) {
      connectRedis = connect;
      const old = redis ?? await connecting?.catch(() => undefined);
      redis = undefined;
      await old?.close();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // already closed
        }
      }
      await accepting;
      await redis?.close();
      await Promise.allSettled([...handlers]);
    },
  };
}

function toCommand(value: Json): string[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const out: string[] = [];
  for (const arg of value) {
    if (typeof arg === "string") out.push(arg);
    else if (typeof arg === "number" || typeof arg === "boolean") out.push(String(arg));
    else return null;
  }
  return out;
}

function toEntry(reply: RespValue, base64: boolean): Json {
  return reply instanceof RespError
    ? { error: reply.text }
    : { result: toJson(reply, base64, false) };
}

/** Strings are base64 at every depth when asked, except a top-level OK, as Upstash does. */
function toJson(reply: RespValue, base64: boolean, topLevel: boolean): Json {
  if (reply === null || typeof reply === "number") return reply;
  if (reply instanceof RespStatus) {
    if (!base64 || (topLevel && reply.text === "OK")) return reply.text;
    return encodeBase64(encoder.encode(reply.text));
  }
  if (reply instanceof RespError) return reply.text;
  if (reply instanceof Uint8Array) return base64 ? encodeBase64(reply) : decoder.decode(reply);
  return reply.map((item) => toJson(item, base64, false));
}

function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) {
    binary += String.fromCharCode(...bytes.subarray(i, i + step));
  }
  return btoa(binary);
}

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  413: "Payload Too Large",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

function formatResponse(status: number, body: Json, syncToken: string): Uint8Array {
  const payload = encoder.encode(JSON.stringify(body));
  const head = encoder.encode(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Status"}\r\n` +
      "content-type: application/json\r\n" +
      `upstash-sync-token: ${syncToken}\r\n` +
      `content-length: ${payload.length}\r\n\r\n`,
  );
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
}

/** Reads HTTP/1.1 requests (Content-Length or chunked bodies) from one connection. */
class HttpReader {
  readonly #conn: Deno.Conn;
  readonly #limit: number;
  #buffer = new Uint8Array(0);
  #eof = false;

  /**
   * @param conn The connection.
   * @param limit Bodies larger than this are read and dropped, not kept, so that the request
   *   can still be answered on a connection that stays usable.
   */
  constructor(conn: Deno.Conn, limit: number) {
    this.#conn = conn;
    this.#limit = limit;
  }

  async next(): Promise<HttpRequest | null> {
    const headEnd = await this.#until(() => indexOf(this.#buffer, "\r\n\r\n"));
    if (headEnd < 0) return null;
    const head = decoder.decode(this.#buffer.subarray(0, headEnd)).split("\r\n");
    this.#consume(headEnd + 4);
    const [method = "", target = "/"] = (head[0] ?? "").split(" ");
    const headers = new Map<string, string>();
    for (const line of head.slice(1)) {
      const colon = line.indexOf(":");
      if (colon > 0) {
        headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
    }
    let body: Uint8Array;
    let size: number;
    if (headers.get("transfer-encoding")?.toLowerCase().includes("chunked")) {
      ({ body, size } = await this.#chunked());
    } else {
      const length = Number(headers.get("content-length") ?? "0");
      if (!Number.isSafeInteger(length) || length < 0) throw new Error("Bad content-length");
      size = length;
      if (length > this.#limit) {
        await this.#skip(length);
        body = new Uint8Array(0);
      } else {
        body = await this.#take(length);
      }
    }
    const path = new URL(target, "http://localhost").pathname;
    return { method, path, headers, body, size };
  }

  async #chunked(): Promise<{ body: Uint8Array; size: number }> {
    const parts: Uint8Array[] = [];
    let total = 0;
    while (true) {
      const end = await this.#until(() => indexOf(this.#buffer, "\r\n"));
      if (end < 0) throw new Error("Truncated chunk");
      const size = parseInt(decoder.decode(this.#buffer.subarray(0, end)), 16);
      this.#consume(end + 2);
      if (!Number.isSafeInteger(size) || size < 0) throw new Error("Bad chunk");
      if (size === 0) {
        await this.#take(2);
        break;
      }
      total += size;
      if (total > this.#limit) {
        parts.length = 0; // over the limit: the rest is only counted
        await this.#skip(size);
      } else {
        parts.push(await this.#take(size));
      }
      await this.#take(2);
    }
    if (total > this.#limit) return { body: new Uint8Array(0), size: total };
    const out = new Uint8Array(total);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return { body: out, size: total };
  }

  /** Reads `length` bytes and drops them. */
  async #skip(length: number): Promise<void> {
    let left = length;
    const chunk = new Uint8Array(64 * 1024);
    while (left > 0) {
      if (this.#buffer.length > 0) {
        const n = Math.min(left, this.#buffer.length);
        this.#consume(n);
        left -= n;
        continue;
      }
      const n = await this.#conn.read(chunk);
      if (n === null) throw new Error("Truncated body");
      if (n <= left) {
        left -= n;
      } else {
        this.#buffer = chunk.slice(left, n);
        left = 0;
      }
    }
  }

  async #take(length: number): Promise<Uint8Array> {
    // Straight into the result: growing the buffer read by read would copy a large body over
    // and over.
    const out = new Uint8Array(length);
    let at = Math.min(length, this.#buffer.length);
    out.set(this.#buffer.subarray(0, at));
    this.#consume(at);
    while (at < length) {
      const n = await this.#conn.read(out.subarray(at));
      if (n === null) throw new Error("Truncated body");
      at += n;
    }
    return out;
  }

  async #until(find: () => number): Promise<number> {
    const chunk = new Uint8Array(64 * 1024);
    while (true) {
      const found = find();
      if (found >= 0 || this.#eof) return found;
      const n = await this.#conn.read(chunk);
      if (n === null) {
        this.#eof = true;
        continue;
      }
      const next = new Uint8Array(this.#buffer.length + n);
      next.set(this.#buffer);
      next.set(chunk.subarray(0, n), this.#buffer.length);
      this.#buffer = next;
    }
  }

  #consume(length: number): void {
    this.#buffer = this.#buffer.slice(length);
  }
}

function indexOf(buffer: Uint8Array, text: string): number {
  const needle = encoder.encode(text);
  outer: for (let i = 0; i + needle.length <= buffer.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (buffer[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}
