/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, from npm, under
 * Node 22 from npm) against the dev server's MCP route: the scenarios of what the route serves
 * (initialize, ping, tools/list) and DNS rebinding protection. The suite sends no Authorization
 * header, so it talks to a small front (`tests/support/conformance_npm/proxy.mjs`) that forwards
 * each request as it came, Host and Origin included, with the agent token added. The suite and
 * Node are installed by the test; a failed install or run fails it.
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, HARNESS_TOKEN } from "../runtime/flow.ts";
import { freePort, ROOT, run, start } from "../runtime/process.ts";

const HERE = `${ROOT}tests/support/conformance_npm/`;
const SUITE = `${HERE}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
/** Node 22 from npm (the suite needs it): its binary, run directly so that a stop reaches it. */
async function node22(): Promise<string> {
  const out = await run("npx", ["-y", "node@22", "-e", "console.log(process.execPath)"]);
  return out.trim().split("\n").at(-1)!;
}
const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

Deno.test("the official MCP conformance suite passes initialize, ping, tools-list and DNS rebinding protection against the dev server", async () => {
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: HERE });
  const node = await node22();
  assert.match(await run(node, ["--version"]), /^v22\./);
  const port = freePort();
  const front = freePort();
  const dev = start(
    Deno.execPath(),
    ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-run", "edge/dev.ts"],
    {
      cwd: ROOT,
      env: {
        AGENT_TOKEN,
        HARNESS_TOKEN,
        SERVER_SECRET: "",
        UPSTASH_REDIS_REST_URL: "",
        UPSTASH_REDIS_REST_TOKEN: "",
        PORT: String(port),
        // The suite's pages come from the front's origin.
        MCP_ALLOWED_ORIGINS: `http://localhost:${front}`,
      },
    },
  );
  let proxy;
  // The suite writes its results under the folder it runs in.
  const results = await Deno.makeTempDir({ prefix: "tb-conformance-" });
  try {
    await dev.waitFor(/dev server on http:\/\/127\.0\.0\.1:\d+/);
    const started = await fetch(`http://127.0.0.1:${port}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${HARNESS_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ ttlMs: 600_000 }),
    });
    assert.equal(started.status, 201);
    const { runId } = await started.json();
    proxy = start(node, [`${HERE}proxy.mjs`], {
      env: {
        TARGET: `http://127.0.0.1:${port}/v1/runs/${runId}/mcp`,
        TOKEN: AGENT_TOKEN,
        PORT: String(front),
      },
    });
    await proxy.waitFor(new RegExp(`proxy on ${front}\\b`));
    const url = `http://localhost:${front}/mcp`;
    for (const scenario of SCENARIOS) {
      const out = await new Deno.Command(node, {
        args: [SUITE, "server", "--url", url, "--scenario", scenario],
        cwd: results,
        stdin: "null",
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, `${scenario}:\n${text}`);
      console.log(`${scenario}: ${text.trim().split("\n").at(-1)}`);
      assert.doesNotMatch(text, /FAIL/, `${scenario}:\n${text}`);
    }
  } finally {
    await proxy?.stop();
    await dev.stop();
    await Deno.remove(results, { recursive: true });
  }
});
