/**
 * DBOS (`@dbos-inc/dbos-sdk` under Deno) on a PostgreSQL cluster the test starts: a workflow's
 * steps call the tool through the boundary, on the UpstashStore (outside the worker's process).
 * The first attempt of each step dies at another point: the process exits before the call, is
 * killed while the tool runs (the record stays PROJECTING for good: settled by a probe), exits
 * after the call returned; or the step throws while the tool runs and the process lives on (the
 * step's retries back off until the record completes). DBOS recovers the pending workflow when a
 * new process launches, and retries the step; each tool runs once per call.
 */
import assert from "node:assert/strict";
import { UpstashStore } from "@tool-boundary/core/upstash";
import { type Child, start, WORKSPACE_CONFIG } from "../runtime/process.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";
import { assertCrashScenario, type Outcome, outcomeOf, startHarness } from "./harness.ts";
import { lookupsBoundary, type LookupsInput } from "./lookups.ts";
import { startPostgres } from "./postgres.ts";

const WORKER = new URL("./dbos_worker.ts", import.meta.url).pathname;

Deno.test("DBOS: every step's tool runs once across process deaths, recovery and step retries", async () => {
  const postgres = await startPostgres();
  const fixture = await startUpstashFixture();
  let worker: Child | undefined;
  // Kills the worker while the tool of a `kill-during` step runs (SIGTERM: Deno has no handler
  // for it here, so the process ends at once, its pending call with it).
  const harness = startHarness(async () => {
    await worker?.stop();
  });
  try {
    const env = {
      DBOS_SYSTEM_DATABASE_URL: postgres.url("tool_boundary_durable"),
      HARNESS_URL: harness.url,
      UPSTASH_URL: fixture.endpoint.url,
      UPSTASH_TOKEN: fixture.endpoint.token,
    };
    const boundary = lookupsBoundary(
      new UpstashStore({ redis: fixture.createRedis() }),
      harness.url,
    );
    const runWorkflow = async (lookups: LookupsInput["lookups"]): Promise<Outcome> => {
      const runId = `wf-${crypto.randomUUID()}`;
      await boundary.startRun({ runId, ttlMs: 120_000, budget: { calls: 20 } });
      let values;
      // A process that died leaves the workflow pending: the next one's launch recovers it.
      for (let process = 0; values === undefined; process++) {
        assert.ok(process < 8, "the workflow ends within 8 worker processes");
        worker = start(Deno.execPath(), [
          "run",
          ...WORKSPACE_CONFIG,
          "--allow-all",
          WORKER,
          process === 0 ? "start" : "resume",
          runId,
        ], {
          env: { ...env, LOOKUPS_INPUT: JSON.stringify({ runId, lookups }) },
        });
        const status = await worker.status;
        const printed = worker.output().match(/^\{"result":.*$/m);
        if (status.success) values = JSON.parse(printed![0]).result;
      }
      return await outcomeOf(boundary, runId, values);
    };

    await assertCrashScenario(harness, runWorkflow);
  } finally {
    await worker?.stop();
    await harness.stop();
    await fixture.stop();
    await postgres.stop();
  }
});
