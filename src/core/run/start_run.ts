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
import { retried } from "../store_retry.ts";
import { storeCall } from "./store_call.ts";

/**
 * Starts a run; `ToolBoundary.startRun` tells the rules.
 *
 * @returns The immutable run context.
 * @throws {BoundaryError} INVALID_RUN_ID, RUN_ALREADY_EXISTS, DEADLINE_EXCEEDED or
 *   STORE_UNAVAILABLE.
 * @throws {RangeError} When a deadline, TTL or budget is out of its range.
 * @throws {TypeError} When the boundary's `ledgerKey` is not a key pair (`d` not the private key
 *   of `x`, or refused by WebCrypto).
 */
export async function startRun(setup: Setup, options: StartRunOptions): Promise<RunContext> {
  // A ledger key that cannot sign is refused before any run exists.
  const keyChecked = ledgerChecked(setup);
  if (keyChecked !== undefined) await keyChecked;
  const runId = options.runId ?? crypto.randomUUID();
  if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
  const now = checkEpochMs("clock()", setup.clock());
  let deadline: number;
  if (options.deadline !== undefined) {
    deadline = Number(options.deadline);
    if (deadline <= now) throw new BoundaryError("DEADLINE_EXCEEDED");
    checkEpochMs("deadline", deadline);
  } else {
    deadline = now + checkTtlMs("ttlMs", options.ttlMs ?? setup.runTtlMs);
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
  // One attempt, sent again while the store fails (within `storeRetryMs`): a repeat of the
  // attempt is answered the run it started.
  const request = {
    runId,
    deadline,
    budget: { calls, perTool },
    // The run outlives its deadline by a record's TTL, within the one TTL range.
    ttlMs: Math.min(deadline - now + setup.recordTtlMs, MAX_TTL_MS),
    attemptId: crypto.randomUUID(),
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
    }),
  });
}
