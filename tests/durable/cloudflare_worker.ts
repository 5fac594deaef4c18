/**
 * The Cloudflare Workflows worker of the durable test, bundled with `deno bundle --platform
 * browser` and run in workerd through miniflare. The entry the test writes next to the bundle
 * (see `WORKER_ENTRY` in cloudflare_test.ts) extends `WorkflowEntrypoint` from
 * `cloudflare:workers` and hands `run` to {@linkcode runLookups}: this module imports nothing
 * workerd-only, so `deno check` reads it as it is.
 *
 * Bindings: `HARNESS_URL`; `STORE` (`memory`: a MemoryStore in the isolate, which outlives a
 * failed step; `upstash`: an UpstashStore at `UPSTASH_URL` with `UPSTASH_TOKEN`);
 * `AGENT_TOKEN`, `HARNESS_TOKEN` for the HTTP app the harness reads the records from; `LOOKUPS`,
 * the Workflow binding.
 *
 * @module
 */
import { Redis } from "@upstash/redis/cloudflare";
import type { ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { createApp } from "@tool-boundary/core/hono";
import { UpstashStore } from "@tool-boundary/core/upstash";
import { lookupsBoundary, type LookupsInput, lookupStep } from "./lookups.ts";

/** The worker's bindings. */
export interface Env {
  HARNESS_URL: string;
  STORE: "memory" | "upstash";
  UPSTASH_URL?: string;
  UPSTASH_TOKEN?: string;
  AGENT_TOKEN: string;
  HARNESS_TOKEN: string;
  LOOKUPS: {
    create(options: { id: string; params: LookupsInput }): Promise<{ id: string }>;
    get(id: string): Promise<{ status(): Promise<unknown> }>;
  };
}

/** The parts of a Workflows step this workflow uses. */
export interface WorkflowStep {
  do<T>(
    name: string,
    config: { retries: { limit: number; delay: number; backoff: "constant" } },
    callback: () => Promise<T>,
  ): Promise<T>;
}

let boundary: ToolBoundary | undefined;

/** One boundary per isolate: its MemoryStore lives as long as the isolate does. */
function boundaryOf(env: Env): ToolBoundary {
  boundary ??= lookupsBoundary(
    env.STORE === "upstash"
      ? new UpstashStore({
        redis: new Redis({ url: env.UPSTASH_URL!, token: env.UPSTASH_TOKEN! }),
      })
      : new MemoryStore(),
    env.HARNESS_URL,
  );
  return boundary;
}

/** `run` of the Workflow: one step per lookup, retried by the engine. */
export async function runLookups(
  env: Env,
  event: { instanceId: string; payload: LookupsInput },
  step: WorkflowStep,
): Promise<unknown[]> {
  const boundary = boundaryOf(env);
  const run = await boundary.getRun(event.payload.runId);
  if (run === null) throw new Error(`run ${event.payload.runId} not found`);
  const values = [];
  for (const lookup of event.payload.lookups) {
    values.push(
      await step.do(
        `lookup-${lookup.key}`,
        { retries: { limit: 8, delay: 100, backoff: "constant" } },
        () =>
          lookupStep(boundary, run, event.instanceId, lookup, env.HARNESS_URL, () => {
            throw new Error("a Worker has no process to exit");
          }),
      ),
    );
  }
  return values;
}

/** The worker's `fetch`: starts and reads workflows, and serves the boundary's HTTP app. */
export async function fetchLookups(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/workflows") {
    const { id, params } = await request.json();
    return Response.json(await env.LOOKUPS.create({ id, params }));
  }
  if (url.pathname.startsWith("/workflows/")) {
    const instance = await env.LOOKUPS.get(url.pathname.slice("/workflows/".length));
    return Response.json(await instance.status());
  }
  const app = createApp({
    boundary: boundaryOf(env),
    agentToken: env.AGENT_TOKEN,
    harnessToken: env.HARNESS_TOKEN,
  });
  return await app.fetch(request);
}
