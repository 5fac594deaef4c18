// Serves a bundled worker in workerd through miniflare until stdin closes.
// Usage: node workerd.mjs <worker.js>; bindings come as JSON in the WORKER_BINDINGS variable.
// Prints one JSON line, {"url": "..."}, once the worker is ready.
import path from "node:path";
import process from "node:process";
import { Miniflare } from "miniflare";

if (!process.argv[2]) {
  throw new Error("Missing argument: the worker bundle path");
}
const scriptPath = path.resolve(process.argv[2]);
const mf = new Miniflare({
  modules: true,
  scriptPath,
  // Module paths must stay inside this root.
  modulesRoot: path.dirname(scriptPath),
  compatibilityDate: "2025-01-01",
  bindings: JSON.parse(process.env.WORKER_BINDINGS ?? "{}"),
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
