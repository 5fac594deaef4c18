/**
 * `verifyRun`: the checks of an exported run against the ledger's public key, for the `./verify`
 * entry (mod.ts) and its program (cli.ts).
 *
 * @module
 */
import {
  canonicalJson,
  isPlainObject,
  type JsonValue,
  MAX_CHECK_DEPTH,
  snapshotJson,
} from "../core/json.ts";
import {
  BUNDLE_FORMAT,
  importVerifier,
  type LedgerVerifier,
  receiptMessage,
  recordHash,
  recordMessage,
  sha256Base64url,
} from "../core/ledger.ts";
import type { RunReceipt } from "../core/types.ts";

/** Why a bundle does not verify. */
export type VerifyReason =
  | "ALTERED"
  | "MISSING"
  | "INSERTED"
  | "REORDERED"
  | "BAD_SIGNATURE"
  | "UNSIGNED"
  | "FACTS_ALTERED"
  | "OTHER_RUN";

/** What {@linkcode verifyRun} finds. */
export type RunVerdict =
  | {
    /** Every check passed. */
    ok: true;
    /** The bundle has a receipt (the run was sealed): order, presence and facts are covered. */
    sealed: boolean;
    /** Calls covered: the receipt's when sealed, else the records'. */
    calls: number;
  }
  | {
    /** A check failed. */
    ok: false;
    /** The first call that differs, or `null` when the run, the receipt or the facts do. */
    toolCallId: string | null;
    /** What differs. */
    reason: VerifyReason;
  };

/** Options of {@linkcode verifyRun}. */
export interface VerifyOptions {
  /**
   * The key ID the proofs and the receipt must name, when the boundary was given an explicit
   * `keyId`. @default the RFC 7638 thumbprint of `publicKey`
   */
  keyId?: string;
  /**
   * The longest bundle read, in UTF-16 units of its JSON text: the copy stops, with a TypeError,
   * as soon as the bundle is certain to be longer. @default MAX_BUNDLE_LENGTH (512 Mi)
   */
  maxLength?: number;
  /**
   * The run instance the auditor expects, e.g. the `RunContext` that `startRun` returned (or
   * `runId` and `startedAt` of `GET /v1/runs/{runId}`): the bundle's run must have this
   * `runId` and, when given, this `startedAt`, else OTHER_RUN. A run ID can be started again
   * once an earlier run's state is gone; without `startedAt`, a bundle of any instance of the ID
   * verifies as the instance it names (`bundle.run.startedAt`, which its signatures cover).
   */
  run?: { runId: string; startedAt?: number };
}

/** The longest bundle read, in UTF-16 units of its JSON text: past it, a TypeError. */
export const MAX_BUNDLE_LENGTH = 512 * 1024 * 1024;

type Obj = Record<string, unknown>;

/** A run instance: its ID and its start. */
interface Instance {
  runId: string;
  startedAt: number;
}

/**
 * Verifies an exported run against the ledger's public key. The bundle is read once, into a
 * plain copy (a getter runs once; anything that is not JSON data, or a bundle longer than
 * {@linkcode MAX_BUNDLE_LENGTH}, is a TypeError), and the checks run on that copy. It answers
 * `ok: true` only when every completed record in the bundle carries a proof that holds for the
 * bundle's run instance (`run.runId` and `run.startedAt`, which each record's signature names).
 * In this order:
 *
 * 0. With `options.run`: the bundle's run is that instance (else OTHER_RUN, `toolCallId: null`).
 * 1. Sealed (a receipt): the receipt's `keyId` is the key's and its `sig` verifies, its `runId`
 *    and `startedAt` are the run's (else BAD_SIGNATURE, `toolCallId: null`).
 * 2. Position by position, the records against the receipt's calls. The same ID at a position:
 *    the record's recomputed hash must equal the hash the receipt pins for it, if any (ALTERED);
 *    it must be of the run (INSERTED); its proof must be there (UNSIGNED; only a record still
 *    PROJECTING of a call INCOMPLETE at the seal may lack one), hash what the record hashes to
 *    (ALTERED), name the key and verify for this run instance (BAD_SIGNATURE). Another ID at a
 *    position, first of: an ID seen before (INSERTED, that ID); an ID the receipt lacks: ALTERED
 *    naming the receipt's call when the record fails its own proof and the receipt's ID is
 *    nowhere in the bundle, else INSERTED naming the record; the receipt's call absent from the
 *    bundle (MISSING, the receipt's ID); else REORDERED, naming the call the receipt lists
 *    there. Records past the receipt's end are INSERTED; receipt calls past the bundle's end
 *    MISSING.
 * 3. The canonical JSON of `facts` must hash to `factsHash` (FACTS_ALTERED, `toolCallId: null`).
 *
 * Not sealed (`receipt: null`): each record on its own, in order: an ID seen before or another
 * run's record is INSERTED; a record other than PROJECTING without a proof is UNSIGNED; a proof
 * that does not hold is ALTERED or BAD_SIGNATURE as above; `facts` must be `null`
 * (FACTS_ALTERED). Deletion and order are not covered until the run is sealed.
 *
 * @param bundle What `exportRun` returned (or its JSON, parsed).
 * @param publicKey The ledger's public key, an Ed25519 JWK.
 * @param options The expected key ID, when not the thumbprint; the run instance expected.
 * @returns `{ ok: true, sealed, calls }`, or the first difference.
 * @throws {TypeError} When the key is not an Ed25519 public JWK (or cannot be read), the options
 *   are not options, or the bundle is not one (not JSON data, another `format`, a `run` without
 *   a string `runId` and an integer `startedAt`, `records` not an array of objects with string
 *   IDs).
 */
