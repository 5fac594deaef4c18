/**
 * The Restate service of the durable test: a workflow whose `ctx.run` steps call the tool through
 * the boundary. Run with Deno: `deno run --config deno.dev.json --allow-all tests/durable/restate_service.ts <port>`,
 * with `HARNESS_URL`, `UPSTASH_URL` and `UPSTASH_TOKEN` set. The records live in the UpstashStore,
 * outside this process, which the test kills and starts again.
 *
 * @module
 */
import * as restate from "@restatedev/restate-sdk";
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

const lookups = restate.workflow({
  name: "lookups",
  handlers: {
    run: async (ctx: restate.WorkflowContext, input: LookupsInput) => {
      const run = await boundary.getRun(input.runId);
      if (run === null) throw new restate.TerminalError(`run ${input.runId} not found`);
      const values = [];
      for (const lookup of input.lookups) {
        values.push(
          await ctx.run(
            `lookup-${lookup.key}`,
            // ctx.key is the workflow's ID: the tool call ID is the same on every attempt.
            () => lookupStep(boundary, run, ctx.key, lookup, HARNESS_URL, () => Deno.exit(1)),
            { maxRetryAttempts: 20, initialRetryInterval: 100, retryIntervalFactor: 1 },
          ),
        );
      }
      return values;
    },
  },
  // The server's retries of the whole invocation (after the process died): soon and often.
  options: {
    retryPolicy: { initialInterval: 100, exponentiationFactor: 1, maxAttempts: 50 },
  },
});

await restate.serve({ services: [lookups], port: Number(Deno.args[0]) });
