/**
 * The Cloudflare Workers entry, bundled, running in workerd (through miniflare, from Node).
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, HARNESS_TOKEN, over, wholeRun } from "./flow.ts";
import { serveWorker } from "./setup.ts";

Deno.test("workerd: the worker bundle serves a whole run on the memory store", async () => {
  await serveWorker(
    "edge/cloudflare.ts",
    { AGENT_TOKEN, HARNESS_TOKEN },
    async (base) => {
      const { steps } = await wholeRun(over(base));
      console.log(`workerd: ${steps.join("; ")}`);
    },
  );
});

Deno.test("workerd: without tokens every request fails closed with a JSON 500", async () => {
  await serveWorker("edge/cloudflare.ts", { AGENT_TOKEN }, async (base) => {
    for (const path of ["/healthz", "/v1/runs"]) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 500);
      assert.deepEqual(await res.json(), {
        status: "ERROR",
        code: "INTERNAL_ERROR",
        message: "The server is not configured: set the AGENT_TOKEN and HARNESS_TOKEN secrets " +
          "(for wrangler dev, in .dev.vars, see .dev.vars.example); the Worker log says more.",
      });
    }
  });
});
