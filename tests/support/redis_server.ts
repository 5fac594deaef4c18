/**
 * Starts a throwaway redis-server from PATH on a free loopback port, without persistence, with
 * helpers to stop, pause (SIGSTOP), resume (SIGCONT), kill and restart it; optionally as a
 * replica of another (`--replicaof`).
 *
 * @module
 */
import { RespConnection, RespError, RespStatus } from "./resp.ts";

/** Options of {@linkcode startRedisServer}. */
export interface RedisServerOptions {
  /** A fixed port; a free one is picked when omitted. */
  port?: number;
  /** Start in cluster mode and assign every slot to this one node. @default false */
  cluster?: boolean;
  /** Start as a replica of the redis-server on this loopback port (`--replicaof`). */
  replicaOf?: number;
}

/** A running redis-server. */
export interface RedisServer {
  /** The loopback port it listens on. */
  readonly port: number;
  /** Whether it runs in cluster mode. */
  readonly cluster: boolean;
  /** Opens a new RESP connection to it. */
  connect(): Promise<RespConnection>;
  /** Pauses the process (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Resumes a paused process (SIGCONT). */
  resume(): void;
  /** Kills the process (SIGKILL) and waits for it to exit. */
  kill(): Promise<void>;
  /** Kills it if running, then starts a fresh, empty one on the same port. */
  restart(): Promise<void>;
  /** Stops it for good (SIGKILL; there is nothing to save) and removes its files. */
  stop(): Promise<void>;
  /**
   * What {@linkcode RedisServer.stop} does, without waiting for the exit: for an `unload`
   * listener, which cannot wait.
   */
  stopNow(): void;
}

const MISSING =
  "redis-server was not found on PATH. The Upstash store tests need it: install it with " +
  "`apt-get install redis-server` (Debian/Ubuntu) and run the tests again.";

/**
 * Starts a redis-server. Fails with a clear message (never skips) when it is not installed.
 *
 * @param options Port and cluster mode.
 * @returns The running server.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const cluster = options.cluster ?? false;
  const dir = await Deno.makeTempDir({ prefix: "tool-boundary-redis-" });
  let port = options.port ?? 0;
  let child: Deno.ChildProcess | undefined;
  let status: Promise<Deno.CommandStatus> | undefined;
  let paused = false;

  const spawn = async (): Promise<void> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const tryPort = options.port ?? (port !== 0 && attempt === 0 ? port : freePort());
      const args = [
        "--port",
        String(tryPort),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "no",
        "--daemonize",
        "no",
        "--dir",
        dir,
        "--loglevel",
        "warning",
        // A replica gets its first sync at once instead of after the 5 s default.
        "--repl-diskless-sync-delay",
        "0",
      ];
      if (options.replicaOf !== undefined) {
        args.push("--replicaof", "127.0.0.1", String(options.replicaOf));
      }
      if (cluster) {
        args.push(
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          `${dir}/nodes-${tryPort}.conf`,
        );
      }
      let process: Deno.ChildProcess;
      try {
        process = new Deno.Command("redis-server", {
          args,
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).spawn();
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) throw new Error(MISSING, { cause: error });
        throw error;
      }
      const exited = process.status;
      const ready = await waitReady(tryPort, exited);
      if (ready) {
        child = process;
        status = exited;
        port = tryPort;
        paused = false;
        if (cluster) await assignAllSlots(tryPort);
        return;
      }
      try {
        process.kill("SIGKILL");
      } catch {
        // already exited
      }
      await exited;
    }
    throw new Error("redis-server did not start on a free loopback port after 5 attempts");
  };

  const kill = async (): Promise<void> => {
    if (child === undefined || status === undefined) return;
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
    await status;
    child = undefined;
    status = undefined;
    paused = false;
  };

  const signal = (name: Deno.Signal): void => {
    if (child === undefined) throw new Error("redis-server is not running");
    child.kill(name);
  };

  await spawn();
  return {
    get port() {
      return port;
    },
    cluster,
    connect: () => RespConnection.connect(port),
    pause() {
      signal("SIGSTOP");
      paused = true;
    },
    resume() {
      signal("SIGCONT");
      paused = false;
    },
    kill,
    async restart() {
      await kill();
      await spawn();
    },
    async stop() {
      if (paused) signal("SIGCONT");
      await kill();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
    stopNow() {
      try {
        child?.kill("SIGKILL");
      } catch {
        // already exited
      }
      child = undefined;
      status = undefined;
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // already removed
      }
    },
  };
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

async function waitReady(port: number, exited: Promise<Deno.CommandStatus>): Promise<boolean> {
  let done = false;
  exited.then(() => (done = true));
  const until = Date.now() + 5_000;
  while (!done && Date.now() < until) {
    try {
      const conn = await RespConnection.connect(port);
      try {
        const reply = await conn.command(["PING"]);
        if (reply instanceof RespStatus && reply.text === "PONG") return true;
      } finally {
        await conn.close();
      }
    } catch {
      // not listening yet
    }
    // redis-server takes some 30 ms to listen: a short step keeps the wait near that.
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  return false;
}

async function assignAllSlots(port: number): Promise<void> {
  const conn = await RespConnection.connect(port);
  try {
    const added = await conn.command(["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
    if (added instanceof RespError) throw new Error(`CLUSTER ADDSLOTSRANGE failed: ${added.text}`);
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      const info = await conn.command(["CLUSTER", "INFO"]);
      if (
        info instanceof Uint8Array && new TextDecoder().decode(info).includes("cluster_state:ok")
      ) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("The single-node cluster did not reach cluster_state:ok");
  } finally {
    await conn.close();
  }
}
