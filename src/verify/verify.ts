/**
 * The checks of an exported run against the ledger's public key: `verifyRun` of the `./verify`
 * entry (mod.ts, which adds the RFC 3161 timestamp checks of `../timestamp/token.ts`) and the
 * HTTP layer's `/verdict` (which needs no timestamp check, and so never loads `pkijs`).
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
  fromBase64url,
  importVerifier,
  type LedgerVerifier,
  receiptMessage,
  recordHash,
  recordMessage,
  sha256Base64url,
  stampedText,
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
  | "OTHER_RUN"
  | "BAD_TIMESTAMP";

/** What {@linkcode verifyRun} finds. */
export type RunVerdict =
  | {
    /** Every check passed. */
    ok: true;
    /** The bundle has a receipt (the run was sealed): order, presence and facts are covered. */
    sealed: boolean;
    /** Calls covered: the receipt's when sealed, else the records'. */
    calls: number;
    /**
     * With `tsaCertificates`, of a sealed run: when a trusted Time Stamping Authority stamped the
     * receipt (the token's `genTime`, epoch ms). The seal existed then.
     */
    timestampedAt?: number;
  }
  | {
    /** A check failed. */
    ok: false;
    /**
     * The first call that differs, or `null` when the run, the receipt or the facts do, or when
     * a call of an unsealed run is missing (its ID is unknown: `seq` names it).
     */
    toolCallId: string | null;
    /** What differs. */
    reason: VerifyReason;
    /** Of a call missing from an unsealed run: its position in the run, the first one absent. */
    seq?: number;
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
  /**
   * The Time Stamping Authorities trusted for the receipt's RFC 3161 timestamp: each a PEM text
   * (one or more certificates) or the DER bytes of one certificate, of a TSA or of a CA above one.
   * With them, a sealed bundle must carry a timestamp that stamps its receipt, signed by a TSA
   * certificate (extended key usage timeStamping, critical) that is one of them or chains to one,
   * each certificate valid at the token's time; else BAD_TIMESTAMP. The ok verdict then has
   * `timestampedAt`. Without them the timestamp is not read (no `timestampedAt`). A bundle not
   * sealed has nothing to stamp: require `sealed: true` too. See docs/proof.md.
   */
  tsaCertificates?: readonly (string | Uint8Array)[];
}

/**
 * How a verifier checks timestamps (`../timestamp/token.ts`, given by mod.ts): `read` the trusted
 * certificates once (a TypeError for anything else), `check` a token's DER against the stamped
 * text (its `genTime`, epoch ms, or `null`).
 */
export interface TimestampChecks<Trusted> {
  read(list: readonly unknown[]): Trusted;
  check(token: Uint8Array<ArrayBuffer>, text: string, trusted: Trusted): Promise<number | null>;
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
 * `verifyRun` of mod.ts (documented there), with the timestamp checks it is given: without
 * `timestamps`, `options.tsaCertificates` is a TypeError.
 */
export async function verifyBundle<Trusted>(
  bundle: unknown,
  publicKey: JsonWebKey,
  options: VerifyOptions = {},
  timestamps?: TimestampChecks<Trusted>,
): Promise<RunVerdict> {
  const { keyId, maxLength, expected, tsaCertificates } = readOptions(options);
  let stamps: Stamps | undefined;
  if (tsaCertificates !== undefined) {
    if (timestamps === undefined) {
      throw new TypeError("Invalid options.tsaCertificates: this verifier checks no timestamps");
    }
    const trusted = timestamps.read(tsaCertificates);
    stamps = { check: (token, text) => timestamps.check(token, text, trusted) };
  }
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
  return verifySealed(verifier, instance, recs, b.receipt, b.facts, stamps);
}

/** The timestamp check of one verification, its trusted certificates read. */
interface Stamps {
  check(token: Uint8Array<ArrayBuffer>, text: string): Promise<number | null>;
}

/** The options, each read once inside a guard, and checked. */
function readOptions(options: unknown): {
  keyId: string | undefined;
  maxLength: number;
  expected: { runId: string; startedAt: number | undefined } | undefined;
  tsaCertificates: unknown[] | undefined;
} {
  let keyId: unknown, maxLength: unknown, run: unknown, runId: unknown, startedAt: unknown;
  let tsa: unknown, tsaCertificates: unknown[] | undefined;
  try {
    const o = options as Partial<Record<string, unknown>> | null | undefined;
    keyId = o?.keyId;
    maxLength = o?.maxLength;
    run = o?.run;
    tsa = o?.tsaCertificates;
    // A plain copy, each entry read once.
    if (Array.isArray(tsa)) tsaCertificates = Array.from(tsa as unknown[]);
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
  if (tsa !== undefined && tsaCertificates === undefined) {
    throw new TypeError("Invalid options.tsaCertificates: expected an array of certificates");
  }
  return {
    tsaCertificates,
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
  const gap = checkPositions(records);
  if (gap !== null) return gap;
  if (facts !== null && facts !== undefined) return fail(null, "FACTS_ALTERED");
  return { ok: true, sealed: false, calls: records.length };
}

/**
 * The positions of an unsealed run's records, each one's proof already checked: begin numbered
 * the calls 1, 2, 3, ... and the bundle lists them in that order, so the n-th record has `seq`
 * n. A number not given to any record is a call taken out (MISSING, the first such `seq`); a
 * record out of its place is REORDERED; two records of one number, one of them INSERTED. Calls
 * begun after the last record cannot show here (docs/proof.md: what still needs a witness).
 */
function checkPositions(records: Obj[]): RunVerdict | null {
  const owner = new Map<number, string>();
  let last = 0;
  for (const record of records) {
    const id = record.toolCallId as string, seq = record.seq;
    if (!Number.isSafeInteger(seq) || (seq as number) < 1) return fail(id, "ALTERED");
    if (owner.has(seq as number)) return fail(id, "INSERTED");
    owner.set(seq as number, id);
    last = Math.max(last, seq as number);
  }
  for (let seq = 1; seq <= last; seq++) {
    if (!owner.has(seq)) return { ok: false, toolCallId: null, reason: "MISSING", seq };
  }
  for (let i = 0; i < records.length; i++) {
    if (records[i]!.seq !== i + 1) return fail(owner.get(i + 1)!, "REORDERED");
  }
  return null;
}

async function verifySealed(
  verifier: LedgerVerifier,
  instance: Instance,
  records: Obj[],
  receiptValue: unknown,
  facts: unknown,
  stamps: Stamps | undefined,
): Promise<RunVerdict> {
  const receipt = await checkReceipt(verifier, instance, receiptValue);
  if (receipt === null) return fail(null, "BAD_SIGNATURE");
  let timestampedAt: number | undefined;
  if (stamps !== undefined) {
    // The receipt as the bundle holds it (a plain copy): the timestamp covers all of it.
    const kept = receiptValue as Obj;
    const token = fromBase64url(kept.timestamp);
    const at = token === null || token.length === 0
      ? null
      : await stamps.check(token, stampedText(kept));
    if (at === null) return fail(null, "BAD_TIMESTAMP");
    timestampedAt = at;
  }
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
  return timestampedAt === undefined
    ? { ok: true, sealed: true, calls: calls.length }
    : { ok: true, sealed: true, calls: calls.length, timestampedAt };
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
