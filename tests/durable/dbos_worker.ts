/**
 * The DBOS worker of the durable test: a workflow whose steps call the tool through the boundary.
 * Run with Deno: `deno run --config deno.dev.json --allow-all tests/durable/dbos_worker.ts start|resume <workflowID>`,
 * with `DBOS_SYSTEM_DATABASE_URL`, `HARNESS_URL`, `UPSTASH_URL`, `UPSTASH_TOKEN` and (to start)
 * `LOOKUPS_INPUT` set. `start` starts the workflow; `resume` only launches DBOS, which recovers
 * the workflows a process that died left pending, and waits for this one. Prints
 * `{"result": ...}` once the workflow ends. The records live in the UpstashStore, outside this
 * process, which the test kills and starts again.
 *
 * @module
 */
import { DBOS } from "@dbos-inc/dbos-sdk";
import { Redis } from "@upstash/redis";
import { UpstashStore } from "@tool-boundary/core/upstash";
import { lookupsBoundary, type LookupsInput, lookupStep } from "./lookups.ts";

const HARNESS_URL = Deno.env.get("HARNESS_URL")!;
const boundary = lookupsBoundary(
  new UpstashStore({
    redis: new Redis({
      url: Deno.env.get("UPSTASH_URL")!,
      token: Deno.env.get("UPSTASH_TOKEN")!,
      enableAutoPipelining: false,
      enableTelemetry: false,
    }),
  }),
  HARNESS_URL,
);

const lookups = DBOS.registerWorkflow(async (input: LookupsInput) => {
  const run = await boundary.getRun(input.runId);
  if (run === null) throw new Error(`run ${input.runId} not found`);
  const values = [];
  for (const lookup of input.lookups) {
    values.push(
      await DBOS.runStep(
        // DBOS.workflowID: the tool call ID is the same on every attempt and after recovery.
        () => lookupStep(boundary, run, DBOS.workflowID!, lookup, HARNESS_URL, () => Deno.exit(1)),
        {
          name: `lookup-${lookup.key}`,
          retriesAllowed: true,
          maxAttempts: 20,
          intervalSeconds: 0.1,
          backoffRate: 1,
        },
      ),
    );
  }
  return values;
}, { name: "lookups" });

DBOS.setConfig({
  name: "tool-boundary-durable",
  systemDatabaseUrl: Deno.env.get("DBOS_SYSTEM_DATABASE_URL")!,
  logLevel: "error",
});
await DBOS.launch(); // recovers this executor's pending workflows
const [mode, workflowID] = Deno.args as [string, string];
const handle = mode === "start"
  ? await DBOS.startWorkflow(lookups, { workflowID })(JSON.parse(Deno.env.get("LOOKUPS_INPUT")!))
  : DBOS.retrieveWorkflow(workflowID);
console.log(JSON.stringify({ result: await handle.getResult() }));
await DBOS.shutdown();
