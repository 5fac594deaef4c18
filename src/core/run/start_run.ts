/**
 * `startRun`: the run's ID, deadline and budgets, checked and fixed, then the run's state
 * created in the store.
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { isSafeRunId } from "../ids.ts";
import {
  checkBudget,
  checkCost,
  checkEpochMs,
  checkPerTool,
  checkTtlMs,
  MAX_TTL_MS,
  setOwnBudget,
} from "../limits.ts";
import type { StartRunOptions } from "../options.ts";
import { emit, ledgerChecked, type Setup } from "../setup.ts";
import type { RunState } from "../store.ts";
import type { RunContext } from "../types.ts";
import { canonicalJson } from "../json.ts";
import { retried } from "../store_retry.ts";
import { storeCall } from "./store_call.ts";

/**
 * Starts a run; `ToolBoundary.startRun` tells the rules.
 *
 * @returns The immutable run context.
 * @throws {BoundaryError} INVALID_RUN_ID, RUN_ALREADY_EXISTS, DEADLINE_EXCEEDED or
 *   STORE_UNAVAILABLE.
 * @throws {RangeError} When a deadline, TTL or budget is out of its range, or the idempotency key
 *   is not 1 to 255 visible ASCII characters.
 * @throws {TypeError} When the boundary's `ledgerKey` is not a key pair (`d` not the private key
 *   of `x`, or refused by WebCrypto).
 */
export async function startRun(setup: Setup, options: StartRunOptions): Promise<RunContext> {
  // A ledger key that cannot sign is refused before any run exists.
  const keyChecked = ledgerChecked(setup);
  if (keyChecked !== undefined) await keyChecked;
  const key = options.idempotencyKey;
  if (key !== undefined && !isIdempotencyKey(key)) {
    throw new RangeError(
      "Invalid idempotencyKey: expected 1 to 255 visible ASCII characters (no space)",
    );
  }
  const givenRunId = options.runId;
  // A start that may be sent again names the same run every time: its ID comes from the key.
  const runId = givenRunId ?? (key === undefined ? crypto.randomUUID() : await runIdOf(key));
  if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
  const now = checkEpochMs("clock()", setup.clock());
  const deadlineOption = options.deadline;
  const givenDeadline = deadlineOption === undefined ? undefined : Number(deadlineOption);
  const givenTtlMs = options.ttlMs;
  let deadline: number;
  if (givenDeadline !== undefined) {
    deadline = givenDeadline;
    if (deadline <= now) throw new BoundaryError("DEADLINE_EXCEEDED");
    checkEpochMs("deadline", deadline);
  } else {
    deadline = now + checkTtlMs("ttlMs", givenTtlMs ?? setup.runTtlMs);
    checkEpochMs("deadline (now + ttlMs)", deadline);
  }
  const budget = options.budget ?? setup.defaultBudget;
  const calls = checkBudget("budget.calls", budget?.calls, 1);
  const perTool: Record<string, number> = {};
  for (const tool of setup.tools.values()) {
    if (tool.budget !== undefined) {
      setOwnBudget(perTool, tool.name, checkBudget(`budget of ${tool.name}`, tool.budget));
    }
  }
  if (budget.perTool !== undefined) checkPerTool("budget.perTool", budget.perTool, perTool);
  const cost = budget.cost === undefined ? undefined : checkCost("budget.cost", budget.cost);
  const budgets = cost === undefined ? { calls, perTool } : { calls, perTool, cost };
  // One attempt, sent again while the store fails (within `storeRetryMs`): a repeat of the
  // attempt is answered the run it started. With a key, the key and the start's options are the
  // attempt, so the caller's own repeat is one too, and the key with other options is not.
  const attemptId = key === undefined ? crypto.randomUUID() : await sha256Hex(canonicalJson({
    idempotencyKey: key,
    runId: givenRunId ?? null,
    deadline: givenDeadline ?? null,
    ttlMs: givenTtlMs ?? null,
    budget: budgets,
  }));
  const request = {
    runId,
    deadline,
    budget: budgets,
    // The run outlives its deadline by a record's TTL, within the one TTL range.
    ttlMs: Math.min(deadline - now + setup.recordTtlMs, MAX_TTL_MS),
    attemptId,
    now,
  };
  const outcome = await storeCall(() =>
    retried(() => setup.store.startRun(request), setup.storeRetryMs)
  );
  if (!outcome.ok) throw new BoundaryError(outcome.code);
  const run = toRunContext(outcome.run);
  emit(setup, { type: "run.started", runId, deadline: run.deadline });
  return run;
}

/** 1 to 255 visible ASCII characters: what an `Idempotency-Key` header may carry as it is. */
function isIdempotencyKey(value: unknown): value is string {
  return typeof value === "string" && /^[\x21-\x7e]{1,255}$/.test(value);
}

/**
 * The run ID of a start with an idempotency key and no run ID: the key's hash in the form of a
 * UUID (version 8, RFC 9562), as a generated run ID has, so that every repeat names one run.
 */
async function runIdOf(key: string): Promise<string> {
  const hex = (await sha256Hex(`tool-boundary run ${key}`)).slice(0, 32).split("");
  hex[12] = "8"; // version
  hex[16] = "89ab"[parseInt(hex[16]!, 16) & 3]!; // variant 10
  const id = hex.join("");
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${
    id.slice(20)
  }`;
}

/** The SHA-256 of a text's UTF-8, in hex. */
async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A run's state as the immutable context every call is given. */
export function toRunContext(
  state: Pick<RunState, "runId" | "deadline" | "startedAt" | "budget">,
): RunContext {
  return Object.freeze({
    runId: state.runId,
    deadline: state.deadline,
    startedAt: state.startedAt,
    budget: Object.freeze({
      calls: state.budget.calls,
      perTool: Object.freeze({ ...state.budget.perTool }),
      ...(state.budget.cost === undefined ? {} : { cost: state.budget.cost }),
    }),
  });
}
