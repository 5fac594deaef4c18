/**
 * Starts `_fixture_process.ts` (redis-server + the Upstash-compatible REST endpoint from
 * tests/support) in a child process and talks to it.
 *
 * @module
 */
import { Redis, type RedisConfigNodejs } from "@upstash/redis";

/** The fixture as the benchmarks see it. */
export interface BenchFixture {
  /** The endpoint URL. */
  url: string;
  /** A new client with `@upstash/redis`'s defaults (as `Redis.fromEnv()` gives) and overrides. */
  createRedis(overrides?: Partial<RedisConfigNodejs>): Redis;
  /** Clears the endpoint's request counter and command log. */
  reset(): Promise<void>;
  /** HTTP requests the endpoint received since the last reset. */
  requests(): Promise<number>;
  /** Command names the endpoint ran since the last reset. */
  commands(): Promise<string[]>;
  /** Delays every answer of the endpoint by `ms` (a simulated round trip); 0 turns it off. */
  setDelay(ms: number): Promise<void>;
  /** Stops the child (and with it redis-server). */
  stop(): Promise<void>;
}

/** Starts the fixture process and waits until its endpoint is up. */
export async function startBenchFixture(): Promise<BenchFixture> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_fixture_process.ts", import.meta.url).pathname],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const readLine = async (): Promise<string> => {
    for (;;) {
      const newline = buffered.indexOf("\n");
      if (newline !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        return line;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("The fixture process ended");
      buffered += value;
    }
  };
  const ask = async (command: string): Promise<string> => {
    await writer.write(new TextEncoder().encode(`${command}\n`));
    return await readLine();
  };
  const { url, token } = JSON.parse(await readLine()) as { url: string; token: string };
  return {
    url,
    createRedis: (overrides = {}) =>
      new Redis({ url, token, enableTelemetry: false, ...overrides }),
    reset: async () => {
      await ask("reset");
    },
    requests: async () => Number(await ask("requests")),
    setDelay: async (ms) => {
      await ask(`delay ${ms}`);
    },
    commands: async () => JSON.parse(await ask("commands")) as string[],
    stop: async () => {
      await writer.close();
      reader.releaseLock();
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}