export async function verifyRun(
  bundle: unknown,
  publicKey: JsonWebKey,
  options: VerifyOptions = {},
): Promise<RunVerdict> {
  const { keyId, maxLength, expected } = readOptions(options);
  const verifier = await importVerifier(publicKey, keyId);
  const snapshot = snapshotJson(bundle, MAX_CHECK_DEPTH, maxLength);
  if ("problem" in snapshot) throw new TypeError(`Invalid bundle: ${snapshot.problem}`);
  const b = snapshot.value;
  if (!isPlainObject(b) || b.format !== BUNDLE_FORMAT) {
    throw new TypeError(`Invalid bundle: expected format "${BUNDLE_FORMAT}"`);
  }
  const run = b.run, records = b.records;
  if (
    !isPlainObject(run) || typeof run.runId !== "string" || !Number.isSafeInteger(run.startedAt)
  ) {
    throw new TypeError("Invalid bundle: expected a run with a runId and a startedAt");
  }
  if (!Array.isArray(records)) throw new TypeError("Invalid bundle: expected records");
  for (const record of records) {
    if (
      !isPlainObject(record) || typeof record.toolCallId !== "string" ||
      typeof record.runId !== "string"
    ) {
      throw new TypeError("Invalid bundle: each record needs a string runId and toolCallId");
    }
  }
  const instance: Instance = { runId: run.runId, startedAt: run.startedAt as number };
  if (
    expected !== undefined && (expected.runId !== instance.runId ||
      (expected.startedAt !== undefined && expected.startedAt !== instance.startedAt))
  ) {
    return fail(null, "OTHER_RUN");
  }
  const recs = records as Obj[];
  if (b.receipt === null || b.receipt === undefined) {
    return verifyUnsealed(verifier, instance, recs, b.facts);
  }
  return verifySealed(verifier, instance, recs, b.receipt, b.facts);
}

/** The options, each read once inside a guard, and checked. */
function readOptions(options: unknown): {
  keyId: string | undefined;
  maxLength: number;
  expected: { runId: string; startedAt: number | undefined } | undefined;
} {
  let keyId: unknown, maxLength: unknown, run: unknown, runId: unknown, startedAt: unknown;
  try {
    const o = options as Partial<Record<string, unknown>> | null | undefined;
    keyId = o?.keyId;
    maxLength = o?.maxLength;
    run = o?.run;
    if (run !== undefined && run !== null && typeof run === "object") {
      const r = run as Partial<Record<string, unknown>>;
      runId = r.runId;
      startedAt = r.startedAt;
    }
  } catch (error) {
    throw new TypeError("Invalid options: they cannot be read", { cause: error });
  }
  if (keyId !== undefined && typeof keyId !== "string") {
    throw new TypeError("Invalid options.keyId: expected a string");
  }
  if (maxLength !== undefined && typeof maxLength !== "number") {
    throw new TypeError("Invalid options.maxLength: expected a number");
  }
  if (
    run !== undefined && (typeof runId !== "string" ||
      (startedAt !== undefined && !Number.isSafeInteger(startedAt)))
  ) {
    throw new TypeError("Invalid options.run: expected { runId, startedAt? } of a run");
  }
  return {
    keyId,
    maxLength: maxLength ?? MAX_BUNDLE_LENGTH,
    expected: run === undefined
      ? undefined
      : { runId: runId as string, startedAt: startedAt as number | undefined },
  };
}

const fail = (toolCallId: string | null, reason: VerifyReason): RunVerdict => ({
  ok: false,
  toolCallId,
  reason,
});

/**
 * A record against its own proof, for the bundle's run instance: `null` when it holds, else the
 * reason (UNSIGNED when it has none); `hash` is what the record hashes to.
 */
