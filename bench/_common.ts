/**
 * Shared helpers for the benchmarks: payload generators, smoke mode, percentiles and tables.
 *
 * @module
 */

import { type AnyToolDefinition, defineTool, type ProjectorOutput } from "../src/mod.ts";
/**
 * `BENCH_SMOKE=1`: run every benchmark a handful of times, only to prove it still runs. Read
 * only under Deno: a benchmark's worker bundle imports these helpers in workerd too.
 */
export const SMOKE: boolean =
  (globalThis as { Deno?: typeof Deno }).Deno?.env.get("BENCH_SMOKE") === "1";

/** Options for `Deno.bench`: few iterations in smoke mode, deno's defaults otherwise. */
export const benchOptions: { n?: number; warmup?: number } = SMOKE ? { n: 3, warmup: 1 } : {};

/** The agent token the HTTP benchmark's servers accept and its load generator sends. */
export const AGENT_TOKEN = "bench-agent-token-0123456789";

/** A string of `units` repetitions of `unit`, cut to `bytes` UTF-8 bytes at a code point. */
export function textOfBytes(unit: string, bytes: number): string {
  const encoder = new TextEncoder();
  const unitBytes = encoder.encode(unit).length;
  let text = unit.repeat(Math.ceil(bytes / unitBytes));
  while (encoder.encode(text).length > bytes) text = text.slice(0, -1);
  // Never end on a lone high surrogate.
  const last = text.charCodeAt(text.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) text = text.slice(0, -1);
  return text;
}

/** Log lines as a tool would return them: `{ service, query, hits: [{ ts, level, line }] }`. */
export interface LogRaw {
  [key: string]: string | { ts: string; level: string; line: string }[];
  service: string;
  query: string;
  hits: { ts: string; level: string; line: string }[];
}

/**
 * A raw log-search response whose `JSON.stringify` is close to (at most) `bytes` bytes:
 * many small objects, the usual shape of a search tool's raw answer.
 */
export function logRaw(bytes: number): LogRaw {
  const raw: LogRaw = { service: "api", query: "timeout", hits: [] };
  for (let i = 0;; i++) {
    const hit = {
      ts: `2025-01-01T12:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${
        String(i % 60).padStart(2, "0")
      }.${String(i % 1000).padStart(3, "0")}Z`,
      level: i % 7 === 0 ? "error" : "warn",
      line: `upstream request ${i} to payments-svc timed out after 30s (attempt ${i % 3 + 1})`,
    };
    raw.hits.push(hit);
    if (JSON.stringify(raw).length > bytes) {
      raw.hits.pop();
      return raw;
    }
  }
}

/** The p-th percentile (0..100) of sorted samples, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Formats milliseconds with three decimals. */
export function ms(value: number): string {
  return value.toFixed(3);
}

/** Prints a Markdown table. */
export function printTable(headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(line(headers));
  console.log(`| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`);
  for (const row of rows) console.log(line(row));
}

/**
 * The projector every benchmark's log tool uses: the first `shown` hits as lines, NO_EVIDENCE for
 * none.
 */
export function projectLogs(raw: LogRaw, shown = 5): ProjectorOutput {
  return {
    evidence: raw.hits.length > 0 ? "EVIDENCE_FOUND" : "NO_EVIDENCE",
    scope: `logs of ${raw.service} matching "${raw.query}", last 24 hours`,
    content: raw.hits.slice(0, shown).map((hit) => `${hit.ts} ${hit.level} ${hit.line}`),
  };
}

/** The read-only `search_logs` tool of the benchmarks: it returns `raw` as it is. */
export function searchLogsTool(raw: LogRaw): AnyToolDefinition {
  return defineTool({
    name: "search_logs",
    readOnly: true,
    execute: () => raw,
    project: (r) => projectLogs(r),
  });
}

/** Figure 3's tool input, as an agent sends it: JSON text. */
export const FIGURE3_INPUT = '{"service":"api","query":"timeout","window":"24h","limit":50}';

/** Made on first use: workerd refuses an AbortController at a module's top level. */
let directSignal: AbortSignal | undefined;

/**
 * Figure 3's direct path, `calls` times: what a caller must do anyway without the boundary
 * (parse the arguments text, call the tool and the projector, serialize the request, the raw
 * response and the agent result).
 *
 * @returns The JSON texts' total length, for the caller to keep (so none is optimized away).
 */
export async function directCalls(tool: AnyToolDefinition, calls: number): Promise<number> {
  let length = 0;
  directSignal ??= new AbortController().signal;
  for (let i = 0; i < calls; i++) {
    const input = JSON.parse(FIGURE3_INPUT);
    const requestJson = JSON.stringify(input);
    const result = await tool.execute(input, {
      signal: directSignal,
      run: undefined!,
      toolCallId: "call_1",
      settle: () => {},
    });
    const rawJson = JSON.stringify(result);
    const projection = await tool.project(result, { run: undefined!, toolCallId: "call_1", input });
    length += requestJson.length + rawJson.length + JSON.stringify(projection).length;
  }
  return length;
}
