/**
 * The MCP route over real HTTP, driven by the official MCP SDK client: `deno serve edge/deno.ts`
 * (what Deno Deploy runs) with SERVER_SECRET, and the dev server with a generated secret.
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, HARNESS_TOKEN } from "../runtime/flow.ts";
import { mcpRun, SERVER_SECRET } from "../runtime/mcp_flow.ts";
import { ROOT, serveDeno, start } from "../runtime/process.ts";

const DENO = Deno.execPath();
const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };

Deno.test("deno serve edge/deno.ts with SERVER_SECRET serves MCP to the official client with a run token", async () => {
  const [child, base] = await serveDeno("edge/deno.ts", {
    AGENT_TOKEN,
    HARNESS_TOKEN,
    SERVER_SECRET,
    ...NO_UPSTASH,
  });
  try {
    console.log(`deno serve MCP: ${(await mcpRun(base, HARNESS_TOKEN)).join("; ")}`);
  } finally {
    await child.stop();
  }
});

Deno.test("the dev server generates a server secret, never prints it, and serves MCP", async () => {
  const child = start(
    DENO,
    ["run", "--allow-net", "--allow-env", "--allow-read", "edge/dev.ts"],
    {
      cwd: ROOT,
      env: { PORT: "0", AGENT_TOKEN: "", HARNESS_TOKEN: "", SERVER_SECRET: "", ...NO_UPSTASH },
    },
  );
  try {
    const [, base] = await child.waitFor(
      /dev server on (http:\/\/127\.0\.0\.1:\d+) \(loopback only\)/,
    );
    const [, harness] = await child.waitFor(/harness token \(generated for this process\): (\S+)/);
    await child.waitFor(/server secret \(generated for this process, not shown\)/);
    await mcpRun(base!, harness!);
    assert.doesNotMatch(child.output(), /dev-[0-9a-f]{32}dev-[0-9a-f]{32}/);
  } finally {
    await child.stop();
  }
});
