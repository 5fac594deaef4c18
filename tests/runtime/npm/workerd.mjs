// Serves a bundled worker in workerd through miniflare until stdin closes.
// Usage: node workerd.mjs <worker.js>; bindings come as JSON in the WORKER_BINDINGS variable, and
// Workflow bindings (miniflare's `workflows` option) as JSON in WORKER_WORKFLOWS.
// Prints one JSON line, {"url": "..."}, once the worker is ready.
import path from "node:path";
import process from "node:process";
import { createRequire } from "node:module";

// Loaded with require() so that `deno check tests/` does not try to resolve it: miniflare is an
// npm package of this folder's package.json, run by Node, not a dependency of the Deno project.
const { Miniflare } = createRequire(import.meta.url)("miniflare");

if (!process.argv[2]) {
  throw new Error("Missing argument: the worker bundle path");
}
const scriptPath = path.resolve(process.argv[2]);
const mf = new Miniflare({
  modules: true,
  scriptPath,
  // Module paths must stay inside this root.
  modulesRoot: path.dirname(scriptPath),
  // A worker may be an entry module around a bundle (a Workflow class around the bundled code).
  modulesRules: [{ type: "ESModule", include: ["**/*.js", "**/*.mjs"] }],
  compatibilityDate: "2025-01-01",
  bindings: JSON.parse(process.env.WORKER_BINDINGS ?? "{}"),
  workflows: JSON.parse(process.env.WORKER_WORKFLOWS ?? "{}"),
  host: "127.0.0.1",
  port: 0,
});
const url = await mf.ready;
process.stdout.write(JSON.stringify({ url: url.href }) + "\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await mf.dispose();
  process.exit(0);
});
