// Serves workers in workerd through miniflare, with any of miniflare's options (several workers,
// Durable Objects, R2, persistence), until stdin closes.
// Usage: node miniflare.mjs; the options come as JSON in MINIFLARE_OPTIONS.
// Prints one JSON line, {"url": "..."}, once the workers are ready.
import process from "node:process";
import { createRequire } from "node:module";

// Loaded with require() so that `deno check tests/` does not try to resolve it: miniflare is an
// npm package of this folder's package.json, run by Node, not a dependency of the Deno project.
const { Miniflare } = createRequire(import.meta.url)("miniflare");

const options = JSON.parse(process.env.MINIFLARE_OPTIONS);
const mf = new Miniflare({ ...options, host: "127.0.0.1", port: 0 });
const url = await mf.ready;
process.stdout.write(JSON.stringify({ url: url.href }) + "\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await mf.dispose();
  process.exit(0);
});
