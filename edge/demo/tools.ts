/**
 * Demo tools over a small bundled data set, one for each outcome a call can have:
 *
 * | tool               | outcome                                                        |
 * | ------------------ | -------------------------------------------------------------- |
 * | `search_runbook`   | READY with EVIDENCE_FOUND, or NO_EVIDENCE with its scope        |
 * | `search_logs`      | the same over logs of one service; a budget of 3 calls per run  |
 * | `export_traces`    | ERROR/RESULT_TOO_LARGE: its raw payload is over the raw limit   |
 * | `restart_service`  | ERROR/NOT_READ_ONLY: writable, refused before it runs           |
 * | `query_metrics`    | ERROR/EXECUTION_FAILED: the backend throws (with a "secret")    |
 * | `trace_lookup`     | ERROR/TOOL_TIMEOUT: never answers within its 200 ms timeout     |
 *
 * The dev server, `deno task demo` and the runtime tests use them.
 *
 * @module
 */
import * as v from "valibot";
import { type AnyToolDefinition, defineTool } from "@tool-boundary/core";

/** A runbook entry. */
export interface RunbookEntry {
  /** Stable ID. */
  id: string;
  /** Title. */
  title: string;
  /** Search keywords. */
  keywords: string[];
  /** What to do. */
  steps: string[];
}

/** The bundled runbook (version 3 of a small on-call runbook). */
export const RUNBOOK: readonly RunbookEntry[] = [
  {
    id: "RB-101",
    title: "Disk full on an API node",
    keywords: ["disk", "full", "no space", "enospc"],
    steps: ["Rotate /var/log/api.", "Delete core dumps older than 7 days.", "Restart api."],
  },
  {
    id: "RB-102",
    title: "Upstream timeouts from checkout",
    keywords: ["timeout", "upstream", "504", "checkout"],
    steps: ["Check payments latency.", "Raise the checkout pool to 64.", "Page payments."],
  },
  {
    id: "RB-103",
    title: "Certificate about to expire",
    keywords: ["certificate", "tls", "expire", "x509"],
    steps: ["Run cert-renew for the domain.", "Reload the edge proxies."],
  },
  {
    id: "RB-104",
    title: "Memory leak in the worker pool",
    keywords: ["memory", "oom", "leak", "killed"],
    steps: ["Capture a heap profile.", "Recycle workers every 10k jobs.", "Open a bug."],
  },
];

/** A log line. */
export interface LogLine {
  /** ISO timestamp. */
  at: string;
  /** Service name. */
  service: "api" | "checkout" | "worker";
  /** Level. */
  level: "INFO" | "WARN" | "ERROR";
  /** Message. */
  message: string;
}

/** The bundled logs: one hour of three services. */
export const LOGS: readonly LogLine[] = [
  { at: "2025-03-01T12:00:05Z", service: "api", level: "INFO", message: "started on :8080" },
  { at: "2025-03-01T12:07:41Z", service: "api", level: "WARN", message: "disk usage 91%" },
  { at: "2025-03-01T12:09:02Z", service: "api", level: "ERROR", message: "ENOSPC: no space left" },
  { at: "2025-03-01T12:12:30Z", service: "checkout", level: "ERROR", message: "upstream timeout" },
  { at: "2025-03-01T12:12:31Z", service: "checkout", level: "ERROR", message: "504 from payments" },
  { at: "2025-03-01T12:30:00Z", service: "worker", level: "INFO", message: "processed 10000 jobs" },
  { at: "2025-03-01T12:44:17Z", service: "worker", level: "WARN", message: "rss 1.9 GiB" },
  { at: "2025-03-01T12:59:59Z", service: "api", level: "INFO", message: "healthy" },
];

const LOG_WINDOW = "2025-03-01T12:00:00Z/2025-03-01T13:00:00Z";

