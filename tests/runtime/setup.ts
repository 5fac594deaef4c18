/**
 * What the runtime tests need, installed by themselves: the npm packages of npm/package.json
 * (miniflare with workerd, and Bun) and the bundles of the edge entry points and the examples. A
 * missing tool or a failed install fails the test; nothing is skipped.
 */
import assert from "node:assert/strict";
import { ROOT, run, start, WORKSPACE_CONFIG } from "./process.ts";

const HERE = new URL("./npm/", import.meta.url).pathname;
const WORKERD = `${HERE}workerd.mjs`;
const MINIFLARE = `${HERE}miniflare.mjs`;

/** Installs the npm packages (a no-op when they are up to date) and returns `node_modules/.bin`. */
export async function npmBin(): Promise<string> {
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: HERE,
  });
  return `${HERE}node_modules/.bin`;
}

/**
 * Bundles an entry point into one JavaScript file with `deno bundle`.
 *
 * @param entry Path from the repository root, e.g. `edge/cloudflare.ts`.
 * @param dir Output folder.
 * @param config A deno.json whose import map resolves the entry's imports, e.g.
 *   `examples/deno.json`, which maps `@tool-boundary/core` to this repository's source; by
 *   default the workspace's (the core, packages/ and the test dependencies).
 * @param external Imports left to the runtime, e.g. `cloudflare:*`.
 * @returns The bundle's path.
 */
export async function bundle(
  entry: string,
  dir: string,
  config?: string,
  external: readonly string[] = [],
): Promise<string> {
  const out = `${dir}/${entry.replaceAll("/", "_").replace(/\.ts$/, ".js")}`;
  await run(Deno.execPath(), [
    "bundle",
    ...(config === undefined ? WORKSPACE_CONFIG : ["--config", config]),
    ...external.flatMap((pattern) => ["--external", pattern]),
    "--platform",
    "browser",
    "-o",
    out,
    entry,
  ], { cwd: ROOT });
  return out;
}

/**
 * Bundles a Worker, serves it in workerd (through miniflare, from Node) with the given bindings,
 * and calls `fn` with its base URL (no trailing slash).
 *
 * @param entry The Worker's entry, from the repository root.
 * @param bindings The Worker's environment.
 * @param fn What to do while it serves.
 * @param config As for {@linkcode bundle}.
 */
export async function serveWorker(
  entry: string,
  bindings: Record<string, string>,
  fn: (base: string) => Promise<void>,
  config?: string,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tb-worker-" });
  try {
    await serveScript(await bundle(entry, dir, config), bindings, fn);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Serves a worker module that is already built in workerd (through miniflare, from Node) with
 * the given bindings, and calls `fn` with its base URL (no trailing slash).
 *
 * @param script The worker's module (other modules it imports sit beside it).
 * @param bindings The Worker's environment.
 * @param fn What to do while it serves.
 * @param workflows Workflow bindings, as miniflare's `workflows` option takes them.
 */
export async function serveScript(
  script: string,
  bindings: Record<string, string>,
  fn: (base: string) => Promise<void>,
  workflows: Record<string, { name: string; className: string }> = {},
): Promise<void> {
  await npmBin();
  const child = start("node", [WORKERD, script], {
    env: { WORKER_BINDINGS: JSON.stringify(bindings), WORKER_WORKFLOWS: JSON.stringify(workflows) },
    stdinStops: true,
  });
  try {
    const [, url] = await child.waitFor(/\{"url":"(http:[^"]+)\/"\}/);
    await fn(url!);
  } finally {
    const status = await child.stop();
    assert.equal(status.code, 0, child.output());
  }
}

/**
 * Serves workers in workerd through miniflare (from Node) with miniflare's own options (several
 * workers, Durable Objects, R2, persistence: `new Miniflare(options)`), and calls `fn` with the
 * first worker's base URL (no trailing slash).
 *
 * @param options Miniflare's options, as JSON-able data; the host and port are chosen here.
 * @param fn What to do while it serves.
 */
export async function serveMiniflare(
  options: Record<string, unknown>,
  fn: (base: string) => Promise<void>,
): Promise<void> {
  await npmBin();
  const child = start("node", [MINIFLARE], {
    env: { MINIFLARE_OPTIONS: JSON.stringify(options) },
    stdinStops: true,
  });
  try {
    const [, url] = await child.waitFor(/\{"url":"(http:[^"]+)\/"\}/);
    await fn(url!);
  } finally {
    const status = await child.stop();
    assert.equal(status.code, 0, child.output());
  }
}
