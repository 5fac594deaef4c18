// Serves workers in workerd through miniflare until stdin closes.
// Usage: node miniflare.mjs; miniflare's options come as JSON in MINIFLARE_OPTIONS, and the folder
// whose node_modules holds miniflare (tests/runtime/npm/) in MINIFLARE_FROM.
// Prints one JSON line, {"url": "..."}, once the workers are ready.
import path from "node:path";
import process from "node:process";
import { createRequire } from "node:module";

// Loaded with require() from the runtime tests' npm folder, which installs it (deno check does
// not resolve it; Node runs this file, not Deno).
const { Miniflare } = createRequire(path.join(process.env.MINIFLARE_FROM, "package.json"))(
  "miniflare",
);

const options = JSON.parse(process.env.MINIFLARE_OPTIONS);
const mf = new Miniflare({ ...options, host: "127.0.0.1", port: 0 });
const url = await mf.ready;
process.stdout.write(JSON.stringify({ url: url.href }) + "\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await mf.dispose();
  process.exit(0);
});
