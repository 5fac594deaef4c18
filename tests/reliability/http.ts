/**
 * The HTTP app on the Upstash store through the endpoint, with a canary in the Upstash token,
 * in raw data and in exception messages, and a request helper that scans every response's
 * status line, headers and body for it.
 *
 * @module
 */
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { createApp } from "../../src/http/mod.ts";
import { UpstashStore } from "../../src/stores/upstash/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import { startUpstashFixture, type UpstashFixture } from "../support/upstash_fixture.ts";
import { check, type Figures } from "./figures.ts";

export const AGENT_TOKEN = "agent-token-reliability-0123456789";
export const HARNESS_TOKEN = "harness-token-reliability-0123456789";
export const UPSTASH_TOKEN = `tok_${CANARY_SECRET}`;

/** A response as the scan saw it. */
export interface Seen {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** The app, its fixture and counters. */
export interface HttpSystem {
  fixture: UpstashFixture;
  app: ReturnType<typeof createApp>;
  executions: Map<string, number>;
  /** Sends one request through `app.request`, scans the response, and parses its body. */
  request(path: string, init?: RequestInit): Promise<Seen>;
  /** Responses scanned so far. */
  scanned: { responses: number };
  stop(): Promise<void>;
}

/**
 * Starts the fixture and the app.
 *
 * @param f Counters for the scan's assertions.
 * @param storeTimeoutMs The Upstash store's per-operation bound.
 * @param storeRetryMs How long the boundary tries a failed complete or start again.
 * @returns The system.
 */
export async function startHttpSystem(
  f: Figures,
  storeTimeoutMs = 2_000,
  storeRetryMs?: number,
): Promise<HttpSystem> {
  const fixture = await startUpstashFixture({ token: UPSTASH_TOKEN });
  const executions = new Map<string, number>();
  const tool = (name: string, behaviour: "found" | "throw" | "slow") =>
    defineTool({
      name,
      readOnly: true,
      timeoutMs: 200,
      execute: async (input, ctx) => {
        const key = `${ctx.run.runId}/${ctx.toolCallId}`;
        executions.set(key, (executions.get(key) ?? 0) + 1);
        if (behaviour === "throw") throw new Error(`backend refused ${CANARY_SECRET}`);
        if (behaviour === "slow") await new Promise((r) => setTimeout(r, 400));
        return { id: ctx.toolCallId, q: input.q ?? null, credential: CANARY_SECRET };
      },
      project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "http", content: raw.id }),
    });
  const boundary = new ToolBoundary({
    store: new UpstashStore({
      redis: fixture.createRedis({ retry: { retries: 3, backoff: () => 20 } }),
      timeoutMs: storeTimeoutMs,
    }),
    tools: [tool("t_found", "found"), tool("t_throw", "throw"), tool("t_slow", "slow")],
    limits: { requestBytes: 4096 },
    ...(storeRetryMs === undefined ? {} : { storeRetryMs }),
  });
  const app = createApp({ boundary, agentToken: AGENT_TOKEN, harnessToken: HARNESS_TOKEN });
  const scanned = { responses: 0 };
  const secrets = [CANARY_SECRET, UPSTASH_TOKEN, fixture.endpoint.url, "command was", "EVALSHA"];
  const request = async (path: string, init: RequestInit = {}): Promise<Seen> => {
    const response = await app.request(path, init);
    const text = await response.text();
    scanned.responses++;
    const head = [`${response.status} ${response.statusText}`];
    response.headers.forEach((value, name) => head.push(`${name}: ${value}`));
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    // A record read by the harness holds the raw response and what a throwing tool threw
    // (`failure`) by design (that is what records are for): everything else in it, and every
    // other response, is scanned.
    let scannedText = text;
    if (response.status === 200 && /\/tool-calls\/[^/]+$/.test(path) && isObject(json)) {
      const { raw: _raw, failure: _failure, ...rest } = json;
      scannedText = JSON.stringify(rest);
    }
    const all = `${head.join("\n")}\n\n${scannedText}`;
    for (const secret of secrets) {
      check(
        f,
        !all.includes(secret),
        () => `${init.method ?? "GET"} ${path} leaked: ${all.slice(0, 400)}`,
      );
    }
    check(
      f,
      !/\n\s+at |Error:/.test(text),
      () => `${path}: exception text in the body: ${text.slice(0, 200)}`,
    );
    return { status: response.status, headers: response.headers, text, json };
  };
  return { fixture, app, executions, request, scanned, stop: () => fixture.stop() };
}

/** JSON request options. */
export function jsonInit(token: string | null, method: string, body?: unknown): RequestInit {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
