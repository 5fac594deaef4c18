/**
 * One call to get a real redis-server with an Upstash-compatible REST endpoint in front of it,
 * for every test that needs the Upstash store: conformance, HTTP, benchmarks, reliability. A test
 * that leaves the server as it found it can take the module's shared one instead, emptied for it
 * (`startSharedUpstashFixture`), which saves starting a redis-server per test.
 *
 * @example
 * ```ts ignore
 * const fixture = await startUpstashFixture();
 * try {
 *   const store = new UpstashStore({ redis: fixture.createRedis() });
 *   // ...
 * } finally {
 *   await fixture.stop();
 * }
 * ```
 *
 * @module
 */
import { Redis, type RedisConfigNodejs } from "@upstash/redis";
import { UpstashRestClient, type UpstashRestClientOptions } from "../../src/upstash/mod.ts";
import { type GopherLua, startGopherLua } from "./gopher_lua.ts";
import { type RedisServer, startRedisServer } from "./redis_server.ts";
import { type RespConnection, RespError } from "./resp.ts";
import { startUpstashEndpoint, type UpstashEndpoint } from "./upstash_endpoint.ts";

/** Options of {@linkcode startUpstashFixture}. */
export interface UpstashFixtureOptions {
  /** Run redis-server as a single-node cluster owning every slot. @default false */
  cluster?: boolean;
  /** The endpoint's bearer token. @default "test-token" */
  token?: string;
  /** The endpoint's max request size in bytes. @default 10485760, Upstash's */
  maxRequestBytes?: number;
  /**
   * What runs the scripts: redis-server's own Lua, or gopher-lua (the Go Lua VM Upstash runs
   * scripts on), through `tests/support/gopher_lua/main.go` between the endpoint and
   * redis-server. `direct()`, `monitor()` and `server` reach redis-server itself either way.
   * @default "redis"
   */
  engine?: ScriptEngine;
}

/** What runs the scripts a fixture's endpoint passes on: see `UpstashFixtureOptions.engine`. */
export type ScriptEngine = "redis" | "gopher-lua";

/** A redis-server, the REST endpoint in front of it, and ways to talk to both. */
export interface UpstashFixture {
  /** The redis-server process (pause, resume, kill, restart). */
  readonly server: RedisServer;
  /** The REST endpoint (counters, command log, fault injection). */
  readonly endpoint: UpstashEndpoint;
  /**
   * A new `@upstash/redis` client pointed at the endpoint, with the client's defaults
   * (retries, base64 responses, automatic deserialization, auto-pipelining) unless overridden.
   */
  createRedis(overrides?: Partial<RedisConfigNodejs>): Redis;
  /** The store's own small client (`UpstashRestClient`) pointed at the endpoint. */
  createRest(retry?: UpstashRestClientOptions["retry"]): UpstashRestClient;
  /** Runs one command on redis-server directly (not through the endpoint, not counted). */
  direct(args: readonly string[]): Promise<unknown>;
  /**
   * Records every command redis-server runs (also those inside Lua scripts) until the returned
   * function is called, which resolves to the lines seen, e.g.
   * `1700000000.123456 [0 lua] "HSET" "k" ...`.
   */
  monitor(): Promise<() => Promise<string[]>>;
  /** Stops the endpoint and redis-server. */
  stop(): Promise<void>;
}

/**
 * Starts redis-server on a free loopback port and the REST endpoint in front of it.
 *
 * @param options Cluster mode and token.
 * @returns The fixture; call `stop()` when done.
 */
