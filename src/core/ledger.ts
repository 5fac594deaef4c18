/**
 * The ledger's format: what a record's proof and a run's receipt hash and sign, and the Ed25519
 * keys that sign them. Web APIs only (WebCrypto `crypto.subtle`, `TextEncoder`), and nothing of a
 * store: the `./verify` entry is built on this file alone (and `./json.ts`).
 *
 * - A record's hash: base64url (no padding) of the SHA-256 of the UTF-8 of the
 *   {@linkcode canonicalJson} of the record as `inspect()` returns it, without `proof`.
 * - A record's signed message: the canonical JSON of
 *   `["tool-boundary.record/1", runId, startedAt, toolCallId, hash]`, `startedAt` the run's: the
 *   signature names the run instance, not only its ID.
 * - A receipt's signed message: the canonical JSON of
 *   `["tool-boundary.receipt/1", runId, startedAt, calls, factsHash, keyId]`.
 * - A receipt's timestamp (RFC 3161) stamps the SHA-256 of {@linkcode stampedText}: the
 *   canonical JSON of the receipt without `timestamp`, its `sig` included.
 * - A key ID: by default the RFC 7638 thumbprint of the public JWK (SHA-256 of
 *   `{"crv":"Ed25519","kty":"OKP","x":"..."}`, base64url).
 *
 * @module
 */
import { canonicalJson, type JsonValue } from "./json.ts";
import type { RunState } from "./store.ts";
import type { CanonicalRecord, ObservedFact, RecordProof, RunReceipt } from "./types.ts";

const KEY_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const HASH = /^[A-Za-z0-9_-]{43}$/;
const SIG = /^[A-Za-z0-9_-]{86}$/;

/**
 * Checks the shape of a proof a store is asked to keep, and copies it (each member read once).
 *
 * @param proof Anything.
 * @returns A frozen copy of only `hash`, `sig` and `keyId`.
 * @throws {TypeError} When it is not `{ hash, sig, keyId }`: base64url `hash` of 43 and `sig` of
 *   86 characters, `keyId` 1 to 128 of `A-Z a-z 0-9 _ . : -`.
 */
export function checkRecordProof(proof: unknown): RecordProof {
  const p = proof as Partial<Record<string, unknown>> | null;
  const hash = p?.hash, sig = p?.sig, keyId = p?.keyId;
  if (
    typeof hash !== "string" || !HASH.test(hash) || typeof sig !== "string" || !SIG.test(sig) ||
    typeof keyId !== "string" || !KEY_ID.test(keyId)
  ) {
    throw new TypeError("Invalid proof: expected { hash, sig, keyId }");
  }
  return Object.freeze({ hash, sig, keyId });
}

/** A run as `exportRun` gives it, for `verifyRun`. */
export interface RunBundle {
  /** Always `tool-boundary.run/1`. */
  format: "tool-boundary.run/1";
  /**
   * The run's state (not signed: the receipt binds its `runId` and `startedAt`, the instance,
   * and each record's proof names that instance too).
   */
  run: RunState;
  /** Every live record of the run's begun calls, in begin order, as `inspect()` returns it. */
  records: CanonicalRecord[];
  /** The facts of the `endRun` that sealed the run; `null` while it is not sealed. */
  facts: ObservedFact[] | null;
  /** The seal; `null` while the run is not sealed. */
  receipt: RunReceipt | null;
}

/** The domain tag of a record's signed message. */
export const RECORD_TAG = "tool-boundary.record/1";
/** The domain tag of a receipt's signed message. */
export const RECEIPT_TAG = "tool-boundary.receipt/1";
/** The `format` of an exported run. */
export const BUNDLE_FORMAT: RunBundle["format"] = "tool-boundary.run/1";

const encoder = new TextEncoder();
const ED25519 = { name: "Ed25519" } as const;

/** The longest RFC 3161 token a receipt keeps, in bytes (one with a short chain is a few KiB). */
export const MAX_TIMESTAMP_BYTES = 64 * 1024;

/**
 * SHA-256 of the UTF-8 of a text.
 *
 * @param text Any string.
 * @returns 32 bytes.
 */
