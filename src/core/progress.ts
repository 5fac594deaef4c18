/**
 * The run progress projector's last step: turning fact rows read from a store into bounded
 * observed facts, re-checking every rule the store was asked to apply.
 *
 * @module
 */
import { checkJson, isPlainObject } from "./json.ts";
import type { FactRow } from "./store.ts";
import type { ObservedFact, Projection } from "./types.ts";
import { utf8ByteLength } from "./utf8.ts";

/** Caps on what `endRun` returns. */
export interface FactCaps {
  /** Facts at most. */
  maxFacts: number;
  /** Agent-result bytes at most, summed over the facts. */
  maxBytes: number;
}

/**
 * Turns rows into facts, in order. A row is accepted only when it is READY, owned by `runId`,
 * has evidence EVIDENCE_FOUND or NO_EVIDENCE, and its agent result parses to a valid projection
 * with the same evidence; anything else is dropped, whatever the store said. Stops at the caps.
 *
 * @param runId The run being ended.
 * @param rows Rows from `Store.readFacts`, in execution order.
 * @param caps Count and byte caps.
 * @returns The facts and how many valid rows the caps left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rowsToFacts } from "@tool-boundary/core";
 * const { facts } = rowsToFacts("run-1", [{
 *   runId: "run-1", toolCallId: "call_1", toolName: "search", status: "READY",
 *   evidence: "NO_EVIDENCE", updatedAt: 0,
 *   agentResultJson: '{"evidence":"NO_EVIDENCE","scope":"logs of api, last 24h","content":[]}',
 * }], { maxFacts: 10, maxBytes: 1024 });
 * assert.equal(facts.length, 1);
 * assert.equal(facts[0]?.kind, "NEGATIVE_OBSERVATION");
 * assert.equal(facts[0]?.scope, "logs of api, last 24h");
 * ```
 */
export function rowsToFacts(
  runId: string,
  rows: readonly FactRow[],
  caps: FactCaps,
): { facts: ObservedFact[]; omitted: number } {
  const facts: ObservedFact[] = [];
  let bytes = 0;
  let omitted = 0;
  for (const row of rows) {
    if (row.runId !== runId || row.status !== "READY") continue;
    if (row.evidence !== "EVIDENCE_FOUND" && row.evidence !== "NO_EVIDENCE") continue;
    const projection = parseProjection(row.agentResultJson);
    if (projection === null || projection.evidence !== row.evidence) continue;
    const size = utf8ByteLength(row.agentResultJson);
    if (facts.length >= caps.maxFacts || bytes + size > caps.maxBytes) {
      omitted++;
      continue;
    }
    bytes += size;
    facts.push({
      toolCallId: row.toolCallId,
      toolName: row.toolName,
      kind: projection.evidence === "EVIDENCE_FOUND" ? "EVIDENCE" : "NEGATIVE_OBSERVATION",
      evidence: projection.evidence,
      scope: projection.scope,
      content: projection.content,
      observedAt: row.updatedAt,
    });
  }
  return { facts, omitted };
}

/**
 * Checks a projector's return value: exactly `{ evidence, scope, content }`, evidence
 * EVIDENCE_FOUND or NO_EVIDENCE, a non-empty scope, and plain JSON content.
 *
 * @param value What the projector returned.
 * @param maxDepth The deepest nesting accepted in `content`.
 * @returns The projection, or `null` when it is not valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateProjection } from "@tool-boundary/core";
 * assert.equal(validateProjection({ evidence: "ERROR", scope: "x", content: 1 }, 64), null);
 * ```
 */
export function validateProjection(value: unknown, maxDepth: number): Projection | null {
  if (!isPlainObject(value)) return null;
  const { evidence, scope, content } = value;
  if (evidence !== "EVIDENCE_FOUND" && evidence !== "NO_EVIDENCE") return null;
  if (typeof scope !== "string" || scope.trim().length === 0) return null;
  if (Object.keys(value).length !== 3 || !("content" in value)) return null;
  if (checkJson(content, maxDepth) !== null) return null;
  return value as unknown as Projection;
}

function parseProjection(text: string): Projection | null {
  try {
    return validateProjection(JSON.parse(text), Number.POSITIVE_INFINITY);
  } catch {
    return null;
  }
}
