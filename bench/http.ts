/**
 * Figure 5: requests per second and latency of the Hono app under Deno on loopback, driven by
 * wrk, on the MemoryStore and on the UpstashStore (through the REST fixture), against a bare
 * Hono route doing the same JSON work. Each server runs in its own process; the modes take
 * turns, round after round, in one run. The servers start a run every 100 calls, and runs and
 * records expire after seconds (see _http_server.ts), so what a store holds stays the same from
 * round to round.
 *
 * Run: `deno task bench:http` (needs `wrk`: `apt-get install wrk`). `BENCH_SECONDS` per round
 * (default 10), `BENCH_ROUNDS` (default 3), `BENCH_CONNECTIONS` (default 16).
 *
 * @module
 */
import { AGENT_TOKEN, printTable, SMOKE } from "./_common.ts";
import { startBenchFixture } from "./_fixture.ts";

const SECONDS = SMOKE ? 2 : Number(Deno.env.get("BENCH_SECONDS") ?? 10);
const ROUNDS = SMOKE ? 1 : Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const CONNECTIONS = Number(Deno.env.get("BENCH_CONNECTIONS") ?? 16);
const MODES = ["bare", "memory", "upstash"] as const;

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!match) throw new Error(`Cannot read wrk latency ${text}`);
  const value = Number(match[1]);
  return match[2] === "us" ? value / 1000 : match[2] === "s" ? value * 1000 : value;
}

function parseWrk(output: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  const p50 = /^\s+50%\s+(\S+)/m.exec(output);
  const p99 = /^\s+99%\s+(\S+)/m.exec(output);
  if (!rps || !p50 || !p99) throw new Error(`Cannot read wrk output:\n${output}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socket = /Socket errors:.*?(\d+).*?(\d+).*?(\d+).*?(\d+)/.exec(output);
  const errors = Number(non2xx?.[1] ?? 0) +
    (socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0);
  return { rps: Number(rps[1]), p50: toMs(p50[1]!), p99: toMs(p99[1]!), errors };
}

async function startServer(mode: string, port: number, env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_http_server.ts", import.meta.url).pathname, mode, String(port)],
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${mode} server ended before it was ready`);
    text += value;
  }
  if (!text.startsWith("ready")) throw new Error(`${mode} server said ${text}`);
  reader.releaseLock();
  return {
    // The script names each call's run in the path (wrk_tool_call.lua).
    url: `http://127.0.0.1:${port}/`,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

async function wrk(url: string, tag: string, seconds: number): Promise<WrkResult> {
  const script = new URL("./wrk_tool_call.lua", import.meta.url).pathname;
  const output = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      "--latency",
      "-s",
      script,
      url,
      "--",
      AGENT_TOKEN,
      tag,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
  return parseWrk(text);
}

const fixture = await startBenchFixture();
const servers: Record<string, Awaited<ReturnType<typeof startServer>>> = {};
try {
  const env = { UPSTASH_REDIS_REST_URL: fixture.url, UPSTASH_REDIS_REST_TOKEN: "test-token" };
  for (const mode of MODES) servers[mode] = await startServer(mode, freePort(), env);
  // Warm up each server (JIT, connections, Lua scripts), untimed.
  for (const mode of MODES) await wrk(servers[mode]!.url, `warm${mode}`, SMOKE ? 1 : 2);

  const results: Record<string, WrkResult[]> = { bare: [], memory: [], upstash: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of MODES) {
      results[mode]!.push(await wrk(servers[mode]!.url, `r${round}${mode}`, SECONDS));
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const bareRps = median(results.bare!.map((r) => r.rps));
  console.log(
    `\nwrk -t1 -c${CONNECTIONS} -d${SECONDS}s, ${ROUNDS} round(s) per mode in turn; ` +
      "medians over rounds; 1 KiB raw; runs of 100 calls, records expire after 5 s; this " +
      "machine (2 shared cores: server, wrk, endpoint and redis-server all on them).\n",
  );
  printTable(
    ["server", "req/s", "p50 ms", "p99 ms", "req/s vs bare", "errors", "req/s per round"],
    MODES.map((mode) => {
      const rows = results[mode]!;
      const rps = median(rows.map((r) => r.rps));
      return [
        mode === "bare"
          ? "bare Hono route"
          : `createApp, ${mode === "memory" ? "MemoryStore" : "UpstashStore"}`,
        rps.toFixed(0),
        median(rows.map((r) => r.p50)).toFixed(2),
        median(rows.map((r) => r.p99)).toFixed(2),
        `${(rps / bareRps).toFixed(2)}x`,
        String(rows.reduce((sum, r) => sum + r.errors, 0)),
        rows.map((r) => r.rps.toFixed(0)).join(" / "),
      ];
    }),
  );
} finally {
  for (const server of Object.values(servers)) await server.stop();
  await fixture.stop();
}
