/**
 * Every limit and default of the boundary, in one place, and the one range of every number a run
 * is made of, with the checks that the boundary, every store and the HTTP app apply, so that no
 * value works on one store and fails on another.
 *
 * | Value                                       | Accepted                                      |
 * | ------------------------------------------- | --------------------------------------------- |
 * | deadlines, clock readings (`now`)           | integer epoch ms, 0 to {@linkcode MAX_EPOCH_MS} |
 * | TTLs (`ttlMs`, `recordTtlMs`, `runTtlMs`)   | integer ms, 1 to {@linkcode MAX_TTL_MS}        |
 * | budgets (`calls`, `perTool` values)         | integer, 0 to {@linkcode MAX_BUDGET}           |
 * | costs (`cost`, `budget.cost`, `settle(n)`)  | integer, 0 to {@linkcode MAX_COST}             |
 *
 * Every sum the stores form stays a safe integer (`now + ttlMs` at most 8.74e15), so each value
 * crosses to Redis as a plain integer string, which the Lua of Upstash reads exactly. `-0` is
 * refused everywhere: Redis would give it back as `0`.
 *
 * Per-tool budgets are tables keyed by tool name, and a tool may be named `__proto__` or
 * `constructor`: {@linkcode ownBudget} and {@linkcode setOwnBudget} read and write only own
 * properties, never what `Object.prototype` holds.
 *
 * @module
 */
import { allowedId, isSafeRunId, isSafeToolCallId, isWellFormedName, unitTable } from "./ids.ts";
import { checkRecordProof } from "./ledger.ts";
import { readRunsCursor } from "./runs_page.ts";
import type {
  BeginRequest,
  CompleteRequest,
  EndRunRequest,
  ListRunsRequest,
  ReadFactsRequest,
  RunState,
  StartRunRequest,
} from "./store.ts";

/** A `requestDigest`: 1 to 128 of `A-Z a-z 0-9 _ -` (base64url), so it never holds a separator. */
export const REQUEST_DIGEST_PATTERN: RegExp = /^[A-Za-z0-9_-]{1,128}$/;

const DIGEST_UNITS = unitTable(
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
);

/**
 * Tells whether a value is a `requestDigest` stores accept: a string matching
 * {@linkcode REQUEST_DIGEST_PATTERN} (the same answer, without the regular expression).
 *
 * @param value Anything.
 * @returns `true` for 1 to 128 of `A-Z a-z 0-9 _ -`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRequestDigest } from "./limits.ts";
 * assert.equal(isRequestDigest("q5JmZqIY0rZ3kzWqDx2SXLwQdqhbcs_xoASvtmnX7dQ"), true);
 * assert.equal(isRequestDigest("a.b"), false);
 * ```
 */
export function isRequestDigest(value: unknown): value is string {
  return typeof value === "string" && allowedId(value, 128, DIGEST_UNITS);
}

/**
 * Byte and count limits, all in UTF-8 bytes of the exact JSON stored.
 */
export interface Limits {
  /** The tool input JSON. @default 65536 */
  requestBytes: number;
  /** The raw tool response JSON. @default 1048576 */
  rawBytes: number;
  /** A whole record: request, raw, agent result and metadata. @default 1572864 */
  recordBytes: number;
  /** The agent result JSON (`{evidence, scope, content}`). @default 16384 */
  agentResultBytes: number;
  /** How many facts `endRun` returns at most. @default 100 */
  factCount: number;
  /** Total agent-result bytes of the facts `endRun` returns. @default 262144 */
  factBytes: number;
  /** The deepest nesting accepted in tool input. @default 64 */
  inputDepth: number;
  /** The deepest nesting accepted in a raw tool response; deeper (or cyclic) data is SERIALIZATION_FAILED. @default 512 */
  rawDepth: number;
}

/**
 * The defaults of {@linkcode Limits}: they fit Upstash's 10 MB request limit with room.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { DEFAULT_LIMITS } from "@tool-boundary/core/harness";
 * const boundary = new ToolBoundary({ tools: [], limits: { rawBytes: 4096 } });
 * assert.deepEqual(boundary.limits, { ...DEFAULT_LIMITS, rawBytes: 4096 });
 * ```
 */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  requestBytes: 64 * 1024,
  rawBytes: 1024 * 1024,
  recordBytes: 1536 * 1024,
  agentResultBytes: 16 * 1024,
  factCount: 100,
  factBytes: 256 * 1024,
  inputDepth: 64,
  rawDepth: 512,
});

