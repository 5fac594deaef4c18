/**
 * The MCP gateway's Workers entry (edge/gateway_cloudflare.ts), bundled, running in workerd
 * (through miniflare, from Node) in front of the everything server from npm on loopback: the
 * official client reaches the upstream's tools through the gateway's MCP route, each call over a
 * connection of its own request; an upstream that cannot be reached, or missing bindings, or an
 * upstream with a command (stdio), answer the JSON 500, and the next request builds again.
 */
import assert from "node:assert/strict";
import { startEverything } from "../support/mcp_upstreams.ts";
import { AGENT_TOKEN, HARNESS_TOKEN } from "./flow.ts";
import { EVERYTHING_UPSTREAM, gatewayRun, SERVER_SECRET } from "./mcp_flow.ts";
import { freePort } from "./process.ts";
import { serveWorker } from "./setup.ts";

const ENTRY = "edge/gateway_cloudflare.ts";

const bindings = (url: string) => ({
  AGENT_TOKEN,
  HARNESS_TOKEN,
  SERVER_SECRET,
  MCP_UPSTREAMS: EVERYTHING_UPSTREAM(url),
});

const refusal = (message: string) => ({ status: "ERROR", code: "INTERNAL_ERROR", message });

const UNREACHABLE = refusal(
  "The gateway could not reach the upstream MCP servers of MCP_UPSTREAMS: check their url and " +
    "headers; the next request tries again, and the Worker log says more.",
);

const NOT_CONFIGURED = refusal(
  "The gateway is not configured: set the AGENT_TOKEN, HARNESS_TOKEN and SERVER_SECRET secrets " +
    "and MCP_UPSTREAMS (for wrangler dev, in .dev.vars); the Worker log says more.",
);

Deno.test("workerd: the gateway worker serves an upstream's tools, connecting per request", async () => {
  const upstream = await startEverything();
  try {
    await serveWorker(ENTRY, bindings(upstream.url), async (base) => {
      // The first requests of the isolate, at once: both wait for the one build.
      const first = await Promise.all([1, 2, 3].map(() => fetch(`${base}/healthz`)));
      for (const res of first) assert.equal(res.status, 200, await res.text());
      console.log(`workerd gateway: ${(await gatewayRun(base, HARNESS_TOKEN)).join("; ")}`);
    });
    // Every per-request connection ended its upstream session: none is left open there.
    const log = upstream.output();
    const opened = log.match(/Session initialized with ID: (\S+)/g)?.length ?? 0;
    const ended = log.match(/Received session termination request for session/g)?.length ?? 0;
    assert.ok(opened >= 4, log); // the listing, the two calls, the structured one at least
    assert.equal(ended, opened, "one DELETE per session");
  } finally {
    await upstream.stop();
  }
});

Deno.test("workerd: an unreachable upstream gets the JSON 500, and a later request builds again", async () => {
  const port = freePort();
  await serveWorker(ENTRY, bindings(`http://127.0.0.1:${port}/mcp`), async (base) => {
    // Nothing listens there: every request fails closed, and the worker keeps answering.
    for (const path of ["/healthz", "/v1/runs", "/healthz"]) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 500, path);
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.deepEqual(await res.json(), UNREACHABLE);
    }
    // The failure was not kept: once the upstream is up, the next request builds the gateway.
    const upstream = await startEverything(port);
    try {
      console.log(
        `workerd gateway, upstream back: ${(await gatewayRun(base, HARNESS_TOKEN)).join("; ")}`,
      );
    } finally {
      await upstream.stop();
    }
  });
});

Deno.test("workerd: the gateway worker without its bindings fails closed with a JSON 500", async () => {
  const cases: Record<string, string>[] = [
    // No upstreams: a gateway with no tools is a misconfiguration, not an empty gateway.
    { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET },
    { AGENT_TOKEN, HARNESS_TOKEN, SERVER_SECRET, MCP_UPSTREAMS: "[{}]" },
    // A stdio upstream: a Worker cannot run a process, so it is a configuration error.
    {
      AGENT_TOKEN,
      HARNESS_TOKEN,
      SERVER_SECRET,
      MCP_UPSTREAMS: JSON.stringify([{ command: "node", args: ["server.js"], trusted: true }]),
    },
    // No harness token, and an upstream that would refuse: the bindings are checked first.
    {
      AGENT_TOKEN,
      SERVER_SECRET,
      MCP_UPSTREAMS: EVERYTHING_UPSTREAM(`http://127.0.0.1:${freePort()}/`),
    },
  ];
  for (const env of cases) {
    await serveWorker(ENTRY, env, async (base) => {
      for (const path of ["/healthz", "/v1/runs"]) {
        const res = await fetch(`${base}${path}`);
        assert.equal(res.status, 500, `${path} with ${Object.keys(env).join(", ")}`);
        assert.deepEqual(await res.json(), NOT_CONFIGURED);
      }
    });
  }
});
