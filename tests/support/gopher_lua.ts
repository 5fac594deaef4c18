/**
 * Builds and starts `tests/support/gopher_lua/main.go`: a RESP proxy in front of a redis-server
 * that runs every Lua script on gopher-lua, the Go Lua VM Upstash runs scripts on, instead of
 * redis-server's own Lua. The binary is built once per version of its source (cached under the
 * temp directory by the source's SHA-256) with Debian's Go toolchain and gopher-lua package, in
 * GOPATH mode, offline. A missing toolchain fails loudly, naming the packages to install.
 *
 * @example
 * ```ts ignore
 * const redis = await startRedisServer();
 * const engine = await startGopherLua(redis.port);
 * const conn = await engine.connect(); // EVAL here runs on gopher-lua
 * ```
 *
 * @module
 */
import { RespConnection } from "./resp.ts";

/** Where Debian's golang-github-yuin-gopher-lua-dev puts its sources (a GOPATH). */
const GOPATH = "/usr/share/gocode";
const PACKAGES = "golang-go golang-github-yuin-gopher-lua-dev";
const MISSING_GO = "go was not found on PATH. The gopher-lua tests build a Go program: install " +
  `Debian's toolchain and gopher-lua with \`apt-get install ${PACKAGES}\` and run the tests again.`;
const MISSING_LUA =
  `${GOPATH}/src/github.com/yuin/gopher-lua was not found. The gopher-lua tests ` +
  `need Debian's gopher-lua sources: \`apt-get install ${PACKAGES}\`, then run the tests again.`;

const SOURCE = new URL("./gopher_lua/main.go", import.meta.url);

/** A running gopher-lua proxy. */
export interface GopherLua {
  /** The loopback port it listens on. */
  readonly port: number;
  /** Opens a new RESP connection to it. */
  connect(): Promise<RespConnection>;
  /** Stops it and waits for the exit. */
  stop(): Promise<void>;
  /** Stops it without waiting: for an `unload` listener. */
  stopNow(): void;
}

let built: Promise<string> | undefined;

/**
 * The path of the built binary: built on first use in this process, reused from the cache when
 * a binary of the same source is there.
 *
 * @returns The binary's path.
 */
export function gopherLuaBinary(): Promise<string> {
  built ??= build().catch((error) => {
    built = undefined;
    throw error;
  });
  return built;
}

async function build(): Promise<string> {
  const source = await Deno.readFile(SOURCE);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", source));
  const hash = Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
  const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
  const dir = `${tmp}/tool-boundary-gopher-lua`;
  const binary = `${dir}/gopher-lua-redis-${hash}`;
  if (await exists(binary)) return binary;
  try {
    await Deno.stat(`${GOPATH}/src/github.com/yuin/gopher-lua/state.go`);
  } catch (error) {
    throw new Error(MISSING_LUA, { cause: error });
  }
  await Deno.mkdir(dir, { recursive: true });
  // Test modules running in parallel would each build it: the first takes the lock, the others
  // wait for its binary (or for a stale lock, left by a killed build, to expire).
  const lock = `${binary}.lock`;
  const until = Date.now() + BUILD_WAIT_MS;
  while (true) {
    try {
      (await Deno.open(lock, { createNew: true, write: true })).close();
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (await exists(binary)) return binary;
    const age = Date.now() - ((await Deno.stat(lock).catch(() => null))?.mtime?.getTime() ?? 0);
    if (age > BUILD_WAIT_MS) await Deno.remove(lock).catch(() => {});
    if (Date.now() > until) throw new Error(`Timed out waiting for the build of ${binary}`);
  }
  try {
    if (await exists(binary)) return binary;
    return await compile(dir, binary);
  } finally {
    await Deno.remove(lock).catch(() => {});
  }
}

/** How long a build may take, and how long others wait for it. */
const BUILD_WAIT_MS = 120_000;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function compile(dir: string, binary: string): Promise<string> {
  // Written whole, then renamed into place: a binary at `binary` is always complete.
  const partial = `${binary}.${crypto.randomUUID()}.tmp`;
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("go", {
      args: ["build", "-o", partial, SOURCE.pathname],
      env: {
        GO111MODULE: "off",
        GOPATH,
        GOCACHE: `${dir}/gocache`,
        GOFLAGS: "",
        GOTOOLCHAIN: "local",
        CGO_ENABLED: "0",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new Error(MISSING_GO, { cause: error });
    throw error;
  }
  if (!output.success) {
    await Deno.remove(partial).catch(() => {});
    const text = new TextDecoder().decode(output.stderr);
    throw new Error(`go build of ${SOURCE.pathname} failed (needs ${PACKAGES}):\n${text}`);
  }
  await Deno.rename(partial, binary);
  return binary;
}

/**
 * Starts the proxy in front of the redis-server on `redisPort`, on a free loopback port.
 *
 * @param redisPort The redis-server's loopback port.
 * @returns The running proxy.
 */
export async function startGopherLua(redisPort: number): Promise<GopherLua> {
  const binary = await gopherLuaBinary();
  const child = new Deno.Command(binary, {
    args: ["-redis-port", String(redisPort)],
    // It exits when its standard input closes: it never outlives this process.
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const stdin = child.stdin.getWriter();
  const status = child.status;
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let port = 0;
  while (port === 0) {
    const { value, done } = await reader.read();
    if (done) {
      await stdin.close().catch(() => {});
      throw new Error(`gopher-lua-redis exited before listening: ${(await status).code}`);
    }
    text += value;
    const match = /^PORT (\d+)\n/.exec(text);
    if (match) port = Number(match[1]);
  }
  // Nothing more is printed; the pipe is let go so that it does not hold the process.
  await reader.cancel();
  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    stdin.close().catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
  };
  return {
    port,
    connect: () => RespConnection.connect(port),
    async stop() {
      stopNow();
      await status;
    },
    stopNow,
  };
}
