/**
 * A new user's first `deno task dev`: in a copy of this tree (its committed and new files, as a
 * clone has them) with an empty Deno cache, the npm packages and megabytes it fetches and the
 * seconds until the dev server's first answer. The Deno binary itself is the one running this.
 *
 * With `BENCH_TASK=dev:gateway`, a first `task dev:gateway` instead, with MCP_UPSTREAMS naming
 * one stdio upstream (the MCP memory server from npm, installed by the tests' support first).
 *
 * Run: `deno task bench:cold-dev` (it needs the npm registry).
 *
 * @module
 */
import { freePort } from "../tests/runtime/process.ts";
import { serverScript } from "../tests/support/mcp_upstreams.ts";

const task = Deno.env.get("BENCH_TASK") ?? "dev";
if (task !== "dev" && task !== "dev:gateway") throw new Error(`BENCH_TASK: no task ${task}`);
const memory = await Deno.makeTempDir({ prefix: "tb-cold-memory-" });
const upstreams = task === "dev" ? {} : {
  MCP_UPSTREAMS: JSON.stringify([{
    command: "node",
    args: [await serverScript("server-memory")],
    env: { MEMORY_FILE_PATH: `${memory}/memory.jsonl` },
    trusted: true,
  }]),
};

const root = new URL("../", import.meta.url).pathname;
const copy = await Deno.makeTempDir({ prefix: "tb-cold-" });
const cache = await Deno.makeTempDir({ prefix: "tb-cold-cache-" });

/** The bytes of every file under `dir`. */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) total += await sizeOf(path);
    else if (entry.isFile) total += (await Deno.stat(path)).size;
  }
  return total;
}

try {
  const files = await new Deno.Command("git", {
    args: ["ls-files", "-co", "--exclude-standard", "-z"],
    cwd: root,
    stdout: "piped",
  }).output();
  for (const file of new TextDecoder().decode(files.stdout).split("\0").filter(Boolean)) {
    const target = `${copy}/${file}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    await Deno.copyFile(`${root}${file}`, target).catch(() => {}); // deleted, not yet committed
  }
  const port = freePort();
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", task],
    cwd: copy,
    env: { DENO_DIR: cache, PORT: String(port), NO_COLOR: "1", ...upstreams },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output: string[] = [];
  const decoder = new TextDecoder();
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output.push(decoder.decode(chunk));
  };
  const reading = Promise.all([read(child.stdout), read(child.stderr)]);
  let answeredAfter = NaN;
  while (performance.now() - started < 180_000) {
    const answer = await fetch(`http://127.0.0.1:${port}/`).catch(() => null);
    if (answer !== null) {
      await answer.body?.cancel();
      answeredAfter = (performance.now() - started) / 1000;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill("SIGTERM");
  await child.status;
  await reading;
  const npm = `${cache}/npm/registry.npmjs.org`;
  const packages = [...Deno.readDirSync(npm)].flatMap((entry) =>
    entry.name.startsWith("@")
      ? [...Deno.readDirSync(`${npm}/${entry.name}`)].map((inner) => `${entry.name}/${inner.name}`)
      : [entry.name]
  );
  const tarballs = output.join("").match(/Download \S+\.tgz/g)?.length ?? 0;
  console.log(`cold task ${task}: first answer after ${answeredAfter.toFixed(1)} s`);
  console.log(
    `npm: ${tarballs} tarballs, ${packages.length} packages, ` +
      `${((await sizeOf(`${cache}/npm`)) / 2 ** 20).toFixed(1)} MiB in the cache`,
  );
  console.log(`packages: ${packages.sort().join(", ")}`);
} finally {
  await Deno.remove(copy, { recursive: true });
  await Deno.remove(cache, { recursive: true });
  await Deno.remove(memory, { recursive: true });
}
