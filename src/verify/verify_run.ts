/**
 * `verifyRun`: the checks of `./verify.ts` with the RFC 3161 timestamp checks of
 * `../timestamp/token.ts` (`pkijs`), for the `./verify` entry and its program.
 *
 * @module
 */
import { checkToken, readCertificates } from "../timestamp/token.ts";
import { type RunVerdict, verifyBundle, type VerifyOptions } from "./verify.ts";

const TIMESTAMPS = { read: readCertificates, check: checkToken };

/**
 * Verifies an exported run against the ledger's public key. The bundle is read once, into a
 * plain copy (a getter runs once; anything that is not JSON data, or a bundle longer than
 * `MAX_BUNDLE_LENGTH`, is a TypeError), and the checks run on that copy. It answers
 * `ok: true` only when every completed record in the bundle carries a proof that holds for the
 * bundle's run instance (`run.runId` and `run.startedAt`, which each record's signature names).
 * In this order:
 *
 * 0. With `options.run`: the bundle's run is that instance (else OTHER_RUN, `toolCallId: null`).
 * 1. Sealed (a receipt): the receipt's `keyId` is the key's and its `sig` verifies, its `runId`
 *    and `startedAt` are the run's (else BAD_SIGNATURE, `toolCallId: null`). With
 *    `options.tsaCertificates`: the receipt's `timestamp` is an RFC 3161 token over the SHA-256
 *    of the receipt's canonical JSON without it, signed by a trusted TSA (else BAD_TIMESTAMP,
 *    `toolCallId: null`).
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
 * @param options The expected key ID, when not the thumbprint; the run instance expected; the
 *   trusted Time Stamping Authorities.
 * @returns `{ ok: true, sealed, calls }` (and `timestampedAt` with `tsaCertificates`, when
 *   sealed), or the first difference.
 * @throws {TypeError} When the key is not an Ed25519 public JWK (or cannot be read), the options
 *   are not options, or the bundle is not one (not JSON data, another `format`, a `run` without
 *   a string `runId` and an integer `startedAt`, `records` not an array of objects with string
 *   IDs), or `tsaCertificates` holds anything but certificates.
 */
export function verifyRun(
  bundle: unknown,
  publicKey: JsonWebKey,
  options: VerifyOptions = {},
): Promise<RunVerdict> {
  return verifyBundle(bundle, publicKey, options, TIMESTAMPS);
}
