/**
 * Turning valibot issues into what an agent may see: where, and what was expected.
 *
 * @module
 */
import type { InputIssue } from "./types.ts";

/** At most this many issues are reported for one input. */
export const MAX_INPUT_ISSUES = 10;

/**
 * Maps schema issues to field paths and expected types, never the values sent. Path segments
 * that are not plain identifiers or indexes (they could carry agent data) are left out.
 *
 * @param issues Issues from `v.safeParse` (any value with valibot's `path` and `expected`).
 * @returns At most {@linkcode MAX_INPUT_ISSUES} safe issues.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { toInputIssues } from "./issues.ts";
 * const checked = v.safeParse(v.object({ query: v.string() }), { query: 42 });
 * assert.deepEqual(checked.success ? [] : toInputIssues(checked.issues), [
 *   { path: "query", expected: "string" },
 * ]);
 * ```
 */
export function toInputIssues(
  issues: readonly {
    readonly path?: readonly { readonly key?: unknown }[] | undefined;
    readonly expected: string | null;
  }[],
): InputIssue[] {
  return issues.slice(0, MAX_INPUT_ISSUES).map((issue) => ({
    path: (issue.path ?? [])
      .map((item) => String(item.key))
      .filter((key) => /^[A-Za-z0-9_$-]{1,64}$/.test(key))
      .join("."),
    expected: issue.expected,
  }));
}