/** Milliseconds a tool (executor and projector) may take when its `timeoutMs` is not set. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** Milliseconds `authorize` may take when `authorizeTimeoutMs` is not set. */
export const DEFAULT_AUTHORIZE_TIMEOUT_MS = 10_000;

/**
 * Milliseconds a complete or a run start that the store failed (threw) is tried again, with the
 * same attempt, when `storeRetryMs` is not set: an outage of the store that ends within it loses
 * no outcome a tool produced.
 */
export const DEFAULT_STORE_RETRY_MS = 5_000;

/** A record's TTL when `recordTtlMs` is not set: 24 hours. */
export const DEFAULT_RECORD_TTL_MS = 86_400_000;

/** A run's length when neither `startRun` nor the boundary is given one: 15 minutes. */
export const DEFAULT_RUN_TTL_MS = 900_000;

/** Most tool call IDs one `checkCitations` takes. */
export const MAX_CITATIONS = 1_000;

/** A run's budget when neither `startRun` nor the boundary is given one. */
export const DEFAULT_BUDGET: Readonly<{ calls: number }> = Object.freeze({ calls: 100 });

/**
 * The longest timer runtimes set (2^31 - 1 ms, about 24.8 days): a longer delay fires at once,
 * so every wait of the boundary is capped here (a tool's `timeoutMs` may be larger; its wait is
 * not), and whatever sets a timer of its own from a setting checks it against this.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MAX_TIMER_MS } from "@tool-boundary/core/harness";
 * assert.equal(MAX_TIMER_MS, 2 ** 31 - 1);
 * ```
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** The deepest nesting accepted in a projection's `content`. */
export const CONTENT_DEPTH = 256;

/** Allowance for a record's metadata (IDs, status, timestamps) in the record byte limit. */
export const RECORD_OVERHEAD_BYTES = 512;

/**
 * The most UTF-8 bytes of a record's `failure` as JSON (`{"name":…,"message":…}`): past it the
 * message is dropped whole (`message: null`), never cut, and the name kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MAX_FAILURE_BYTES } from "@tool-boundary/core/harness";
 * assert.equal(MAX_FAILURE_BYTES, 2_048);
 * ```
 */
export const MAX_FAILURE_BYTES = 2_048;

/**
 * The UTF-8 bytes of the smallest agent result a fact can have
 * (`{"evidence":"NO_EVIDENCE","scope":"x","content":0}`): with fewer bytes left under the cap of
 * `readFacts` (or `limits.factBytes`), no further record can become a fact, so none is read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MIN_FACT_BYTES } from "@tool-boundary/core/store";
 * const smallest = JSON.stringify({ evidence: "NO_EVIDENCE", scope: "x", content: 0 });
 * assert.equal(new TextEncoder().encode(smallest).length, MIN_FACT_BYTES);
 * ```
 */
export const MIN_FACT_BYTES = 50;

/** The most runs one page of `listRuns` holds (`GET /v1/runs?limit=`). */
export const MAX_LIST_RUNS = 100;

/** The latest deadline: 8,640,000,000,000,000 ms after the epoch, the latest time a `Date` holds. */
export const MAX_EPOCH_MS = 8_640_000_000_000_000;

/** The longest TTL: 1e14 ms (about 3,169 years), so `now + ttlMs` stays a safe integer. */
export const MAX_TTL_MS = 100_000_000_000_000;

/** The largest budget: `Number.MAX_SAFE_INTEGER`, in practice no cap. */
export const MAX_BUDGET: number = Number.MAX_SAFE_INTEGER;

/**
 * The largest cost: of a tool's call, of what it settles, and of a run's cost budget
 * (`budget.cost`). A run's counters then stay exact in every store: far below 2^53 even summed
 * over many calls.
 */
export const MAX_COST = 1_000_000_000_000;

function integerIn(name: string, value: unknown, min: number, max: number, what: string): number {
  // -0 too: Redis would give it back as 0, MemoryStore as -0.
  if (
    typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max ||
    Object.is(value, -0)
  ) {
    throw new RangeError(`Invalid ${name}: expected ${what} from ${min} to ${max}`);
  }
  return value;
}