/** Runbook search: evidence for known symptoms, a scoped NO_EVIDENCE otherwise. */
export const searchRunbook: AnyToolDefinition = defineTool({
  name: "search_runbook",
  description: "Search the on-call runbook (v3) by symptom keywords.",
  readOnly: true,
  input: v.object({ query: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }),
  execute: ({ query }) => {
    const words = query.toLowerCase().split(/\W+/).filter((word) => word.length > 2);
    const matches = RUNBOOK.filter((entry) =>
      words.some((word) => entry.keywords.some((keyword) => keyword.includes(word)))
    );
    return { query, searched: RUNBOOK.length, matches };
  },
  project: (raw) => ({
    evidence: raw.matches.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
    scope: `runbook v3 (${raw.searched} entries), keywords of "${raw.query}"`,
    content: raw.matches.slice(0, 3).map((entry) => ({
      id: entry.id,
      title: entry.title,
      firstStep: entry.steps[0] ?? null,
    })),
  }),
});

/**
 * Log search over one service: matching lines, or NO_EVIDENCE scoped to service and window.
 * Three calls per run unless the run's budget says otherwise.
 */
export const searchLogs: AnyToolDefinition = defineTool({
  name: "search_logs",
  description: "Search one service's logs (2025-03-01 12:00-13:00 UTC) for a phrase.",
  readOnly: true,
  budget: 3,
  input: v.object({
    service: v.picklist(["api", "checkout", "worker"]),
    query: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
    level: v.optional(v.picklist(["INFO", "WARN", "ERROR"])),
  }),
  execute: ({ service, query, level }) => {
    const needle = query.toLowerCase();
    const lines = LOGS.filter((line) =>
      line.service === service && (level === undefined || line.level === level) &&
      line.message.toLowerCase().includes(needle)
    );
    return { service, query, level: level ?? "any", window: LOG_WINDOW, lines };
  },
  project: (raw) => ({
    evidence: raw.lines.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
    scope: `${raw.service} logs, ${raw.window}, level ${raw.level}, phrase "${raw.query}"`,
    content: raw.lines.slice(0, 5).map((line) => `${line.at} ${line.level} ${line.message}`),
  }),
});

/** Exports every trace span: its raw payload (about 1.2 MB) is over the default raw limit. */
export const exportTraces: AnyToolDefinition = defineTool({
  name: "export_traces",
  description: "Export all trace spans of a service (large).",
  readOnly: true,
  input: v.object({ service: v.picklist(["api", "checkout", "worker"]) }),
  execute: ({ service }) => ({
    service,
    spans: Array.from({ length: 20_000 }, (_, i) => ({
      id: `span-${i.toString(16).padStart(6, "0")}`,
      name: `${service} handler ${i % 17}`,
      durationMs: (i * 7919) % 1000,
    })),
  }),
  project: (raw) => ({
    evidence: "EVIDENCE_FOUND",
    scope: `all spans of ${raw.service}`,
    content: raw.spans.length,
  }),
});

/** A writable tool: the boundary refuses it with NOT_READ_ONLY before it can run. */
export const restartService: AnyToolDefinition = defineTool({
  name: "restart_service",
  description: "Restart a service (writable: always refused by the boundary).",
  readOnly: false,
  input: v.object({ service: v.string() }),
  execute: (): null => {
    throw new Error("restart_service must never run behind the boundary");
  },
  project: () => ({ evidence: "EVIDENCE_FOUND", scope: "never", content: null }),
});

/** A tool whose backend fails; the error text (with a fake credential) never reaches the agent. */
export const queryMetrics: AnyToolDefinition = defineTool({
  name: "query_metrics",
  description: "Query the metrics backend (which is down in this demo).",
  readOnly: true,
  input: v.object({ metric: v.string() }),
  execute: (): null => {
    throw new Error("connect ECONNREFUSED 10.0.3.7:9090 (token=demo-secret-7f3a)");
  },
  project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
});

/** A tool that never answers within its 200 ms timeout; it stops when its signal fires. */
export const traceLookup: AnyToolDefinition = defineTool({
  name: "trace_lookup",
  description: "Look up one trace by ID (its backend hangs in this demo).",
  readOnly: true,
  timeoutMs: 200,
  input: v.object({ traceId: v.string() }),
  execute: (_input, { signal }) =>
    new Promise((_resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("never reached")), 60_000);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      }, { once: true });
    }),
  project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
});

/** All demo tools. */
export const DEMO_TOOLS: readonly AnyToolDefinition[] = [
  searchRunbook,
  searchLogs,
  exportTraces,
  restartService,
  queryMetrics,
  traceLookup,
];
