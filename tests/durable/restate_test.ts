/**
 * Restate: the server binary of the npm package `@restatedev/restate-server`, on free loopback
 * ports with a temporary base dir; the service (restate_service.ts, the SDK under Deno) registered
 * with the admin API. A workflow's `ctx.run` steps call the tool through the boundary, on the
 * UpstashStore (outside the service's process). The first attempt of each step dies at another
 * point: the process exits before the call, is killed while the tool runs (the record stays
 * PROJECTING for good: settled by a probe), exits after the call returned; or the step throws
 * while the tool runs and the process lives on (the retry backs off until the record completes).
 * The engine's own retries bring every step back; each tool runs once per call.
 */
import assert from "node:assert/strict";
import { UpstashStore } from "@tool-boundary/core/upstash";
import { type Child, freePort, start, WORKSPACE_CONFIG } from "../runtime/process.ts";
import { startUpstashFixture } from "../support/upstash_fixture.ts";
import { assertCrashScenario, type Outcome, outcomeOf, startHarness } from "./harness.ts";
import { lookupsBoundary, type LookupsInput } from "./lookups.ts";
import { NPM_DIR, npmInstall } from "./npm_deps.ts";

const SERVER = `${NPM_DIR}node_modules/@restatedev/restate-server-linux-x64/bin/restate-server`;
const SERVICE = new URL("./restate_service.ts", import.meta.url).pathname;

/** Starts restate-server on free ports; resolves once its admin API is healthy. */
async function startRestate(
  baseDir: string,
): Promise<{ child: Child; ingress: string; admin: string }> {
  const [ingress, admin, fabric] = [freePort(), freePort(), freePort()];
  const child = start(SERVER, [
    "--no-logo",
    "--listen-mode",
    "tcp",
    "--base-dir",
    baseDir,
    "--default-num-partitions",
    "1",
  ], {
    env: {
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
      RESTATE_BIND_ADDRESS: `127.0.0.1:${fabric}`,
      RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${fabric}`,
      RESTATE_DISABLE_TELEMETRY: "true",
      RESTATE_LOG_FORMAT: "compact",
      NO_COLOR: "1",
    },
  });
  const base = {
    child,
    ingress: `http://127.0.0.1:${ingress}`,
    admin: `http://127.0.0.1:${admin}`,
  };
  for (const until = Date.now() + 30_000; Date.now() < until;) {
    const healthy = await fetch(`${base.admin}/health`).then((res) => res.ok, () => false);
    const ready = healthy &&
      await fetch(`${base.ingress}/restate/health`).then((res) => res.ok, () => false);
    if (ready) return base;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await child.stop();
  throw new Error(`restate-server did not become healthy:\n${child.output()}`);
}

Deno.test("Restate: every ctx.run step's tool runs once across process deaths and the engine's retries", async () => {
  await npmInstall();
  const baseDir = await Deno.makeTempDir({ prefix: "tb-restate-" });
  const fixture = await startUpstashFixture();
  const redis = { UPSTASH_URL: fixture.endpoint.url, UPSTASH_TOKEN: fixture.endpoint.token };
  const servicePort = freePort();
  let service: Child | undefined;
  let stopping = false;
  const startService = async () => {
    service = start(Deno.execPath(), [
      "run",
      ...WORKSPACE_CONFIG,
      "--allow-all",
      SERVICE,
      String(servicePort),
    ], {
      env: { HARNESS_URL: harness.url, ...redis },
    });
    await service.waitFor(/listening on/);
  };
  // Kills the service while the tool of a `kill-during` step runs (SIGTERM: Deno has no
  // handler for it here, so the process ends at once, its pending call with it).
  const harness = startHarness(async () => {
    await service?.stop();
  });
  const restate = await startRestate(baseDir);
  // The engine's retries need the endpoint back: start it again whenever it dies.
  let supervising: Promise<void> = Promise.resolve();
  try {
    await startService();
    const registered = await fetch(`${restate.admin}/deployments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uri: `http://127.0.0.1:${servicePort}` }),
    });
    assert.equal(registered.status, 201, await registered.text());
    supervising = (async () => {
      while (!stopping) {
        await service!.status;
        if (!stopping) await startService();
      }
    })();

    // The test's own view of the store: it starts each run and reads what the steps recorded.
    const boundary = lookupsBoundary(
      new UpstashStore({ redis: fixture.createRedis() }),
      harness.url,
    );
    const runWorkflow = async (lookups: LookupsInput["lookups"]): Promise<Outcome> => {
      const runId = `wf-${crypto.randomUUID()}`;
      await boundary.startRun({ runId, ttlMs: 120_000, budget: { calls: 20 } });
      const sent = await fetch(`${restate.ingress}/lookups/${runId}/run/send`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ runId, lookups }),
      });
      assert.equal(sent.status, 202, await sent.text());
      const attached = await fetch(`${restate.ingress}/restate/workflow/lookups/${runId}/attach`, {
        signal: AbortSignal.timeout(45_000),
      });
      assert.equal(attached.status, 200);
      const values = await attached.json();
      return await outcomeOf(boundary, runId, values);
    };

    await assertCrashScenario(harness, runWorkflow);
  } finally {
    stopping = true;
    await service?.stop();
    await supervising;
    await restate.child.stop();
    await harness.stop();
    await fixture.stop();
    await Deno.remove(baseDir, { recursive: true });
  }
});
