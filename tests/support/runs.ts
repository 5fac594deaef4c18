/**
 * Starting runs in tests: on a store directly ({@linkcode startStoreRun}), or over HTTP through
 * `POST /v1/runs` ({@linkcode startHttpRun}). Each asserts that the run started.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { RunState, Store } from "../../src/core/store.ts";

/** What a test may set of a run it starts on a store; the rest is as most tests want it. */
export interface StoreRunOptions {
  /** Calls the run may begin. @default 100 */
  calls?: number;
  /** Calls per tool. @default {} */
  perTool?: Record<string, number>;
  /** How long the store keeps the run. @default 1_200_000 */
  ttlMs?: number;
  /** The clock reading the run starts at; its deadline is 10 minutes on. @default Date.now() */
  now?: number;
  /** The start's attempt ID. @default `start-${runId}` */
  attemptId?: string;
}

/**
 * Starts a run on a store and asserts that it started.
 *
 * @param store The store.
 * @param runId The run's ID.
 * @param options What differs from the defaults.
 * @returns The run as the store answered it.
 */
export async function startStoreRun(
  store: Store,
  runId: string,
  options: StoreRunOptions = {},
): Promise<RunState> {
  const now = options.now ?? Date.now();
  const started = await store.startRun({
    runId,
    deadline: now + 600_000,
    budget: { calls: options.calls ?? 100, perTool: options.perTool ?? {} },
    ttlMs: options.ttlMs ?? 1_200_000,
    attemptId: options.attemptId ?? `start-${runId}`,
    now,
  });
  assert.ok(started.ok, `startRun refused: ${JSON.stringify(started)}`);
  return started.run;
}

/** A `fetch` of an app: `app.request`, `app.fetch` on a `Request`, or `fetch` itself. */
export type FetchOf = (url: string, init: RequestInit) => Response | Promise<Response>;

/**
 * Starts a run over HTTP: `POST <base>/v1/runs` with the harness token and `body` as JSON, and
 * asserts 201.
 *
 * @param fetchOf How the app is reached.
 * @param base The app's origin, or `""` for an app reached by path.
 * @param harnessToken The harness token.
 * @param body The start request.
 * @returns The parsed answer: the run, with its `agentToken` when the app mints run tokens.
 */
export async function startHttpRun(
  fetchOf: FetchOf,
  base: string,
  harnessToken: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetchOf(`${base}/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${harnessToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 201);
  return await res.json();
}
