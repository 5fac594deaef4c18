/**
 * Figure 14: what a Worker carries and what its cold start costs. Bundles, the way
 * `deno task build:worker` does (`deno bundle --platform browser`, and with `--minify` as the
 * task now builds): edge/cloudflare.ts (the JSON API, the run inspector and the MCP route),
 * `bench/cold/worker_api.ts` (the same Worker without the inspector and the MCP route), and
 * `bench/cold/worker_minimal.ts` (a minimal Hono + `@upstash/redis` Worker: one route, a bearer
 * check, JSON). With `BENCH_BEFORE=<checkout>`, also that checkout's edge/cloudflare.ts and,
 * when it has one, its `bench/cold/worker_api.ts`.
 *
 * Size: bytes and gzip bytes of each bundle. Cold start, measured in Deno: each sample is a new
 * `deno run --no-code-cache` process (`bench/cold/first_request.ts`) that times, from before the
 * bundle's import to the last byte of its answer, the import and one tool call to the Worker's
 * `fetch` (memory store, no network; edge/ answers RUN_NOT_FOUND after the token, the body and
 * the store's begin, the minimal Worker answers at once). A round runs each bundle in turn and
 * then back in the reverse order, each round starting with the next bundle. The figures: the
 * median of each bundle's samples (and apart, of the import and of the request after it), its
 * ratio to the minimal Worker's, and the median of the round ratios (each bundle's mean of a round
 * over the minimal Worker's of the same round: paired, and a machine that slows down or speeds up
 * during a round moves both alike).
 *
 * Run: `deno task bench:cold` (`BENCH_N=<rounds>`, default 30: two samples per bundle each).
 *
 * @module
 */
import { printTable, SMOKE } from "./_common.ts";

const N = SMOKE ? 2 : Number(Deno.env.get("BENCH_N") ?? 30);
const ROOT = new URL("../", import.meta.url).pathname;
const DENO = Deno.execPath();

interface Bundle {
  name: string;
  /** Where to bundle from, and the entry from there. */
  cwd: string;
  entry: string;
  minify: boolean;
  path?: string;
  samples: number[];
  /** The import alone, of each sample. */
  imports: number[];
}

const before = Deno.env.get("BENCH_BEFORE");
const existsSync = (path: string): boolean => {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
};
const entries: [string, string, string][] = [
  ...(before === undefined ? [] : [
    [`before (${before}): edge/cloudflare.ts`, before, "edge/cloudflare.ts"],
    // Only when that checkout has it (it came with this figure).
    ...(existsSync(`${before}/bench/cold/worker_api.ts`)
      ? [[`before (${before}): the API alone`, before, "bench/cold/worker_api.ts"]]
      : []),
  ] as [string, string, string][]),
  ["edge/cloudflare.ts: API, inspector, MCP", ROOT, "edge/cloudflare.ts"],
  ["bench/cold/worker_api.ts: the API alone", ROOT, "bench/cold/worker_api.ts"],
  ["minimal Hono + @upstash/redis", ROOT, "bench/cold/worker_minimal.ts"],
];
const bundles: Bundle[] = [false, true].flatMap((minify) =>
  entries.map(([name, cwd, entry]) => ({
    name,
    cwd,
    entry,
    minify,
    samples: [],
    imports: [],
    rounds: [],
  }))
);

const dir = await Deno.makeTempDir({ prefix: "tb-cold-" });
try {
  for (const [i, bundle] of bundles.entries()) {
    bundle.path = `${dir}/${i}.js`;
    const built = await new Deno.Command(DENO, {
      args: [
        "bundle",
        "--platform",
        "browser",
        ...(bundle.minify ? ["--minify"] : []),
        "-o",
        bundle.path,
        bundle.entry,
      ],
      cwd: bundle.cwd,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!built.success) throw new Error(new TextDecoder().decode(built.stderr));
  }
  // A round runs every bundle, then every bundle again in the reverse order: each bundle's two
  // samples sit as far from the round's middle as each other's, so a machine that slows down or
  // speeds up during a round moves every bundle's mean of the round alike.
  for (let round = 0; round < N; round++) {
    const order = bundles.map((_, k) => bundles[(k + round) % bundles.length]!);
    for (const bundle of [...order, ...order.toReversed()]) {
      const out = await new Deno.Command(DENO, {
        args: ["run", "--no-code-cache", "-A", `${ROOT}bench/cold/first_request.ts`, bundle.path!],
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
      const { ms, importMs, status } = JSON.parse(new TextDecoder().decode(out.stdout));
      if (status >= 500) throw new Error(`${bundle.name}: first request answered ${status}`);
      bundle.samples.push(ms);
      bundle.imports.push(importMs);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  /** Each round's mean: a bundle's samples come two a round, in order. */
  const roundMeans = ({ samples }: Bundle) =>
    Array.from({ length: N }, (_, round) => (samples[2 * round]! + samples[2 * round + 1]!) / 2);
  const gzipped = async (path: string) =>
    (await new Response(
      (await Deno.open(path)).readable.pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer()).byteLength;
  const starts = 2 * N;
  console.log(
    `\nEach bundle ${starts} cold starts (new process, no code cache) in ${N} rounds, each in ` +
      "turn and back; median ms of import + one tool call to its fetch, and of the round ratios.\n",
  );
  const rows: string[][] = [];
  // Sizes against the first row: with BENCH_BEFORE, that checkout's Worker as its
  // build:worker made it (not minified).
  const firstBytes = (await Deno.stat(bundles[0]!.path!)).size;
  for (const minify of [false, true]) {
    const set = bundles.filter((bundle) => bundle.minify === minify);
    const floor = set[set.length - 1]!;
    const floorRounds = roundMeans(floor);
    for (const bundle of set) {
      const bytes = (await Deno.stat(bundle.path!)).size;
      rows.push([
        bundle.name,
        minify ? "yes" : "no",
        String(bytes),
        String(await gzipped(bundle.path!)),
        `${(bytes / firstBytes * 100).toFixed(0)}%`,
        median(bundle.samples).toFixed(1),
        median(bundle.imports).toFixed(1),
        median(bundle.samples.map((ms, i) => ms - bundle.imports[i]!)).toFixed(1),
        `${(median(bundle.samples) / median(floor.samples)).toFixed(2)}x`,
        // Paired: each round's mean over the minimal Worker's of the same round.
        `${median(roundMeans(bundle).map((ms, round) => ms / floorRounds[round]!)).toFixed(2)}x`,
      ]);
    }
  }
  printTable(
    [
      "bundle",
      "minified",
      "bytes",
      "gzip bytes",
      "of row 1",
      "cold ms",
      "import ms",
      "request ms",
      "/ minimal",
      "round / minimal",
    ],
    rows,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
