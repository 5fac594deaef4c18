/**
 * A bounded soak: mixed load through the HTTP app on the Upstash store (via the endpoint and a
 * real redis-server) with faults injected at random (5xx bursts, dropped responses, responses
 * slower than the store timeout, SIGSTOP). At the end every record agrees with what its client
 * was told, no key ran twice, no READY record lacks its agent result, and no response carried
 * the canary, the Upstash token or URL.
 *
 * RELIABILITY_SOAK_MS sets the duration (default 10 s; `deno task soak` runs 60 s).
 */
import { check, checkEqual, envInt, figures, report } from "../reliability/figures.ts";
import {
  AGENT_TOKEN,
  HARNESS_TOKEN,
  jsonInit,
  type Seen,
  startHttpSystem,
} from "../reliability/http.ts";

const SOAK_MS = envInt("RELIABILITY_SOAK_MS", 10_000);
const WORKERS = 8;
const STORE_TIMEOUT_MS = 400;
/** How long the boundary tries a failed complete (or start) again. */
const STORE_RETRY_MS = 500;
/**
 * Begin, then a complete tried until the retry window closes and its last try, each bounded by
 * the store timeout, + the slow tool + slack.
 */
const BOUND_MS = 3 * STORE_TIMEOUT_MS + STORE_RETRY_MS + 400 + 500;

interface Told {
  runId: string;
  toolCallId: string;
  toolName: string;
  seen: Seen;
}