export async function sha256Bytes(text: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/**
 * Base64url SHA-256 of the UTF-8 of a text.
 *
 * @param text Any string.
 * @returns 43 characters.
 */
export async function sha256Base64url(text: string): Promise<string> {
  return toBase64url(await sha256Bytes(text));
}

/**
 * The hash of a record: of its canonical JSON without `proof`.
 *
 * @param record A record as `inspect()` returns it (JSON data).
 * @returns The base64url SHA-256.
 * @throws {TypeError} When the record is not JSON data.
 */
export function recordHash(record: object): Promise<string> {
  const { proof: _proof, ...rest } = record as { proof?: unknown };
  return sha256Base64url(canonicalJson(rest as JsonValue));
}

/**
 * The message a record's `sig` signs: the record's hash, for this call of this run instance
 * (`startedAt` is the run's).
 */
export function recordMessage(
  runId: string,
  startedAt: number,
  toolCallId: string,
  hash: string,
): string {
  return canonicalJson([RECORD_TAG, runId, startedAt, toolCallId, hash]);
}

/** The message a receipt's `sig` signs. */
export function receiptMessage(receipt: Omit<RunReceipt, "sig">): string {
  return canonicalJson([
    RECEIPT_TAG,
    receipt.runId,
    receipt.startedAt,
    receipt.calls as unknown as JsonValue,
    receipt.factsHash,
    receipt.keyId,
  ]);
}

/**
 * The text a receipt's timestamp stamps (its SHA-256): the canonical JSON of the receipt as it is
 * kept, every member but `timestamp` (so `sig` too, and any member a later format adds).
 *
 * @param receipt A receipt (JSON data).
 * @throws {TypeError} When it is not JSON data.
 */
export function stampedText(receipt: object): string {
  const { timestamp: _timestamp, ...rest } = receipt as { timestamp?: unknown };
  return canonicalJson(rest as JsonValue);
}

/** Base64url without padding. */
export function toBase64url(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Bytes of base64url without padding; `null` when the text is not that. */
export function fromBase64url(text: unknown): Uint8Array<ArrayBuffer> | null {
  if (typeof text !== "string" || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) {
    return null;
  }
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  // Only the canonical text of the bytes: no second spelling of one key or signature.
  return toBase64url(bytes) === text ? bytes : null;
}

/** An Ed25519 public key as a JWK, only its members. */
export interface LedgerPublicKey extends JsonWebKey {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
}

/**
 * A JWK's members, each read once inside a guard: a getter or a Proxy trap that throws is an
 * invalid key, never its own exception.
 */
function jwkMembers(
  key: unknown,
  what: string,
  withPrivate: boolean,
): { kty: unknown; crv: unknown; x: unknown; d: unknown } {
  const jwk = key as Partial<Record<string, unknown>> | null | undefined;
  try {
    return { kty: jwk?.kty, crv: jwk?.crv, x: jwk?.x, d: withPrivate ? jwk?.d : undefined };
  } catch (error) {
    throw new TypeError(`Invalid ${what}: its members cannot be read`, { cause: error });
  }
}

/** The public members, checked. */
function checkedPublic(
  members: { kty: unknown; crv: unknown; x: unknown },
  what: string,
): LedgerPublicKey {
  const { kty, crv, x } = members;
  if (kty !== "OKP" || crv !== "Ed25519" || fromBase64url(x)?.length !== 32) {
    throw new TypeError(`Invalid ${what}: expected an Ed25519 JWK (kty OKP, crv Ed25519, x)`);
  }
  return { kty, crv, x: x as string };
}

/**
 * The public JWK's members, checked: `kty` OKP, `crv` Ed25519, `x` 32 bytes of base64url. Each
 * member is read once, inside a guard.
 *
 * @throws {TypeError} When it is not such a key, or reading it throws.
 */
export function publicJwk(key: unknown, what = "public key"): LedgerPublicKey {
  return checkedPublic(jwkMembers(key, what, false), what);
}

/**
 * The RFC 7638 thumbprint of an Ed25519 public JWK: SHA-256 of the canonical JSON of its
 * required members (`crv`, `kty`, `x`), base64url.
 */
export function thumbprint(key: LedgerPublicKey): Promise<string> {
  return sha256Base64url(canonicalJson({ crv: key.crv, kty: key.kty, x: key.x }));
}

/** The public half of a ledger key: how to check its signatures. */
export interface LedgerVerifier {
  readonly keyId: string;
  verify(message: string, sig: unknown): Promise<boolean>;
}

/**
 * Imports a public JWK for verifying.
 *
 * @throws {TypeError} When it is not an Ed25519 public JWK.
 */
export async function importVerifier(key: unknown, keyId?: string): Promise<LedgerVerifier> {
  const jwk = publicJwk(key);
  const cryptoKey = await crypto.subtle.importKey("jwk", jwk, ED25519, false, ["verify"]);
  return {
    keyId: keyId ?? await thumbprint(jwk),
    async verify(message, sig) {
      const bytes = fromBase64url(sig);
      if (bytes === null || bytes.length !== 64) return false;
      return await crypto.subtle.verify(ED25519, cryptoKey, bytes, encoder.encode(message));
    },
  };
}

/** The private half: signs, and says which public key checks it. */
export interface LedgerSigner {
  readonly keyId: string;
  readonly publicKey: LedgerPublicKey;
  sign(message: string): Promise<string>;
}

/**
 * Checks a private JWK and a key ID without awaiting anything, so that a bad one is a
 * `TypeError` where the boundary is created.
 *
 * @returns The members to import.
 * @throws {TypeError} When the key is not an Ed25519 private JWK (`d` and `x` of 32 bytes) or
 *   the key ID not 1 to 128 of `A-Z a-z 0-9 _ . : -`.
 */
export function checkLedgerKey(
  key: unknown,
  keyId: unknown,
): { jwk: LedgerPublicKey & { d: string }; keyId: string | undefined } {
  const members = jwkMembers(key, "ledgerKey", true);
  const pub = checkedPublic(members, "ledgerKey");
  const d = members.d;
  if (fromBase64url(d)?.length !== 32) {
    throw new TypeError("Invalid ledgerKey: expected the private JWK (with d) of an Ed25519 key");
  }
  if (keyId !== undefined && (typeof keyId !== "string" || !KEY_ID.test(keyId))) {
    throw new TypeError("Invalid keyId: expected 1 to 128 of A-Z a-z 0-9 _ . : -");
  }
  return { jwk: { ...pub, d: d as string }, keyId };
}

/**
 * Imports a checked private JWK ({@linkcode checkLedgerKey}) and proves that `d` and `x` are one
 * key pair by signing and verifying once.
 *
 * @throws {TypeError} When `d` is not the private key of `x`, or the runtime has no Ed25519.
 */
export async function importSigner(
  checked: { jwk: LedgerPublicKey & { d: string }; keyId: string | undefined },
): Promise<LedgerSigner> {
  const { d: _d, ...rest } = checked.jwk;
  const publicKey: LedgerPublicKey = { kty: rest.kty, crv: rest.crv, x: rest.x };
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey("jwk", checked.jwk, ED25519, false, ["sign"]);
  } catch (error) {
    throw new TypeError("Invalid ledgerKey: WebCrypto refused it as an Ed25519 key", {
      cause: error,
    });
  }
  const sign = async (message: string) =>
    toBase64url(
      new Uint8Array(await crypto.subtle.sign(ED25519, privateKey, encoder.encode(message))),
    );
  const verifier = await importVerifier(publicKey, "check");
  if (!await verifier.verify("tool-boundary.key-check", await sign("tool-boundary.key-check"))) {
    throw new TypeError("Invalid ledgerKey: d is not the private key of x");
  }
  return { keyId: checked.keyId ?? await thumbprint(publicKey), publicKey, sign };
}

/**
 * Makes a new Ed25519 ledger key pair with WebCrypto (Deno, workerd, Bun, browsers): give
 * `privateKey` to `ToolBoundary`'s `ledgerKey` (keep it secret, out of the store), and
 * `publicKey` to the auditors who run `verifyRun`.
 *
 * @returns Both halves as JWKs of only their members (`kty`, `crv`, `x`, and `d` for the private).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateLedgerKeys } from "@tool-boundary/core";
 * const { privateKey, publicKey } = await generateLedgerKeys();
 * assert.equal(publicKey.crv, "Ed25519");
 * assert.equal(privateKey.x, publicKey.x);
 * assert.equal(typeof privateKey.d, "string");
 * assert.equal("d" in publicKey, false);
 * ```
 */
export async function generateLedgerKeys(): Promise<
  { privateKey: JsonWebKey; publicKey: JsonWebKey }
> {
  const pair = await crypto.subtle.generateKey(ED25519, true, ["sign", "verify"]) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  const { x, d } = jwk;
  if (typeof x !== "string" || typeof d !== "string") throw new TypeError("No Ed25519 key made");
  return {
    privateKey: { kty: "OKP", crv: "Ed25519", x, d },
    publicKey: { kty: "OKP", crv: "Ed25519", x },
  };
}
