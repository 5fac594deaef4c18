/**
 * The Bun entry, bundled, running under Bun (npm package `bun`): a whole run over HTTP, the
 * refusal to start without tokens, the MCP route's 404 without SERVER_SECRET, and with it the MCP
 * route to the official client with a run token (refused on another run); and the MCP gateway's
 * Bun bundle in front of the everything server from npm.
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, HARNESS_TOKEN, over, wholeRun } from "./flow.ts";
import {
  EVERYTHING_UPSTREAM,
  gatewayRun,
  mcpOtherRun,
  mcpRun,
  mcpWithoutSecret,
  SERVER_SECRET,
} from "./mcp_flow.ts";
import { startEverything } from "../../packages/mcp/tests/upstreams.ts";
import { type Child, freePort, start } from "./process.ts";
import { bundle, npmBin } from "./setup.ts";

/** Bundles an entry (edge/bun.ts unless named), and calls `fn` with a starter of Bun on it. */
async function withBunBundle(
  fn: (bun: (env: Record<string, string>) => Child) => Promise<void>,
  source = "edge/bun.ts",
): Promise<void> {
  const bin = await npmBin();
  const dir = await Deno.makeTempDir({ prefix: "tb-bun-" });
  try {
    const entry = await bundle(source, dir);
    await fn((env) => start(`${bin}/bun`, [entry], { env }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Starts the bundle on a free loopback port and calls `fn` with its base URL. */
async function serving(
  bun: (env: Record<string, string>) => Child,
  env: Record<string, string>,
  fn: (base: string) => Promise<void>,
): Promise<void> {
  const port = freePort();
  const child = bun({ ...env, PORT: String(port), HOST: "127.0.0.1" });
  try {
    await child.waitFor(/memory store, listening on http:\/\/127\.0\.0\.1:\d+/);
    await fn(`http://127.0.0.1:${port}`);
  } finally {
    await child.stop();
  }
}

Deno.test("bun: the Bun bundle serves a whole run, and refuses to start without tokens", async () => {
  await withBunBundle(async (bun) => {
    const refused = bun({ AGENT_TOKEN, HARNESS_TOKEN: "" });
    const status = await refused.status;
    assert.notEqual(status.code, 0);
    assert.match(
      refused.output(),
      /Refusing to start: AGENT_TOKEN and HARNESS_TOKEN/,
    );

    await serving(bun, { AGENT_TOKEN, HARNESS_TOKEN }, async (base) => {
      const { steps } = await wholeRun(over(base));
      console.log(`bun: ${steps.join("; ")}`);
      await mcpWithoutSecret(base, AGENT_TOKEN, HARNESS_TOKEN);
    });
  });
});

Deno.test("bun: with SERVER_SECRET the Bun bundle serves MCP to the official client with a run token", async () => {
  await withBunBundle(async (bun) => {
    await serving(bun, { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET }, async (base) => {
      console.log(`bun MCP: ${(await mcpRun(base, HARNESS_TOKEN)).join("; ")}`);
      console.log(`bun MCP: ${await mcpOtherRun(base, HARNESS_TOKEN)}`);
    });
  });
});

Deno.test("bun: the gateway bundle serves an upstream's tools over its MCP route", async () => {
  const upstream = await startEverything();
  try {
    await withBunBundle(async (bun) => {
      const refused = bun({ AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET, MCP_UPSTREAMS: "" });
      assert.notEqual((await refused.status).code, 0);
      assert.match(refused.output(), /MCP_UPSTREAMS names no upstream MCP server/);
      await serving(
        bun,
        {
          AGENT_TOKEN,
          HARNESS_TOKEN,
          SERVER_SECRET,
          MCP_UPSTREAMS: EVERYTHING_UPSTREAM(upstream.url),
        },
        async (base) => {
          console.log(`bun gateway: ${(await gatewayRun(base, HARNESS_TOKEN)).join("; ")}`);
        },
      );
    }, "edge/gateway_bun.ts");
  } finally {
    await upstream.stop();
  }
});