Deno.test("soak: mixed HTTP load with random faults; every record agrees with what its client was told", async () => {
  const f = figures("soak", "upstash+http");
  const sys = await startHttpSystem(f, STORE_TIMEOUT_MS, STORE_RETRY_MS);
  const told: Told[] = [];
  const codes: Record<string, number> = {};
  const deadline = Date.now() + SOAK_MS;
  let slowest = 0;
  const timed = async (path: string, init: RequestInit) => {
    const t0 = performance.now();
    const seen = await sys.request(path, init);
    const ms = performance.now() - t0;
    slowest = Math.max(slowest, ms);
    check(f, ms <= BOUND_MS, () => `${path} took ${Math.round(ms)} ms`);
    const code = seen.status === 200 || seen.status === 201
      ? `${seen.status}`
      : `${seen.status}:${(seen.json as { code?: string })?.code}`;
    codes[code] = (codes[code] ?? 0) + 1;
    f.steps++;
    return seen;
  };

  const faults = (async () => {
    const endpoint = sys.fixture.endpoint;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 300));
      const roll = Math.random();
      f.faults++;
      if (roll < 0.3) endpoint.failNext(1 + Math.floor(Math.random() * 3), 503);
      else if (roll < 0.6) endpoint.dropNext(1 + Math.floor(Math.random() * 6));
      else if (roll < 0.8) {
        endpoint.setDelay(STORE_TIMEOUT_MS + 100);
        await new Promise((r) => setTimeout(r, 150));
        endpoint.setDelay(0);
      } else {
        sys.fixture.server.pause();
        await new Promise((r) => setTimeout(r, 150 + Math.random() * 300));
        sys.fixture.server.resume();
      }
    }
  })();

  const worker = async (w: number) => {
    let n = 0;
    while (Date.now() < deadline) {
      const runId = `soak-${w}-${n++}`;
      const started = await timed(
        "/v1/runs",
        jsonInit(HARNESS_TOKEN, "POST", {
          runId,
          ttlMs: 600_000,
          budget: { calls: 6, perTool: { t_throw: 2 } },
        }),
      );
      if (started.status !== 201) continue; // a fault: this run may or may not exist; move on
      const ids: string[] = [];
      for (let i = 0; i < 10 && Date.now() < deadline; i++) {
        const again = ids.length > 0 && Math.random() < 0.2;
        const toolCallId = again ? ids[Math.floor(Math.random() * ids.length)]! : `call_${i}`;
        if (!again) ids.push(toolCallId);
        const toolName = [
          "t_found",
          "t_found",
          "t_throw",
          "t_slow",
        ][Math.floor(Math.random() * 4)]!;
        const seen = await timed(
          `/v1/runs/${runId}/tool-calls`,
          jsonInit(AGENT_TOKEN, "POST", { toolCallId, toolName, input: { q: `${w}-${i}` } }),
        );
        f.cases++;
        told.push({ runId, toolCallId, toolName, seen });
        if (Math.random() < 0.2) {
          await timed(`/v1/runs/${runId}/tool-calls/${toolCallId}`, jsonInit(HARNESS_TOKEN, "GET"));
        }
      }
      await timed(`/v1/runs/${runId}/end`, jsonInit(HARNESS_TOKEN, "POST"));
    }
  };

  try {
    await Promise.all([faults, ...Array.from({ length: WORKERS }, (_, w) => worker(w))]);
    f.races += told.length;
    // Heal, let late requests land, then compare every record with what its client was told.
    sys.fixture.endpoint.failNext(0);
    sys.fixture.endpoint.dropNext(0);
    sys.fixture.endpoint.setDelay(0);
    await new Promise((r) => setTimeout(r, 500));
    for (const [key, n] of sys.executions) checkEqual(f, [key, n], [key, 1], "executions");
    const byKey = new Map<string, Told[]>();
    for (const t of told) {
      const key = `${t.runId}/${t.toolCallId}`;
      byKey.set(key, [...(byKey.get(key) ?? []), t]);
    }
    for (const [key, tells] of byKey) {
      const { runId, toolCallId } = tells[0]!;
      const seen = await sys.request(
        `/v1/runs/${runId}/tool-calls/${toolCallId}`,
        jsonInit(HARNESS_TOKEN, "GET"),
      );
      const record = seen.status === 200
        ? seen.json as {
          status: string;
          errorCode: string | null;
          agentResult: unknown;
          toolName: string;
        }
        : null;
      check(f, seen.status === 200 || seen.status === 404, () => `${key}: read got ${seen.status}`);
      if (record?.status === "READY") {
        check(f, record.agentResult !== null, `${key}: READY without result`);
      }
      const outcomes = tells.filter((t) => t.seen.status === 200);
      check(f, outcomes.length <= 1, `${key}: two outcomes told`);
      for (const t of outcomes) {
        // Told an outcome (READY or a recorded tool error): the record says exactly that.
        const body = t.seen.json as {
          status: string;
          code?: string;
          evidence?: string;
          scope?: string;
          content?: unknown;
        };
        check(f, record !== null, `${key}: told ${body.status}, no record`);
        checkEqual(f, record!.toolName, t.toolName, `${key}: tool`);
        if (body.status === "READY") {
          checkEqual(f, record!.status, "READY", key);
          checkEqual(f, record!.agentResult, {
            evidence: body.evidence,
            scope: body.scope,
            content: body.content,
          }, key);
        } else {
          checkEqual(f, [record!.status, record!.errorCode], ["ERROR", body.code], key);
        }
      }
      if (record === null) {
        // No record: no tool may have run for it.
        checkEqual(f, sys.executions.get(key) ?? 0, 0, `${key}: ran without a record`);
      } else if (record.status === "PROJECTING") {
        // Left PROJECTING only when no client was told an outcome for it.
        checkEqual(f, outcomes.length, 0, `${key}: PROJECTING but told an outcome`);
      }
    }
  } finally {
    try {
      sys.fixture.server.resume();
    } catch {
      // not paused
    }
    await sys.stop();
  }
  report(f, {
    soakMs: SOAK_MS,
    workers: WORKERS,
    keys: new Set(told.map((t) => `${t.runId}/${t.toolCallId}`)).size,
    responsesScanned: sys.scanned.responses,
    slowestMs: Math.round(slowest),
    boundMs: BOUND_MS,
    codes: Object.fromEntries(Object.entries(codes).sort()),
  });
});