/**
 * Checks an instant: a deadline or a clock reading.
 *
 * @param name What the value is, for the error.
 * @param value Anything.
 * @returns The value, an integer epoch ms from 0 to {@linkcode MAX_EPOCH_MS}.
 * @throws {RangeError} Otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkEpochMs } from "@tool-boundary/core/store";
 * assert.equal(checkEpochMs("deadline", 1_700_000_000_000), 1_700_000_000_000);
 * assert.throws(() => checkEpochMs("deadline", 1e21), RangeError);
 * ```
 */
export function checkEpochMs(name: string, value: unknown): number {
  return integerIn(name, value, 0, MAX_EPOCH_MS, "an integer epoch ms");
}

/**
 * Checks a TTL.
 *
 * @param name What the value is, for the error.
 * @param value Anything.
 * @returns The value, an integer from 1 to {@linkcode MAX_TTL_MS} ms.
 * @throws {RangeError} Otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkTtlMs } from "./limits.ts";
 * assert.equal(checkTtlMs("ttlMs", 60_000), 60_000);
 * assert.throws(() => checkTtlMs("ttlMs", 0), RangeError);
 * ```
 */
export function checkTtlMs(name: string, value: unknown): number {
  return integerIn(name, value, 1, MAX_TTL_MS, "an integer of milliseconds");
}

/**
 * Checks a budget.
 *
 * @param name What the value is, for the error.
 * @param value Anything.
 * @param min The least accepted. @default 0
 * @returns The value, an integer from `min` to {@linkcode MAX_BUDGET}.
 * @throws {RangeError} Otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkBudget } from "./limits.ts";
 * assert.equal(checkBudget("budget.calls", 20), 20);
 * assert.throws(() => checkBudget("budget.calls", Infinity), RangeError);
 * ```
 */
export function checkBudget(name: string, value: unknown, min = 0): number {
  return integerIn(name, value, min, MAX_BUDGET, "an integer");
}

/**
 * Reads a tool's budget (or count) from a per-tool table: its own property only, so a tool named
 * `constructor` or `toString` never reads what `Object.prototype` holds.
 *
 * @param table A per-tool table.
 * @param toolName The tool.
 * @returns The number, or `undefined` when the table does not name the tool.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ownBudget } from "@tool-boundary/core/store";
 * assert.equal(ownBudget({ search: 2 }, "search"), 2);
 * assert.equal(ownBudget({}, "constructor"), undefined);
 * ```
 */
export function ownBudget(
  table: Readonly<Record<string, number>>,
  toolName: string,
): number | undefined {
  return Object.hasOwn(table, toolName) ? table[toolName] : undefined;
}

/**
 * Writes a tool's budget (or count) into a per-tool table as an own property. Plain assignment
 * would run `Object.prototype`'s `__proto__` setter instead (and throws where the prototype is
 * frozen).
 *
 * @param table A per-tool table.
 * @param toolName The tool.
 * @param value The number.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { setOwnBudget } from "@tool-boundary/core/store";
 * const table: Record<string, number> = {};
 * setOwnBudget(table, "__proto__", 3);
 * assert.deepEqual(Object.keys(table), ["__proto__"]);
 * ```
 */
