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
  | "FACTS_ALTERED";

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
    /** The first call that differs, or `null` when the receipt or the facts do. */
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
}

/** The longest bundle read, in UTF-16 units of its JSON text: past it, a TypeError. */
export const MAX_BUNDLE_LENGTH = 512 * 1024 * 1024;

type Obj = Record<string, unknown>;

/**
 * Verifies an exported run against the ledger's public key. The bundle is read once, into a
 * plain copy (a getter runs once; anything that is not JSON data, or a bundle longer than
 * {@linkcode MAX_BUNDLE_LENGTH}, is a TypeError), and the checks run on that copy, in this order:
 *
 * 1. Sealed (a receipt): the receipt's `keyId` is the key's and its `sig` verifies, its `runId`
 *    is the run's (else BAD_SIGNATURE, `toolCallId: null`).
 * 2. Position by position, the records against the receipt's calls. The same ID at a position:
 *    the record's recomputed hash must equal the receipt's hash (ALTERED), and its proof must be
 *    there (BAD_SIGNATURE), hash what the record hashes to (ALTERED), name the key and verify
 *    (BAD_SIGNATURE). A receipt call without a hash (INCOMPLETE or UNSIGNED when sealed) is
 *    checked by the record's own proof when it has one. Another ID at a position, first of: an
 *    ID seen before (INSERTED, that ID); an ID the receipt lacks: ALTERED naming the receipt's
 *    call when the record fails its own proof and the receipt's ID is nowhere in the bundle,
 *    else INSERTED naming the record; the receipt's call absent from the bundle (MISSING, the
 *    receipt's ID); else REORDERED, naming the call the receipt lists there. Records past the
 *    receipt's end are INSERTED; receipt calls past the bundle's end MISSING.
 * 3. The canonical JSON of `facts` must hash to `factsHash` (FACTS_ALTERED, `toolCallId: null`).
 *
 * Not sealed (`receipt: null`): each record on its own, in order: an ID seen before or another
 * run's record is INSERTED; a proof that does not hold is ALTERED or BAD_SIGNATURE as above; a
 * completed record without a proof is BAD_SIGNATURE (a PROJECTING one has none yet); `facts`
 * must be `null` (FACTS_ALTERED). Deletion and order are not covered until the run is sealed.
 *
 * @param bundle What `exportRun` returned (or its JSON, parsed).
 * @param publicKey The ledger's public key, an Ed25519 JWK.
 * @param options The expected key ID, when not the thumbprint.
 * @returns `{ ok: true, sealed, calls }`, or the first difference.
 * @throws {TypeError} When the key is not an Ed25519 public JWK, or the bundle is not one
 *   (not JSON data, another `format`, `records` not an array of objects with string IDs).
 */
export async function verifyRun(
  bundle: unknown,
  publicKey: JsonWebKey,
  options: VerifyOptions = {},
): Promise<RunVerdict> {
  const verifier = await importVerifier(publicKey, options?.keyId);
  const snapshot = snapshotJson(bundle, MAX_CHECK_DEPTH, options?.maxLength ?? MAX_BUNDLE_LENGTH);
  if ("problem" in snapshot) throw new TypeError(`Invalid bundle: ${snapshot.problem}`);
  const b = snapshot.value;
  if (!isPlainObject(b) || b.format !== BUNDLE_FORMAT) {
    throw new TypeError(`Invalid bundle: expected format "${BUNDLE_FORMAT}"`);
  }
  const run = b.run, records = b.records;
  if (!isPlainObject(run) || typeof run.runId !== "string") {
    throw new TypeError("Invalid bundle: expected a run with a runId");
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
  const recs = records as Obj[];
  if (b.receipt === null || b.receipt === undefined) {
    return verifyUnsealed(verifier, run.runId, recs, b.facts);
  }
  return verifySealed(verifier, run.runId, recs, b.receipt, b.facts);
}

const fail = (toolCallId: string | null, reason: VerifyReason): RunVerdict => ({
  ok: false,
  toolCallId,
  reason,
});

/**
 * A record against its own proof: `null` when it holds, else the reason; `hash` is what the
 * record hashes to.
 */
async function ownProof(
  verifier: LedgerVerifier,
  record: Obj,
  hash: string,
): Promise<"ALTERED" | "BAD_SIGNATURE" | "UNSIGNED" | null> {
  const proof = record.proof;
  if (proof === undefined) return "UNSIGNED";
  if (!isPlainObject(proof)) return "ALTERED";
  if (proof.hash !== hash) return "ALTERED";
  if (proof.keyId !== verifier.keyId) return "BAD_SIGNATURE";
  const message = recordMessage(record.runId as string, record.toolCallId as string, hash);
  return await verifier.verify(message, proof.sig) ? null : "BAD_SIGNATURE";
}

async function verifyUnsealed(
  verifier: LedgerVerifier,
  runId: string,
  records: Obj[],
  facts: unknown,
): Promise<RunVerdict> {
  const seen = new Set<string>();
  for (const record of records) {
    const id = record.toolCallId as string;
    if (seen.has(id) || record.runId !== runId) return fail(id, "INSERTED");
    seen.add(id);
    const problem = await ownProof(verifier, record, await recordHash(record));
    if (problem === "UNSIGNED") {
      if (record.status !== "PROJECTING") return fail(id, "BAD_SIGNATURE");
    } else if (problem !== null) {
      return fail(id, problem);
    }
  }
  if (facts !== null && facts !== undefined) return fail(null, "FACTS_ALTERED");
  return { ok: true, sealed: false, calls: records.length };
}

async function verifySealed(
  verifier: LedgerVerifier,
  runId: string,
  records: Obj[],
  receiptValue: unknown,
  facts: unknown,
): Promise<RunVerdict> {
  const receipt = await checkReceipt(verifier, runId, receiptValue);
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
      if (call.hash !== null && hash !== call.hash) return fail(id, "ALTERED");
      const problem = await ownProof(verifier, record, hash);
      if (problem === "UNSIGNED") {
        // The receipt holds its hash: its proof was taken off. Without one, nothing to check.
        if (call.hash !== null) return fail(id, "BAD_SIGNATURE");
      } else if (problem !== null) {
        return fail(id, problem);
      }
      continue;
    }
    if (seen.has(id)) return fail(id, "INSERTED");
    if (!inReceipt.has(id)) {
      const altered = !inBundle.has(call.toolCallId) &&
        (await ownProof(verifier, record, hash)) !== null;
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

/** The receipt, when it is one this key signed for this run; else `null`. */
async function checkReceipt(
  verifier: LedgerVerifier,
  runId: string,
  value: unknown,
): Promise<RunReceipt | null> {
  if (!isPlainObject(value)) return null;
  const { calls, factsHash, keyId, sig } = value;
  if (
    value.runId !== runId || keyId !== verifier.keyId || typeof factsHash !== "string" ||
    !Array.isArray(calls)
  ) {
    return null;
  }
  const unsigned = { runId, calls, factsHash, keyId } as Omit<RunReceipt, "sig">;
  if (!await verifier.verify(receiptMessage(unsigned), sig)) return null;
  // Signed by the key: still, only the shape this format defines.
  for (const call of calls) {
    if (
      !isPlainObject(call) || typeof call.toolCallId !== "string" ||
      (call.hash !== null && typeof call.hash !== "string")
    ) {
      return null;
    }
  }
  return { ...unsigned, sig: sig as string };
}