async function ownProof(
  verifier: LedgerVerifier,
  instance: Instance,
  record: Obj,
  hash: string,
): Promise<"ALTERED" | "BAD_SIGNATURE" | "UNSIGNED" | null> {
  const proof = record.proof;
  if (proof === undefined) return "UNSIGNED";
  if (!isPlainObject(proof)) return "ALTERED";
  if (proof.hash !== hash) return "ALTERED";
  if (proof.keyId !== verifier.keyId) return "BAD_SIGNATURE";
  const { runId, startedAt } = instance;
  const message = recordMessage(runId, startedAt, record.toolCallId as string, hash);
  return await verifier.verify(message, proof.sig) ? null : "BAD_SIGNATURE";
}

async function verifyUnsealed(
  verifier: LedgerVerifier,
  instance: Instance,
  records: Obj[],
  facts: unknown,
): Promise<RunVerdict> {
  const seen = new Set<string>();
  for (const record of records) {
    const id = record.toolCallId as string;
    if (seen.has(id) || record.runId !== instance.runId) return fail(id, "INSERTED");
    seen.add(id);
    const problem = await ownProof(verifier, instance, record, await recordHash(record));
    // Only a call still in flight has no proof yet.
    if (problem !== null && !(problem === "UNSIGNED" && record.status === "PROJECTING")) {
      return fail(id, problem);
    }
  }
  if (facts !== null && facts !== undefined) return fail(null, "FACTS_ALTERED");
  return { ok: true, sealed: false, calls: records.length };
}

async function verifySealed(
  verifier: LedgerVerifier,
  instance: Instance,
  records: Obj[],
  receiptValue: unknown,
  facts: unknown,
): Promise<RunVerdict> {
  const receipt = await checkReceipt(verifier, instance, receiptValue);
  if (receipt === null) return fail(null, "BAD_SIGNATURE");
  const calls = receipt.calls;
  const inReceipt = new Set(calls.map((call) => call.toolCallId));
  const inBundle = new Set(records.map((record) => record.toolCallId as string));
  const seen = new Set<string>();
  for (let i = 0; i < Math.max(calls.length, records.length); i++) {
    const call = calls[i], record = records[i];
    if (record === undefined) return fail(call!.toolCallId, "MISSING");
    const id = record.toolCallId as string;
    if (call === undefined) return fail(id, "INSERTED");
    const hash = await recordHash(record);
    if (id === call.toolCallId) {
      seen.add(id);
      // What the seal pinned, first: any edit since shows as such.
      if (call.hash !== null && hash !== call.hash) return fail(id, "ALTERED");
      if (record.runId !== instance.runId) return fail(id, "INSERTED");
      const problem = await ownProof(verifier, instance, record, hash);
      // Only a call in flight at the seal, and still, may be without a proof.
      const inFlight = "state" in call && call.state === "INCOMPLETE" &&
        record.status === "PROJECTING";
      if (problem !== null && !(problem === "UNSIGNED" && inFlight)) return fail(id, problem);
      continue;
    }
    if (seen.has(id)) return fail(id, "INSERTED");
    if (!inReceipt.has(id)) {
      const altered = !inBundle.has(call.toolCallId) &&
        (await ownProof(verifier, instance, record, hash)) !== null;
      return altered ? fail(call.toolCallId, "ALTERED") : fail(id, "INSERTED");
    }
    if (!inBundle.has(call.toolCallId)) return fail(call.toolCallId, "MISSING");
    return fail(call.toolCallId, "REORDERED");
  }
  if (!Array.isArray(facts)) return fail(null, "FACTS_ALTERED");
  const factsHash = await sha256Base64url(canonicalJson(facts as JsonValue));
  if (factsHash !== receipt.factsHash) return fail(null, "FACTS_ALTERED");
  return { ok: true, sealed: true, calls: calls.length };
}

/** The receipt, when it is one this key signed for this run instance; else `null`. */
async function checkReceipt(
  verifier: LedgerVerifier,
  instance: Instance,
  value: unknown,
): Promise<RunReceipt | null> {
  if (!isPlainObject(value)) return null;
  const { calls, factsHash, keyId, sig } = value;
  const { runId, startedAt } = instance;
  if (
    value.runId !== runId || value.startedAt !== startedAt || keyId !== verifier.keyId ||
    typeof factsHash !== "string" || !Array.isArray(calls)
  ) {
    return null;
  }
  const unsigned = { runId, startedAt, calls, factsHash, keyId } as Omit<RunReceipt, "sig">;
  if (!await verifier.verify(receiptMessage(unsigned), sig)) return null;
  // Signed by the key: still, only the shape this format defines.
  for (const call of calls) {
    if (!isPlainObject(call) || typeof call.toolCallId !== "string" || !isReceiptCall(call)) {
      return null;
    }
  }
  return { ...unsigned, sig: sig as string };
}

/** A call of a receipt: signed with a hash, UNSIGNED with a hash or none, INCOMPLETE with none. */
function isReceiptCall(call: Obj): boolean {
  const { hash, state } = call;
  if (state === undefined) return typeof hash === "string";
  if (state === "UNSIGNED") return hash === null || typeof hash === "string";
  return state === "INCOMPLETE" && hash === null;
}
