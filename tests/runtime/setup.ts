/**
 * What the runtime tests need, installed by themselves: the npm packages of npm/package.json
 * (miniflare with workerd, and Bun) and the bundles of the edge entry points. A missing tool or a
 * failed install fails the test; nothing is skipped.
 */
import { ROOT, run } from "./process.ts";

const HERE = new URL("./npm/", import.meta.url).pathname;

/** Installs the npm packages (a no-op when they are up to date) and returns `node_modules/.bin`. */
export async function npmBin(): Promise<string> {
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: HERE,
  });
  return `${HERE}node_modules/.bin`;
}

/**
 * Bundles an edge entry point into one JavaScript file with `deno bundle`.
 *
 * @param entry Path from the repository root, e.g. `edge/cloudflare.ts`.
 * @param dir Output folder.
 * @returns The bundle's path.
 */
export async function bundle(entry: string, dir: string): Promise<string> {
  const out = `${dir}/${entry.replaceAll("/", "_").replace(/\.ts$/, ".js")}`;
  await run(Deno.execPath(), [
    "bundle",
    "--platform",
    "browser",
    "-o",
    out,
    entry,
  ], { cwd: ROOT });
  return out;
}