export function setOwnBudget(table: Record<string, number>, toolName: string, value: number): void {
  if (Object.hasOwn(table, toolName)) table[toolName] = value;
  else {
    Object.defineProperty(table, toolName, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
}

/**
 * Checks a per-tool budget table and copies it: every own key a well-formed tool name, every
 * value a budget.
 *
 * @param name What the table is, for the error.
 * @param table Anything.
 * @param into Entries to start from (tool defaults), overridden by `table`.
 * @returns A new table with an own property per tool.
 * @throws {RangeError} When `table` is not an object, a key holds a lone surrogate, or a value is
 *   not a budget.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkPerTool } from "./limits.ts";
 * const table = checkPerTool("budget.perTool", JSON.parse('{"constructor":2,"__proto__":1}'));
 * assert.deepEqual(Object.keys(table), ["constructor", "__proto__"]);
 * assert.throws(() => checkPerTool("budget.perTool", { "half \ud800": 1 }), RangeError);
 * ```
 */
export function checkPerTool(
  name: string,
  table: unknown,
  into: Record<string, number> = {},
): Record<string, number> {
  if (typeof table !== "object" || table === null || Array.isArray(table)) {
    throw new RangeError(`Invalid ${name}: expected an object of budgets by tool name`);
  }
  for (const [toolName, value] of Object.entries(table)) {
    if (!isWellFormedName(toolName)) {
      throw new RangeError(`Invalid ${name}: a tool name is not well-formed Unicode`);
    }
    setOwnBudget(into, toolName, checkBudget(`${name} value`, value));
  }
  return into;
}

/**
 * Checks a cost: a tool's cost for a call, what it settled, a run's `budget.cost`.
 *
 * @param name What the value is, for the error.
 * @param value Anything.
 * @returns The value, an integer from 0 to {@linkcode MAX_COST}.
 * @throws {RangeError} Otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkCost } from "@tool-boundary/core/store";
 * assert.equal(checkCost("cost", 250), 250);
 * assert.throws(() => checkCost("cost", 2.5), RangeError);
 * assert.throws(() => checkCost("cost", -1), RangeError);
 * ```
 */
export function checkCost(name: string, value: unknown): number {
  return integerIn(name, value, 0, MAX_COST, "an integer");
}

/**
 * The rule of a cost budget, as every store's begin applies it: a call's cost fits when what the
 * run holds reserved, plus what it spent, plus the cost is within the run's `budget.cost`. A run
 * without a cost budget takes any cost.
 *
 * @param run The run as stored: its `budget.cost` and its `cost` so far (absent: none yet).
 * @param cost The call's cost.
 * @returns Whether the call may begin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fitsCostBudget } from "@tool-boundary/core/store";
 * const run = { budget: { calls: 10, perTool: {}, cost: 100 }, cost: { reserved: 30, spent: 60 } };
 * assert.equal(fitsCostBudget(run, 10), true);
 * assert.equal(fitsCostBudget(run, 11), false);
 * ```
 */
export function fitsCostBudget(run: Pick<RunState, "budget" | "cost">, cost: number): boolean {
  const limit = run.budget.cost;
  if (limit === undefined) return true;
  const held = run.cost === undefined ? 0 : run.cost.reserved + run.cost.spent;
  return held + cost <= limit;
}

/**
 * The checks every store applies to a start-run request before it writes anything.
 *
 * @param request The request.
 * @returns `INVALID_RUN_ID` when the run ID is not allowed, else `null`.
 * @throws {RangeError} When a number is out of its range or a tool name is not well-formed.
 */
export function checkStartRunRequest(request: StartRunRequest): "INVALID_RUN_ID" | null {
  if (!isSafeRunId(request?.runId)) return "INVALID_RUN_ID";
  checkEpochMs("deadline", request.deadline);
  checkEpochMs("now", request.now);
  checkTtlMs("ttlMs", request.ttlMs);
  checkBudget("budget.calls", request.budget?.calls);
  checkPerTool("budget.perTool", request.budget.perTool);
  if (request.budget.cost !== undefined) checkCost("budget.cost", request.budget.cost);
  return null;
}

/**
 * The checks every store applies to a begin request before it writes anything.
 *
 * @param request The request.
 * @returns `INVALID_RUN_ID` or `INVALID_TOOL_CALL_ID` when an ID is not allowed, else `null`.
 * @throws {RangeError} When a number is out of its range or the tool name is not well-formed.
 */
export function checkBeginRequest(
  request: BeginRequest,
): "INVALID_RUN_ID" | "INVALID_TOOL_CALL_ID" | null {
  return checkBegin(request, true);
}

/**
 * {@linkcode checkBeginRequest} but for the digest, of a request whose digest is valid by
 * construction: a `PendingBeginRequest` of the boundary's (see `./begin_request.ts`).
 *
 * @param request The request.
 * @returns `INVALID_RUN_ID` or `INVALID_TOOL_CALL_ID` when an ID is not allowed, else `null`.
 * @throws {RangeError} When a number is out of its range or the tool name is not well-formed.
 */
export function checkBeginRequestButDigest(
  request: BeginRequest,
): "INVALID_RUN_ID" | "INVALID_TOOL_CALL_ID" | null {
  return checkBegin(request, false);
}

function checkBegin(
  request: BeginRequest,
  digest: boolean,
): "INVALID_RUN_ID" | "INVALID_TOOL_CALL_ID" | null {
  if (!isSafeRunId(request?.runId)) return "INVALID_RUN_ID";
  if (!isSafeToolCallId(request.toolCallId)) return "INVALID_TOOL_CALL_ID";
  if (!isWellFormedName(request.toolName)) {
    throw new RangeError("Invalid toolName: expected a string of well-formed Unicode");
  }
  if (digest && !isRequestDigest(request.requestDigest)) {
    throw new RangeError("Invalid requestDigest: expected 1 to 128 of A-Z a-z 0-9 _ -");
  }
  checkEpochMs("now", request.now);
  checkTtlMs("ttlMs", request.ttlMs);
  if (request.startedAt !== undefined) checkEpochMs("startedAt", request.startedAt);
  if (request.cost !== undefined) checkCost("cost", request.cost);
  return null;
}

/**
 * The checks every store applies to a complete request before it reads or writes anything.
 *
 * @param request The request.
 * @returns `RECORD_EXPIRED` when an ID is not allowed (no such record can exist), else `null`.
 * @throws {RangeError} When `now` is out of its range.
 * @throws {TypeError} When `proof` is given and is not `{ hash, sig, keyId }` of base64url
 *   `hash` (43) and `sig` (86) and a key ID of 1 to 128 of `A-Z a-z 0-9 _ . : -`.
 */
export function checkCompleteRequest(request: CompleteRequest): "RECORD_EXPIRED" | null {
  checkEpochMs("now", request?.now);
  if (request.proof !== undefined) checkRecordProof(request.proof);
  if (request.spent !== undefined) checkCost("spent", request.spent);
  return isSafeRunId(request.runId) && isSafeToolCallId(request.toolCallId)
    ? null
    : "RECORD_EXPIRED";
}

/**
 * The checks every store applies to an end-run request before it reads or writes anything.
 *
 * @param request The request.
 * @returns `RUN_NOT_FOUND` when the run ID is not allowed (no such run can exist), else `null`.
 * @throws {RangeError} When `now` is out of its range, or `page` is given with a `from` or a
 *   `limit` that is not an integer from 0.
 */
export function checkEndRunRequest(request: EndRunRequest): "RUN_NOT_FOUND" | null {
  checkEpochMs("now", request?.now);
  const page = request.page;
  if (page !== undefined) {
    integerIn("page.from", page?.from, 0, Number.MAX_SAFE_INTEGER, "an integer");
    integerIn("page.limit", page?.limit, 0, Number.MAX_SAFE_INTEGER, "an integer");
  }
  return isSafeRunId(request.runId) ? null : "RUN_NOT_FOUND";
}

/**
 * The checks every store applies to the caps of a read-facts request.
 *
 * @param request The request.
 * @throws {RangeError} When `maxFacts` or `maxBytes` is neither an integer from 0 to
 *   `Number.MAX_SAFE_INTEGER` nor `Infinity` (no cap).
 */
export function checkReadFactsRequest(request: ReadFactsRequest): void {
  for (const name of ["maxFacts", "maxBytes"] as const) {
    const value = request?.[name];
    if (value !== Number.POSITIVE_INFINITY) {
      integerIn(name, value, 0, Number.MAX_SAFE_INTEGER, "an integer or Infinity");
    }
  }
}

/**
 * Checks the arguments of `listRuns` before a store reads anything.
 *
 * @param request The request.
 * @returns The limit, and the position the cursor names (`null` for the first page).
 * @throws {RangeError} When `limit` is not an integer from 1 to `MAX_LIST_RUNS`, or `cursor` is
 *   neither absent, `null`, nor a position of the form a page's `next` has
 *   (`<startedAt>.<runId>`; one no page gave is taken).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkListRunsRequest } from "@tool-boundary/core/store";
 * assert.deepEqual(checkListRunsRequest({ limit: 10 }), { limit: 10, after: null });
 * assert.throws(() => checkListRunsRequest({ limit: 0 }), RangeError);
 * assert.throws(() => checkListRunsRequest({ limit: 1, cursor: "nope" }), RangeError);
 * ```
 */
export function checkListRunsRequest(
  request: ListRunsRequest,
): { limit: number; after: { startedAt: number; runId: string } | null } {
  const limit = integerIn("limit", request?.limit, 1, MAX_LIST_RUNS, "an integer");
  const cursor = request.cursor;
  if (cursor === undefined || cursor === null) return { limit, after: null };
  const after = typeof cursor === "string" ? readRunsCursor(cursor) : null;
  if (after === null) {
    throw new RangeError("Invalid cursor: expected the next of a page (<startedAt>.<runId>)");
  }
  return { limit, after };
}
