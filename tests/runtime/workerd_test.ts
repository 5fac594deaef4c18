/**
 * The Cloudflare Workers entry, bundled, running in workerd (through miniflare, from Node): a whole
 * run over HTTP, the MCP route with SERVER_SECRET (the official client with a run token, and a run
 * token refused on another run), the MCP route's 404 without it, the JSON 500 without tokens, and
 * a whole run on UpstashStore through the Worker's own `UpstashRestClient` (workerd's `fetch`).
 */
import assert from "node:assert/strict";
import { generateLedgerKeys } from "../../src/mod.ts";
import { AGENT_TOKEN, HARNESS_TOKEN, ledgerRun, over, wholeRun } from "./flow.ts";
import { mcpOtherRun, mcpRun, mcpWithoutSecret, SERVER_SECRET } from "./mcp_flow.ts";
import { serveWorker } from "./setup.ts";
import { withSharedUpstashFixture } from "../support/upstash_fixture.ts";

Deno.test("workerd: the worker bundle serves a whole run on the memory store, no MCP without SERVER_SECRET", async () => {
  await serveWorker(
    "edge/cloudflare.ts",
    { AGENT_TOKEN, HARNESS_TOKEN },
    async (base) => {
      const { steps } = await wholeRun(over(base));
      console.log(`workerd: ${steps.join("; ")}`);
      await mcpWithoutSecret(base, AGENT_TOKEN, HARNESS_TOKEN);
    },
  );
});

Deno.test("workerd: with LEDGER_KEY the worker signs every record and run, and its export verifies", async () => {
  const keys = await generateLedgerKeys();
  const LEDGER_KEY = JSON.stringify(keys.privateKey);
  await serveWorker(
    "edge/cloudflare.ts",
    { AGENT_TOKEN, HARNESS_TOKEN, LEDGER_KEY },
    async (base) => {
      console.log(`workerd ${await ledgerRun(over(base), keys.publicKey)}`);
    },
  );
});

Deno.test("workerd: with SERVER_SECRET the worker serves MCP to the official client with a run token", async () => {
  await serveWorker(
    "edge/cloudflare.ts",
    { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET },
    async (base) => {
      console.log(`workerd MCP: ${(await mcpRun(base, HARNESS_TOKEN)).join("; ")}`);
      console.log(`workerd MCP: ${await mcpOtherRun(base, HARNESS_TOKEN)}`);
    },
  );
});

Deno.test("workerd: without tokens, or with a short SERVER_SECRET, every request fails closed with a JSON 500", async () => {
  const bindings = [{ AGENT_TOKEN }, { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET: "too-short" }];
  for (const env of bindings) {
    await serveWorker("edge/cloudflare.ts", env, async (base) => {
      for (const path of ["/healthz", "/v1/runs"]) {
        const res = await fetch(`${base}${path}`);
        assert.equal(res.status, 500);
        assert.deepEqual(await res.json(), {
          status: "ERROR",
          code: "INTERNAL_ERROR",
          message: "The server is not configured: set the AGENT_TOKEN and HARNESS_TOKEN secrets " +
            "(at least 16 characters each; SERVER_SECRET, when set, at least 32) (for wrangler " +
            "dev, in .dev.vars, see .dev.vars.example); the Worker log says more.",
        });
      }
    });
  }
});

Deno.test("workerd: with the UPSTASH_* bindings the worker keeps every record in Redis, through its UpstashRestClient", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const env = {
      AGENT_TOKEN,
      HARNESS_TOKEN,
      UPSTASH_REDIS_REST_URL: fixture.endpoint.url,
      UPSTASH_REDIS_REST_TOKEN: fixture.endpoint.token,
      UPSTASH_PREFIX: "workerd",
    };
    await serveWorker("edge/cloudflare.ts", env, async (base) => {
      const { runId, steps } = await wholeRun(over(base));
      console.log(`workerd on Upstash: ${steps.join("; ")}`);
      const keys = await fixture.direct(["KEYS", `workerd:{${runId}}:*`]) as string[];
      assert.ok(keys.includes(`workerd:{${runId}}:call:call_1`), keys.join(", "));
      // What went over the wire: the store's scripts, each request with the bearer token (the
      // endpoint refuses any other), and, after the first answer, its read-your-writes token.
      const log = fixture.endpoint.log;
      assert.ok(log.length >= 6, `${log.length} requests`);
      assert.ok(log.every((request) => /^eval(sha)?$/.test(request.commands[0]![0]!)));
      assert.ok(log.slice(1).every((request) => /^sync-\d+$/.test(request.syncToken ?? "")));
    });
  });
});
