/**
 * Valibot schemas of the HTTP request bodies, which the routes validate bodies with. With the
 * response schemas (`responses.ts`) they generate the OpenAPI document, so the document cannot
 * drift from what the app checks.
 *
 * @module
 */
import * as v from "valibot";
import { isWellFormedName, RUN_ID_PATTERN, TOOL_CALL_ID_PATTERN } from "../core/ids.ts";
import {
  MAX_BUDGET,
  MAX_CITATIONS,
  MAX_COST,
  MAX_EPOCH_MS,
  MAX_TTL_MS,
  setOwnBudget,
} from "../core/limits.ts";
import type { InputIssue } from "../core/types.ts";

/**
 * A schema made on its first use and the same object after: a cold start builds only the schemas
 * its first request needs (a tool call makes none of the start-run body's).
 */
function once<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => made ??= make();
}

// Safe integers: MAX_BUDGET is Number.MAX_SAFE_INTEGER.
/** An integer from `min` to `Number.MAX_SAFE_INTEGER`. */
export const count = (min: number) => v.pipe(v.number(), v.safeInteger(), v.minValue(min));
/** Epoch milliseconds. */
export const epochMs = once(() => count(0));
/** A per-tool call budget. */
export const toolBudget = once(() => v.pipe(count(0), v.maxValue(MAX_BUDGET)));
/** Cost units. */
export const costUnits = once(() => v.pipe(count(0), v.maxValue(MAX_COST)));

/** Body of `POST /v1/runs`. */
export const startRunBody = once(() =>
  v.object({
    runId: v.optional(
      v.pipe(
        v.string(),
        v.regex(RUN_ID_PATTERN),
        v.description("A run ID to use; a UUID is generated when omitted."),
      ),
    ),
    deadline: v.optional(
      v.pipe(
        v.union([
          v.pipe(epochMs(), v.maxValue(MAX_EPOCH_MS)),
          v.pipe(v.string(), v.isoTimestamp()),
        ]),
        v.description("Epoch milliseconds or an ISO 8601 timestamp; wins over ttlMs."),
      ),
    ),
    ttlMs: v.optional(
      v.pipe(
        count(1),
        v.maxValue(MAX_TTL_MS),
        v.description("Run length from now, in milliseconds."),
      ),
    ),
    budget: v.optional(
      v.object({
        calls: v.pipe(count(1), v.description("Tool calls the run may begin in all.")),
        perTool: v.optional(
          v.pipe(
            v.record(v.string(), toolBudget()),
            v.description(
              "Calls per tool name. Every key counts, `__proto__` and `constructor` included.",
            ),
          ),
        ),
        cost: v.optional(
          v.pipe(
            costUnits(),
            v.description(
              "Cost units the run's calls may reserve and spend in all (docs/cost.md).",
            ),
          ),
        ),
      }),
    ),
  })
);

/**
 * `budget.perTool` of a start-run body as sent. `v.record` checks the values of the keys it keeps,
 * but drops `__proto__`, `constructor` and `prototype` (its guard against prototype pollution),
 * and those can be tool names: every own key of the body is checked here, with the same value
 * schema and the tool-name rule, into a table whose keys are own properties.
 *
 * @param sent The start-run body as sent (a JSON object).
 * @returns The table (`undefined` when the body has none), or issues naming `budget.perTool`.
 */
export function perToolOf(
  sent: Record<string, unknown>,
): { perTool: Record<string, number> | undefined } | { issues: InputIssue[] } {
  const table = (sent.budget as { perTool?: unknown } | undefined)?.perTool;
  if (table === undefined) return { perTool: undefined };
  const perTool: Record<string, number> = {};
  for (const [name, value] of Object.entries(table as Record<string, unknown>)) {
    if (!isWellFormedName(name)) {
      return { issues: [{ path: "budget.perTool", expected: "well-formed Unicode tool names" }] };
    }
    const checked = v.safeParse(toolBudget(), value);
    if (!checked.success) {
      return { issues: [{ path: "budget.perTool", expected: checked.issues[0].expected }] };
    }
    setOwnBudget(perTool, name, checked.output);
  }
  return { perTool };
}

/** Body of `POST /v1/runs/{runId}/tool-calls`: one tool call as the agent framework made it. */
export const toolCallBody = once(() =>
  v.object({
    toolCallId: v.pipe(
      v.string(),
      v.regex(TOOL_CALL_ID_PATTERN),
      v.description("The framework's exact tool call ID; kept byte for byte."),
    ),
    runId: v.optional(
      v.pipe(v.string(), v.description("Optional; must equal the run ID in the path.")),
    ),
    toolName: v.string(),
    input: v.pipe(
      v.union([v.record(v.string(), v.unknown()), v.string()]),
      v.description("A JSON object, or JSON text of one (as OpenAI-style APIs deliver arguments)."),
    ),
  })
);

/** The schema of a tool-call body. */
export type ToolCallBodySchema = ReturnType<typeof toolCallBody>;

/** Body of `POST /v1/runs/{runId}/citations`: the tool call IDs a final answer cites. */
export const citationsBody = once(() =>
  v.object({
    toolCallIds: v.pipe(
      v.array(v.string()),
      v.maxLength(MAX_CITATIONS),
      v.description("At most 1,000 tool call IDs; an ID outside the allow-list is NOT_EVIDENCE."),
    ),
  })
);
