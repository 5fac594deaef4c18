/**
 * A Deno Deploy app (or any `deno serve`) that serves one tool behind the boundary over HTTP:
 * `deno serve --allow-net --allow-env main.ts`.
 *
 * Environment: AGENT_TOKEN and HARNESS_TOKEN (required: it refuses to start without them),
 * UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (optional; else an in-memory store),
 * LEDGER_KEY (optional: the ledger's private JWK as JSON text; records and runs are signed).
 *
 * @module
 */
import { Redis } from "@upstash/redis";
import * as v from "valibot";
import { defineTool, ToolBoundary } from "@tool-boundary/core";
import type { Store } from "@tool-boundary/core/store";
import { createApp } from "@tool-boundary/core/hono";
import { MemoryStore } from "@tool-boundary/core/memory";
import { UpstashStore } from "@tool-boundary/core/upstash";

const RELEASES = [
  { version: "2.4.0", notes: "Retries on 503 from the payment gateway." },
  { version: "2.4.1", notes: "Fixes a deadlock in the order queue." },
];

const searchReleases = defineTool({
  name: "search_releases",
  description: "Release notes that mention a word.",
  readOnly: true,
  input: v.object({ word: v.pipe(v.string(), v.minLength(1)) }),
  execute: ({ word }) => ({
    word,
    matches: RELEASES.filter((r) => r.notes.toLowerCase().includes(word.toLowerCase())),
  }),
  project: (raw) => ({
    evidence: raw.matches.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
    scope: `release notes mentioning "${raw.word}"`,
    content: raw.matches.map((r) => `${r.version}: ${r.notes}`),
  }),
});

const agentToken = Deno.env.get("AGENT_TOKEN");
const harnessToken = Deno.env.get("HARNESS_TOKEN");
if (!agentToken || !harnessToken) {
  throw new Error(
    "Refusing to start: AGENT_TOKEN and HARNESS_TOKEN must both be set",
  );
}
const url = Deno.env.get("UPSTASH_REDIS_REST_URL");
const token = Deno.env.get("UPSTASH_REDIS_REST_TOKEN");
const store: Store = url && token
  // One request per call: an auto-pipelined batch of large calls can pass the request limit.
  ? new UpstashStore({ redis: new Redis({ url, token, enableAutoPipelining: false }) })
  : new MemoryStore();
// Optional: the ledger's private JWK (generateLedgerKeys) signs every record and run.
const ledgerText = Deno.env.get("LEDGER_KEY");
const ledgerKey = ledgerText ? JSON.parse(ledgerText) as JsonWebKey : undefined;
const app = createApp({
  boundary: new ToolBoundary({
    store,
    tools: [searchReleases],
    ...(ledgerKey ? { ledgerKey } : {}),
  }),
  agentToken,
  harnessToken,
});

export default { fetch: app.fetch } satisfies Deno.ServeDefaultExport;
