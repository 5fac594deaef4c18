/**
 * Step 3 of `invoke`: the run accepts the call. Checked here first (the caller gave up; and,
 * given the run's context, ended by this boundary or past its deadline), then atomically by the
 * store, which checks the run instance, creates the PROJECTING record and answers the run's
 * context (what a call given only a run reference needs).
 *
 * @module
 */
import { PendingBeginRequest, takesDigestsLater } from "../begin_request.ts";
import { PendingDigest, requestDigestNow } from "../digest.ts";
import type { BegunRun, Store } from "../store.ts";
import type { BoundaryResult, RunInstance } from "../types.ts";
import { emit } from "../setup.ts";
import type { Call } from "./call.ts";
import { replayResult } from "./replay.ts";

/**
 * Begins the call: one atomic store operation that checks the run, the deadline, the key and
 * the budgets and creates the record, or refuses and writes nothing.
 *
 * When the boundary replays duplicates, a key begun before with the same request answers with
 * its recorded result instead (`replayed: true`; nothing runs, no budget is used).
 *
 * @returns `null` once the record exists, else the refusal or the replayed result (nothing is
 *   recorded). When the caller aborted while the store was asked, the call's outcome is already
 *   ERROR CANCELLED: the tool never runs and complete ends the record so.
 */
export async function begin(call: Call): Promise<BoundaryResult | null> {
  const { setup, run, given, runId, instance, tool, toolCallId } = call;
  // The store tells a repeat from another request under the same key by this digest alone: it
  // covers the tool as well as the input, so another tool is another request. MemoryStore's own
  // begin takes it as a PendingDigest, hashed only if the store ever compares it.
  const later = beginTakingDigestsLater(setup.store);
  const pending = later === undefined
    ? null
    : PendingDigest.of(tool.name, call.requestJson, call.requestBytes);
  let digest = pending === null ? requestDigestNow(tool.name, call.input) : "";
  if (typeof digest !== "string") digest = await digest;
  const now = setup.clock();
  if (given !== null && setup.ended.has(given)) return call.refuse("RUN_INACTIVE");
  if (run !== null && now >= run.deadline) return call.refuse("DEADLINE_EXCEEDED");
  if (call.cancelled()) return call.refuse("CANCELLED");
  const attemptId = call.attemptId = crypto.randomUUID();
  const replay = setup.onDuplicate === "replay";
  let begun;
  try {
    begun = pending !== null
      ? await later!.call(
        setup.store,
        new PendingBeginRequest(
          {
            runId,
            toolCallId,
            toolName: tool.name,
            requestJson: call.requestJson,
            attemptId,
            ttlMs: setup.recordTtlMs,
            now,
            ...(instance === undefined ? {} : { startedAt: instance }),
            ...(call.cost === undefined ? {} : { cost: call.cost }),
          },
          replay,
          pending,
        ),
      )
      : await setup.store.begin({
        runId,
        toolCallId,
        toolName: tool.name,
        requestJson: call.requestJson,
        requestDigest: digest,
        ...(replay ? { replay } : {}),
        attemptId,
        ttlMs: setup.recordTtlMs,
        now,
        ...(instance === undefined ? {} : { startedAt: instance }),
        ...(call.cost === undefined ? {} : { cost: call.cost }),
      });
  } catch (error) {
    return call.refuse("STORE_UNAVAILABLE", error);
  }
  if (!begun.ok) {
    // `record` is absent when the store cannot tell the request the key was begun with.
    if (begun.code !== "DUPLICATE_TOOL_CALL" || !replay || begun.record === undefined) {
      return call.refuse(begun.code);
    }
    const replayed = replayResult(toolCallId, begun.record);
    if (replayed.status === "ERROR" && replayed.replayed !== true) {
      return call.refuse(replayed.code);
    }
    if (setup.observe !== undefined) {
      emit(setup, {
        type: "call.replayed",
        runId,
        toolCallId,
        toolName: tool.name,
        status: replayed.status,
        code: replayed.status === "ERROR" ? replayed.code : null,
        result: structuredClone(replayed),
      });
    }
    return replayed;
  }
  call.begun = begun.record;
  if (run === null) {
    // Given a run reference, the tool gets the instance the store began in.
    call.run = runInstance(runId, begun.run);
    if (call.run === null) return call.fail("STORE_UNAVAILABLE", null); // no run in the answer
  }
  // A store that kept no reservation would let the call past the cost budget: it does not run.
  if (call.cost !== undefined && begun.record?.cost?.reserved !== call.cost) {
    return call.fail("STORE_UNAVAILABLE", null, new TypeError("The store kept no cost"));
  }
  if (call.cancelled()) call.fail("CANCELLED", null);
  return null;
}

/** The run instance a begin answered, as the tool gets it; `null` for an answer without one. */
function runInstance(runId: string, run: BegunRun | undefined): RunInstance | null {
  const deadline = run?.deadline;
  const startedAt = run?.startedAt;
  if (!Number.isSafeInteger(deadline) || !Number.isSafeInteger(startedAt)) return null;
  return Object.freeze({ runId, deadline: deadline!, startedAt: startedAt! });
}

/**
 * The store's `begin`, when it is one that takes a {@linkcode PendingBeginRequest}; read without
 * throwing (a store whose property read throws gets the plain request, and the same failure when
 * `begin` is called).
 */
function beginTakingDigestsLater(store: Store): Store["begin"] | undefined {
  let begin: unknown;
  try {
    begin = store.begin;
  } catch {
    return undefined;
  }
  return takesDigestsLater(begin) ? begin as Store["begin"] : undefined;
}