export async function startUpstashFixture(
  options: UpstashFixtureOptions = {},
): Promise<UpstashFixture> {
  const server = await startRedisServer({ cluster: options.cluster ?? false });
  if (options.engine !== "gopher-lua") {
    return fixtureOn(server, options, () => server.connect(), () => server.stop());
  }
  let engine: GopherLua;
  try {
    engine = await startGopherLua(server.port);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return fixtureOn(server, options, () => engine.connect(), async () => {
    await engine.stop();
    await server.stop();
  });
}

/** Options of {@linkcode startSharedUpstashFixture}: those of the endpoint. */
export type SharedUpstashFixtureOptions = Omit<UpstashFixtureOptions, "cluster">;

/** The test module's shared redis-server, and whether a fixture holds it now. */
interface Shared {
  server: RedisServer;
  /** The connection that empties it for each fixture. */
  control: RespConnection;
  /** Its settings as started, which no fixture may leave changed. */
  settings: string;
  held: boolean;
  /** The gopher-lua proxy in front of it, started by the first fixture that asks for it. */
  gopherLua?: Promise<GopherLua>;
}

let shared: Promise<Shared> | undefined;

/**
 * Like {@linkcode startUpstashFixture}, on one redis-server per test module instead of a new one
 * per call: the first call starts it, the module's `unload` stops it. Each fixture gets it empty,
 * as a fresh one would be: every other client disconnected, no keys in any database, no scripts
 * or functions; and its own endpoint and clients. One fixture holds it at a time: a call while
 * another fixture is open starts a redis-server of its own, as {@linkcode startUpstashFixture}
 * does.
 *
 * For tests that reach redis-server through the endpoint, `direct()` and `monitor()` only: the
 * shared server cannot be paused, killed or restarted (`server` refuses those), and a fixture that
 * leaves its settings changed (`CONFIG SET`, `ACL SETUSER`) fails its `stop()`, and the server is
 * replaced for the next one.
 *
 * @param options The endpoint's token and request size limit.
 * @returns The fixture; call `stop()` when done.
 */
export async function startSharedUpstashFixture(
  options: SharedUpstashFixtureOptions = {},
): Promise<UpstashFixture> {
  shared ??= startShared().catch((error) => {
    shared = undefined;
    throw error;
  });
  const base = await shared;
  if (base.held) return startUpstashFixture(options);
  base.held = true;
  let connect: () => Promise<RespConnection>;
  try {
    await empty(base.control);
    if (options.engine === "gopher-lua") {
      const engine = await gopherLuaOf(base);
      // Its scripts too: a fresh server has none.
      const conn = await engine.connect();
      try {
        const reply = await conn.command(["SCRIPT", "FLUSH"]);
        if (reply instanceof RespError) throw new Error(`SCRIPT FLUSH failed: ${reply.text}`);
      } finally {
        await conn.close();
      }
      connect = () => engine.connect();
    } else {
      connect = () => base.server.connect();
    }
  } catch (error) {
    base.held = false;
    throw error;
  }
  let released = false;
  return fixtureOn(sharedView(base.server), options, connect, async () => {
    // A second stop() must not release the server again: another fixture may hold it by then.
    if (released) return;
    released = true;
    if (await settingsOf(base.control) !== base.settings) {
      shared = undefined;
      await base.server.stop();
      throw new Error(
        "The test left the shared redis-server's settings changed (CONFIG SET, ACL): a test " +
          "that changes them needs a redis-server of its own, from startUpstashFixture()",
      );
    }
    base.held = false;
  });
}

/**
 * Runs `fn` with a fixture on the module's shared redis-server and stops it afterwards, whatever
 * `fn` does.
 *
 * @param fn What to do with it.
 * @param options As for {@linkcode startSharedUpstashFixture}.
 */
export function withSharedUpstashFixture(
  fn: (fixture: UpstashFixture) => Promise<void>,
  options: SharedUpstashFixtureOptions = {},
): Promise<void> {
  return using(startSharedUpstashFixture(options), fn);
}

/** The shared server's gopher-lua proxy, started once per module and stopped at `unload`. */
function gopherLuaOf(base: Shared): Promise<GopherLua> {
  base.gopherLua ??= startGopherLua(base.server.port).then((engine) => {
    globalThis.addEventListener("unload", () => engine.stopNow());
    return engine;
  }).catch((error) => {
    delete base.gopherLua;
    throw error;
  });
  return base.gopherLua;
}

async function startShared(): Promise<Shared> {
  const server = await startRedisServer();
  try {
    const control = await server.connect();
    // An unload listener cannot wait: the server is killed, its connections go with it.
    globalThis.addEventListener("unload", () => server.stopNow());
    return { server, control, settings: await settingsOf(control), held: false };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** Every setting (`CONFIG GET *`) and user (`ACL LIST`), as one text. */
async function settingsOf(control: RespConnection): Promise<string> {
  const [config, users] = (await control.commands([["CONFIG", "GET", "*"], ["ACL", "LIST"]]))
    .map(fromResp) as [string[], string[]];
  const pairs: string[] = [];
  for (let i = 0; i < config.length; i += 2) pairs.push(`${config[i]} ${config[i + 1]}`);
  return JSON.stringify([pairs.sort(), users]);
}

/**
 * Leaves the server as a fresh one: killing every other connection first means no command of an
 * earlier fixture can run after the flush (redis-server runs one command at a time, and a killed
 * client's unread commands never run).
 */
async function empty(control: RespConnection): Promise<void> {
  for (
    const command of [
      ["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"],
      ["CLIENT", "KILL", "TYPE", "pubsub", "SKIPME", "yes"],
      ["FLUSHALL", "SYNC"],
      ["SCRIPT", "FLUSH", "SYNC"],
      ["FUNCTION", "FLUSH", "SYNC"],
    ]
  ) {
    const reply = await control.command(command);
    if (reply instanceof RespError) {
      throw new Error(`${command.join(" ")} failed on the shared redis-server: ${reply.text}`);
    }
  }
}

/** The shared server as a fixture sees it: connections yes, its process no. */
function sharedView(server: RedisServer): RedisServer {
  const refuse = (): never => {
    throw new Error(
      "The shared redis-server cannot be paused, killed or restarted: use startUpstashFixture()",
    );
  };
  return {
    get port() {
      return server.port;
    },
    cluster: false,
    connect: () => server.connect(),
    pause: refuse,
    resume: refuse,
    kill: () => Promise.resolve().then(refuse),
    restart: () => Promise.resolve().then(refuse),
    stop: () => Promise.resolve().then(refuse),
    stopNow: refuse,
  };
}

/**
 * A fixture on `server` with its own endpoint, which reaches the script engine with `connect`;
 * `release` runs once all of it is closed.
 */
function fixtureOn(
  server: RedisServer,
  options: SharedUpstashFixtureOptions,
  connect: () => Promise<RespConnection>,
  release: () => Promise<void>,
): UpstashFixture {
  const endpoint = startUpstashEndpoint({
    connectRedis: connect,
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.maxRequestBytes === undefined ? {} : { maxRequestBytes: options.maxRequestBytes }),
  });
  let directConn: RespConnection | undefined;
  const monitors = new Set<RespConnection>();
  return {
    server,
    endpoint,
    createRedis: (overrides = {}) =>
      new Redis({ url: endpoint.url, token: endpoint.token, enableTelemetry: false, ...overrides }),
    createRest: (retry) =>
      new UpstashRestClient({
        url: endpoint.url,
        token: endpoint.token,
        ...(retry === undefined ? {} : { retry }),
      }),
    async direct(args) {
      if (directConn === undefined || directConn.closed) directConn = await server.connect();
      return fromResp(await directConn.command(args));
    },
    async monitor() {
      const lines: string[] = [];
      const conn = await server.connect();
      monitors.add(conn);
      await conn.monitor((line) => lines.push(line));
      return async () => {
        // An ECHO through another connection marks the end of what this monitor must have seen.
        const marker = `monitor-end-${crypto.randomUUID()}`;
        const probe = await server.connect();
        await probe.command(["ECHO", marker]);
        await probe.close();
        const until = Date.now() + 2_000;
        while (!lines.some((line) => line.includes(marker)) && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        monitors.delete(conn);
        await conn.close();
        return lines.filter((line) => !line.includes(marker));
      };
    },
    async stop() {
      await endpoint.stop();
      await directConn?.close();
      for (const conn of monitors) await conn.close();
      await release();
    },
  };
}

function fromResp(value: unknown): unknown {
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (value instanceof RespError) throw new Error(value.text);
  if (Array.isArray(value)) return value.map(fromResp);
  if (value !== null && typeof value === "object" && "text" in value) return value.text;
  return value;
}

/**
 * Runs `fn` with a fresh fixture and stops it afterwards, whatever `fn` does.
 *
 * @param fn What to do with it.
 * @param options As for {@linkcode startUpstashFixture}.
 */
export function withUpstashFixture(
  fn: (fixture: UpstashFixture) => Promise<void>,
  options: UpstashFixtureOptions = {},
): Promise<void> {
  return using(startUpstashFixture(options), fn);
}

async function using(
  started: Promise<UpstashFixture>,
  fn: (fixture: UpstashFixture) => Promise<void>,
): Promise<void> {
  const fixture = await started;
  try {
    await fn(fixture);
  } finally {
    await fixture.stop();
  }
}
