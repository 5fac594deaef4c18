/**
 * The Restate server (npm/package.json), installed by the tests themselves; workerd comes with
 * the runtime tests' npm folder (tests/runtime/npm).
 *
 * @module
 */
import { run } from "../runtime/process.ts";

/** This folder's npm/ directory. */
export const NPM_DIR: string = new URL("./npm/", import.meta.url).pathname;

let installed: Promise<string> | undefined;

/** Installs npm/package.json (a no-op when up to date), once per process. */
export function npmInstall(): Promise<string> {
  installed ??= run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: NPM_DIR,
    env: { SCARF_ANALYTICS: "false" },
  });
  return installed;
}
