/**
 * Starts `_fixture_process.ts` (redis-server + the Upstash-compatible REST endpoint from
 * tests/support) in a child process and talks to it.
 *
 * @module
 */
import { Redis, type RedisConfigNodejs } from "@upstash/redis";
import { UpstashRestClient } from "../src/upstash/mod.ts";
import { percentile } from "./_common.ts";

/** A simulated round trip as set by {@linkcode BenchFixture.setRoundTrip}, and its check. */
export interface RoundTrip {
  /** The round trip asked for, ms. */
  configured: number;
  /** What the endpoint holds each answer, ms, to add `configured` to a request. */
  hold: number;
  /** PING p50 at `hold` minus PING p50 at 0 ms, as measured last: what a request pays more. */
  added: number;
}

/** The fixture as the benchmarks see it. */
export interface BenchFixture {
  /** The endpoint URL. */
  url: string;
  /** A new client with `@upstash/redis`'s defaults (as `Redis.fromEnv()` gives) and overrides. */
  createRedis(overrides?: Partial<RedisConfigNodejs>): Redis;
  /** A new `UpstashRestClient` (the store's own client) with its defaults. */
  createRest(): UpstashRestClient;
  /** Clears the endpoint's request counter and command log. */
  reset(): Promise<void>;
  /** HTTP requests the endpoint received since the last reset. */
  requests(): Promise<number>;
  /** Command names the endpoint ran since the last reset. */
  commands(): Promise<string[]>;
  /** Holds every answer of the endpoint for `ms` (exactly, see round_trip.ts); 0: none. */
  setDelay(ms: number): Promise<void>;
  /**
   * A simulated round trip of `ms`: the endpoint's hold, set so that a PING costs `ms` more
   * (p50) than at 0 ms. The hold alone is exact, but each request after an idle gap also pays
   * the machine's waking of the idle processes (about 0.5 to 1 ms on the shared 2-core machine,
   * none of it at 0 ms, where nothing idles), which a real round trip to a busy Upstash would not
   * add: so the hold is lowered by what was measured beyond `ms`, never raised above `ms`.
   */
  setRoundTrip(ms: number): Promise<RoundTrip>;
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
  const setDelay = async (ms: number) => {
    await ask(`delay ${ms}`);
  };
  const probe = new Redis({ url, token, enableTelemetry: false, enableAutoPipelining: false });
  return {
    url,
    createRedis: (overrides = {}) =>
      new Redis({ url, token, enableTelemetry: false, ...overrides }),
    createRest: () => new UpstashRestClient({ url, token }),
    reset: async () => {
      await ask("reset");
    },
    requests: async () => Number(await ask("requests")),
    setDelay,
    setRoundTrip: (ms) => calibrateRoundTrip(ms, setDelay, () => probe.ping()),
    commands: async () => JSON.parse(await ask("commands")) as string[],
    stop: async () => {
      await writer.close();
      reader.releaseLock();
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}

/**
 * Sets a simulated round trip of `ms`: the hold (`setHold`) under which a `ping` costs `ms` more
 * (p50) than at 0 ms, found in up to four passes of PINGs at 0 ms and at the hold, in alternating
 * blocks (so that the machine's load falls on both). The hold found stays set.
 *
 * @param ms The round trip, ms; 0 turns the delay off.
 * @param setHold Sets the endpoint's hold, ms.
 * @param ping One request through the endpoint.
 * @returns The hold, and what a PING paid more under it in the last pass.
 */
export async function calibrateRoundTrip(
  ms: number,
  setHold: (ms: number) => void | Promise<void>,
  ping: () => Promise<unknown>,
): Promise<RoundTrip> {
  const pings = async (count: number, into: number[] = []): Promise<number[]> => {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await ping();
      into.push(performance.now() - started);
    }
    return into;
  };
  const p50 = (samples: number[]) => percentile([...samples].sort((a, b) => a - b), 50);
  await setHold(0);
  if (!(ms > 0)) return { configured: 0, hold: 0, added: 0 };
  await pings(10);
  let hold = ms;
  let added = 0;
  for (let pass = 0;; pass++) {
    const base: number[] = [];
    const held: number[] = [];
    for (let block = 0; block < 4; block++) {
      await setHold(0);
      await pings(10, base);
      await setHold(hold);
      await pings(1);
      await pings(10, held);
    }
    added = p50(held) - p50(base);
    const off = added - ms;
    if (Math.abs(off) <= Math.max(0.05, ms * 0.02) || pass === 3) break;
    hold = Math.min(ms, Math.max(0, hold - off));
  }
  await setHold(hold);
  return { configured: ms, hold, added };
}
