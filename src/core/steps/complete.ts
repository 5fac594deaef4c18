/**
 * Step 7 of `invoke`: the record ends READY or ERROR, in one atomic store operation (tried again
 * while the store fails, within `storeRetryMs`: the tool has run, and its outcome is kept when
 * the store comes back), and the observer hears how the call finished.
 *
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import { type LedgerSigner, recordHash, recordMessage } from "../ledger.ts";
import type { RecordCost, RecordProof } from "../types.ts";
import { applyOutcome } from "../lifecycle.ts";
import { toCanonicalRecord } from "../run/inspect.ts";
import type { CompleteOutcome, StoredRecord } from "../store.ts";
import { emit } from "../setup.ts";
import { retried } from "../store_retry.ts";
import type { Call } from "./call.ts";
import { result } from "./result.ts";

/** Not expected: every step decides an outcome, or the catch-all in `invoke` does. */
const UNDECIDED: CompleteOutcome = {
  status: "ERROR",
  errorCode: "EXECUTION_FAILED",
  rawJson: null,
};

/**
 * Completes the record with the call's outcome, for the attempt that began it; a complete that
 * threw is tried again with the same request for up to `storeRetryMs` after its first failure.
 *
 * @returns `null` when the record is READY, else the code the agent gets: the outcome's, or the
 *   store's (RECORD_EXPIRED, ILLEGAL_TRANSITION, STORE_UNAVAILABLE) when it could not be written.
 */
export async function complete(call: Call): Promise<ErrorCode | null> {
  const { setup, runId, toolCallId } = call;
  const outcome = call.outcome ?? UNDECIDED;
  let code: ErrorCode | null = outcome.status === "ERROR" ? outcome.errorCode : null;
  let failure = call.error;
  let proof: RecordProof | undefined;
  // A call begun with a cost: what it reserved, and what it spent once the record says so.
  const reserved = call.begun?.cost?.reserved;
  let cost: RecordCost | undefined = reserved === undefined ? undefined : { reserved, spent: null };
  try {
    const now = setup.clock();
    const spent = call.spent();
    // Signed before it is written, and sent with the complete: no round trip of its own.
    const ledger = setup.ledger;
    // invoke checked the key before the call began: its signer is there, no await needed.
    const signed = ledger === undefined || call.begun === null
      ? undefined
      : await proofOf(ledger.signer ?? await ledger.ready, call, call.begun, outcome, now, spent);
    // The same request on every try: the same attempt, `now` and proof, so a try that finds the
    // record already written by an earlier one is answered that record.
    const request = {
      runId,
      toolCallId,
      attemptId: call.attemptId,
      outcome,
      now,
      ...(signed === undefined ? {} : { proof: signed }),
      ...(spent === undefined ? {} : { spent }),
    };
    const completed = await retried(() => setup.store.complete(request), setup.storeRetryMs);
    if (!completed.ok) code = completed.code;
    else {
      proof = completed.record.proof;
      if (completed.record.cost !== undefined) cost = { ...completed.record.cost };
    }
  } catch (thrown) {
    code = "STORE_UNAVAILABLE";
    failure = thrown;
  }
  if (setup.observe !== undefined) {
    // The observer's own copy of the agent's result: nothing it does can change that.
    const agentResult = result(call, code);
    emit(setup, {
      type: "call.finished",
      runId,
      toolCallId,
      toolName: call.tool.name,
      status: agentResult.status,
      code: agentResult.status === "ERROR" ? agentResult.code : null,
      durationMs: setup.clock() - call.invokedAt,
      result: structuredClone(agentResult),
      ...(proof === undefined ? {} : { proof: { ...proof } }),
      ...(cost === undefined ? {} : { cost }),
      ...(failure === undefined ? {} : { error: failure }),
    });
  }
  return code;
}

/**
 * The proof of the record this complete writes: the begun record with the outcome applied at
 * `now`, exactly as `inspect()` will read it back, hashed and signed for the call's run
 * instance (its `startedAt`, which preflight checked).
 */
async function proofOf(
  signer: LedgerSigner,
  call: Call,
  begun: StoredRecord,
  outcome: CompleteOutcome,
  now: number,
  spent: number | undefined,
): Promise<RecordProof> {
  const hash = await recordHash(toCanonicalRecord(applyOutcome(begun, outcome, now, spent)));
  // The instance the call began in: the caller's context, or the one the store's begin answered.
  const message = recordMessage(begun.runId, call.run!.startedAt, begun.toolCallId, hash);
  const sig = await signer.sign(message);
  return { hash, sig, keyId: signer.keyId };
}
