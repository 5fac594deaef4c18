/**
 * One behaviour, two stores: registers a test on MemoryStore (fake clock) and one on
 * UpstashStore (through the real client and the REST endpoint, against the test module's
 * redis-server, emptied for it: see `startSharedUpstashFixture`), with its scripts run by
 * redis-server's Lua and once more by gopher-lua, the Lua VM Upstash runs them on.
 *
 * @module
 */
import { type AnyToolDefinition, defineTool, type ToolBoundary } from "../../src/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import type { Store } from "../../src/core/store.ts";
import {
  type ScriptEngine,
  startSharedUpstashFixture,
  type UpstashFixture,
} from "../support/upstash_fixture.ts";

/** A store under test and what goes with it. */
export interface StoreUnderTest {
  /** Which store. */
  name: "MemoryStore" | "UpstashStore";
  /** The store. */
  store: Store;
  /** The clock to give requests and a boundary: fake for MemoryStore, `Date.now` for Upstash. */
  clock: () => number;
  /** The redis-server and endpoint, on UpstashStore only. */
  fixture: UpstashFixture | null;
}

/**
 * Registers `"<store>: <behaviour>"` for both stores, UpstashStore once per script engine
 * (`"UpstashStore (gopher-lua): <behaviour>"` for gopher-lua).
 *
 * @param behaviour The test name after the store's.
 * @param fn The test.
 */
export function onBothStores(
  behaviour: string,
  fn: (sut: StoreUnderTest) => Promise<void>,
): void {
  Deno.test(`MemoryStore: ${behaviour}`, async () => {
    const now = Date.UTC(2026, 0, 1);
    const clock = () => now;
    await fn({ name: "MemoryStore", store: new MemoryStore({ clock }), clock, fixture: null });
  });
  for (const engine of ["redis", "gopher-lua"] as ScriptEngine[]) {
    const title = engine === "redis" ? "UpstashStore" : `UpstashStore (${engine})`;
    Deno.test(`${title}: ${behaviour}`, async () => {
      const fixture = await startSharedUpstashFixture({ engine });
      try {
        const store = new UpstashStore({ redis: fixture.createRedis() });
        await fn({ name: "UpstashStore", store, clock: Date.now, fixture });
      } finally {
        await fixture.stop();
      }
    });
  }
}

/** The names `Object.prototype` holds, which plain objects inherit. */
export const PROTOTYPE_KEYS: readonly string[] = Object.getOwnPropertyNames(Object.prototype);

/**
 * A read-only tool that finds evidence: its raw response and content are its name.
 *
 * @param name The tool's name.
 * @param budget Its own per-run budget, if any.
 * @returns The tool.
 */
export function namedTool(name: string, budget?: number): AnyToolDefinition {
  return defineTool({
    name,
    readOnly: true,
    ...(budget === undefined ? {} : { budget }),
    execute: () => ({ tool: name }),
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "the tool's name", content: raw }),
  });
}

const AGENT = "agent-token-names-numbers-0123";
const HARNESS = "harness-token-names-numbers-0123";

/**
 * The HTTP app over a boundary, and a way to call it with a role and a body as exact JSON text.
 *
 * @param boundary The boundary.
 * @returns `send(method, url, { as, text })` resolving to the status and the parsed body.
 */
export function httpOver(boundary: ToolBoundary): {
  send: (
    method: string,
    url: string,
    options?: { as?: "agent" | "harness"; text?: string },
  ) => Promise<{ status: number; body: Record<string, unknown> }>;
} {
  const app = createApp({ boundary, agentToken: AGENT, harnessToken: HARNESS });
  return {
    send: async (method, url, options = {}) => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.as === "agent" ? AGENT : HARNESS}`,
      };
      if (options.text !== undefined) headers["content-type"] = "application/json";
      const res = await app.request(url, {
        method,
        headers,
        ...(options.text === undefined ? {} : { body: options.text }),
      });
      return { status: res.status, body: JSON.parse(await res.text()) };
    },
  };
}
