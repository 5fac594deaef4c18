/**
 * A small RESP2 client over `Deno.connect`, for the test fixtures only: binary-safe commands,
 * replies in order, and a push mode for MONITOR.
 *
 * @module
 */

/** A RESP2 reply: bulk strings stay bytes so the endpoint can base64 them exactly. */
export type RespValue = null | number | Uint8Array | RespStatus | RespError | RespValue[];

/** A simple-string reply (`+OK`). */
export class RespStatus {
  /** @param text The status text. */
  constructor(readonly text: string) {}
}

/** An error reply (`-ERR ...`): a value, not a thrown error, so pipelines keep going. */
export class RespError {
  /** @param text The error text. */
  constructor(readonly text: string) {}
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CR = 13;
const INCOMPLETE = Symbol("incomplete");

interface Pending {
  resolve: (value: RespValue) => void;
  reject: (error: Error) => void;
}

/** One connection to redis-server. Commands are written in order and answered in order. */
export class RespConnection {
  readonly #conn: Deno.TcpConn;
  readonly #pending: Pending[] = [];
  #buffer: Uint8Array = new Uint8Array(0);
  #closed = false;
  /** The last write queued: writes go out one after the other, never interleaved. */
  #writing: Promise<void> = Promise.resolve();
  #onPush: ((value: RespValue) => void) | undefined;
  readonly #reading: Promise<void>;

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
    this.#reading = this.#readLoop();
  }

  /**
   * Connects to a redis-server.
   *
   * @param port The TCP port on 127.0.0.1.
   * @returns The connection.
   */
  static async connect(port: number): Promise<RespConnection> {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.setNoDelay(true);
    return new RespConnection(conn);
  }

  /** Whether the connection is closed (by us or by the server). */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Sends one command and waits for its reply.
   *
   * @param args The command and its arguments.
   * @returns The reply (an error reply is returned as {@linkcode RespError}).
   */
  command(args: readonly (string | Uint8Array)[]): Promise<RespValue> {
    return this.commands([args]).then((replies) => replies[0] ?? null);
  }

  /**
   * Writes several commands as one block, so nothing from another caller can come in between
   * (what MULTI/EXEC needs), and waits for all their replies. Blocks are written whole and in
   * call order: one socket write may take only part of a large block, and a concurrent write
   * must not slip into the gap.
   *
   * @param commands The commands.
   * @returns Their replies, in order.
   */
  commands(commands: readonly (readonly (string | Uint8Array)[])[]): Promise<RespValue[]> {
    if (this.#closed) return Promise.reject(new Error("Redis connection is closed"));
    const replies = commands.map(() =>
      new Promise<RespValue>((resolve, reject) => this.#pending.push({ resolve, reject }))
    );
    const bytes = encodeCommands(commands);
    this.#writing = this.#writing.then(() => this.#closed ? undefined : this.#writeAll(bytes))
      .catch((error) => this.#fail(error));
    return Promise.all(replies);
  }

  /**
   * Turns the connection into a MONITOR stream.
   *
   * @param onLine Receives each monitored line.
   */
  async monitor(onLine: (line: string) => void): Promise<void> {
    const reply = await this.command(["MONITOR"]);
    if (!(reply instanceof RespStatus)) throw new Error("MONITOR was refused");
    this.#onPush = (value) => {
      if (value instanceof RespStatus) onLine(value.text);
    };
  }

  /** Closes the connection; pending commands fail. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      try {
        this.#conn.close();
      } catch {
        // already closed by the peer
      }
    }
    await this.#reading;
  }

  async #writeAll(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) offset += await this.#conn.write(bytes.subarray(offset));
  }

  async #readLoop(): Promise<void> {
    const chunk = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await this.#conn.read(chunk);
        if (n === null) break;
        this.#append(chunk.subarray(0, n));
        this.#drain();
      }
    } catch {
      // the connection was closed or reset
    }
    this.#fail(new Error("Redis connection closed"));
  }

  #append(bytes: Uint8Array): void {
    const next = new Uint8Array(this.#buffer.length + bytes.length);
    next.set(this.#buffer);
    next.set(bytes, this.#buffer.length);
    this.#buffer = next;
  }

  #drain(): void {
    let offset = 0;
    while (offset < this.#buffer.length) {
      const parsed = parse(this.#buffer, offset);
      if (parsed === INCOMPLETE) break;
      offset = parsed.end;
      const waiter = this.#pending.shift();
      if (waiter !== undefined) waiter.resolve(parsed.value);
      else this.#onPush?.(parsed.value);
    }
    this.#buffer = this.#buffer.slice(offset);
  }

  #fail(error: Error): void {
    if (!this.#closed) {
      this.#closed = true;
      try {
        this.#conn.close();
      } catch {
        // already closed
      }
    }
    for (const waiter of this.#pending.splice(0)) waiter.reject(error);
  }
}

function encodeCommands(commands: readonly (readonly (string | Uint8Array)[])[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const push = (part: Uint8Array) => {
    parts.push(part);
    total += part.length;
  };
  for (const args of commands) {
    push(encoder.encode(`*${args.length}\r\n`));
    for (const arg of args) {
      const bytes = typeof arg === "string" ? encoder.encode(arg) : arg;
      push(encoder.encode(`$${bytes.length}\r\n`));
      push(bytes);
      push(encoder.encode("\r\n"));
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function lineEnd(buffer: Uint8Array, from: number): number {
  for (let i = from; i + 1 < buffer.length; i++) {
    if (buffer[i] === CR && buffer[i + 1] === 10) return i;
  }
  return -1;
}

function parse(
  buffer: Uint8Array,
  offset: number,
): { value: RespValue; end: number } | typeof INCOMPLETE {
  const eol = lineEnd(buffer, offset);
  if (eol < 0) return INCOMPLETE;
  const type = buffer[offset];
  const line = decoder.decode(buffer.subarray(offset + 1, eol));
  const next = eol + 2;
  switch (type) {
    case 43: // +
      return { value: new RespStatus(line), end: next };
    case 45: // -
      return { value: new RespError(line), end: next };
    case 58: // :
      return { value: Number(line), end: next };
    case 36: { // $
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buffer.length < next + length + 2) return INCOMPLETE;
      return { value: buffer.slice(next, next + length), end: next + length + 2 };
    }
    case 42: { // *
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, at);
        if (item === INCOMPLETE) return INCOMPLETE;
        items.push(item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`Unexpected RESP type byte ${type}`);
  }
}
