/**
 * RFC 3161 time-stamp tokens: the request a Time Stamping Authority is sent, the token read out
 * of its answer, and the checks of a token against the text it stamps and the TSAs an auditor
 * trusts. The ASN.1 and CMS are `pkijs` and `asn1js`: this file (and what imports it, the
 * `./timestamp` and `./verify` entries) brings them, never the core's `.` entry.
 *
 * What a token must be to hold (docs/proof.md, "Timestamps"; docs/verify.py checks the same):
 *
 * - DER of a CMS ContentInfo of SignedData whose content is a TSTInfo, with exactly one signer,
 *   signed attributes (a content type of TSTInfo, the message digest of the TSTInfo) and the
 *   signer's certificate among the token's certificates;
 * - the TSTInfo's message imprint is SHA-256 of the stamped text's UTF-8;
 * - the digest is SHA-256, -384 or -512, the signature RSA PKCS #1 v1.5 or ECDSA with one of them,
 *   and it verifies over the signed attributes with the signer certificate's key;
 * - the signer certificate has the extended key usage timeStamping, marked critical;
 * - the signer certificate is one of the trusted certificates, or chains to one: each issuer found
 *   among the token's and the trusted certificates by name, a CA (basicConstraints cA), its
 *   signature over the certificate verified, 8 links at most; every certificate on the way valid
 *   at the token's time (`genTime`), so a token verifies after its TSA's certificate expired.
 *
 * @module
 */
import * as asn1js from "asn1js";
import {
  AlgorithmIdentifier,
  Certificate,
  ContentInfo,
  type Extension,
  MessageImprint,
  SignedData,
  TimeStampReq,
  TSTInfo,
} from "pkijs";
import { MAX_TIMESTAMP_BYTES, sha256Bytes } from "../core/ledger.ts";

const OID = {
  sha256: "2.16.840.1.101.3.4.2.1",
  sha384: "2.16.840.1.101.3.4.2.2",
  sha512: "2.16.840.1.101.3.4.2.3",
  signedData: "1.2.840.113549.1.7.2",
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  contentType: "1.2.840.113549.1.9.3",
  extKeyUsage: "2.5.29.37",
  basicConstraints: "2.5.29.19",
  timeStamping: "1.3.6.1.5.5.7.3.8",
} as const;

const DIGESTS: ReadonlySet<string> = new Set([OID.sha256, OID.sha384, OID.sha512]);

/** Signature algorithms a certificate may be signed with: RSA PKCS #1 v1.5 and ECDSA. */
const CERTIFICATE_SIGNATURES: ReadonlySet<string> = new Set([
  "1.2.840.113549.1.1.11", // sha256WithRSAEncryption
  "1.2.840.113549.1.1.12", // sha384WithRSAEncryption
  "1.2.840.113549.1.1.13", // sha512WithRSAEncryption
  "1.2.840.10045.4.3.2", // ecdsa-with-SHA256
  "1.2.840.10045.4.3.3", // ecdsa-with-SHA384
  "1.2.840.10045.4.3.4", // ecdsa-with-SHA512
]);

/** Signature algorithms of a token's signer: those, and rsaEncryption with the signer's digest. */
const SIGNATURES: ReadonlySet<string> = new Set([
  ...CERTIFICATE_SIGNATURES,
  "1.2.840.113549.1.1.1",
]);

/** Links of a certificate chain followed at most. */
const MAX_CHAIN = 8;

const encoder = new TextEncoder();

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whole DER: one element, nothing after it; else `null`. */
function derOf(bytes: Uint8Array<ArrayBuffer>): asn1js.AsnType | null {
  const read = asn1js.fromBER(bytes);
  return read.offset === -1 || read.offset !== bytes.length ? null : read.result;
}

/**
 * A TimeStampReq (DER) for a SHA-256 digest: version 1, the nonce, and `certReq` so that the
 * token carries the TSA's certificate.
 *
 * @param digest 32 bytes.
 * @param nonce Random bytes, the first below 0x80 (a positive integer).
 */
export function timestampRequest(digest: Uint8Array, nonce: Uint8Array): Uint8Array<ArrayBuffer> {
  const request = new TimeStampReq({
    version: 1,
    messageImprint: new MessageImprint({
      hashAlgorithm: new AlgorithmIdentifier({ algorithmId: OID.sha256 }),
      hashedMessage: new asn1js.OctetString({ valueHex: Uint8Array.from(digest) }),
    }),
    nonce: new asn1js.Integer({ valueHex: Uint8Array.from(nonce) }),
    certReq: true,
  });
  return new Uint8Array(request.toSchema().toBER());
}

/**
 * The token of a TSA's answer (a TimeStampResp), exactly as its bytes came: the answer must
 * grant it (status 0 or 1) and the token must stamp `digest` with SHA-256 and carry `nonce`.
 *
 * @throws {Error} When it does not: the message says why.
 */
export function tokenOfResponse(
  response: Uint8Array<ArrayBuffer>,
  digest: Uint8Array,
  nonce: Uint8Array,
): Uint8Array<ArrayBuffer> {
  const asn1 = derOf(response);
  if (!(asn1 instanceof asn1js.Sequence)) throw new Error("The TSA's answer is not DER");
  const [status, token] = asn1.valueBlock.value;
  const code = status instanceof asn1js.Sequence ? status.valueBlock.value[0] : undefined;
  const granted = code instanceof asn1js.Integer ? code.valueBlock.valueDec : -1;
  if (granted !== 0 && granted !== 1) {
    throw new Error(`The TSA refused the request (status ${granted})`);
  }
  if (token === undefined) throw new Error("The TSA's answer has no token");
  const bytes = new Uint8Array(token.valueBeforeDecodeView);
  const tst = tstInfoOf(bytes);
  if (tst === null) throw new Error("The TSA's token is not a time-stamp token");
  if (!imprintIs(tst, digest)) throw new Error("The TSA's token stamps another digest");
  const got = tst.nonce?.valueBlock.valueHexView;
  if (got === undefined || !equalBytes(got, nonce)) {
    throw new Error("The TSA's token does not carry the request's nonce");
  }
  return bytes;
}

/** The token's parts, read; `null` when it is not a time-stamp token. */
function partsOf(
  token: Uint8Array<ArrayBuffer>,
): { signed: SignedData; tst: TSTInfo } | null {
  try {
    const asn1 = derOf(token);
    if (asn1 === null) return null;
    const info = new ContentInfo({ schema: asn1 });
    if (info.contentType !== OID.signedData) return null;
    const signed = new SignedData({ schema: info.content });
    const content = signed.encapContentInfo;
    if (content.eContentType !== OID.tstInfo || content.eContent === undefined) return null;
    const tst = TSTInfo.fromBER(content.eContent.getValue());
    return { signed, tst };
  } catch {
    return null;
  }
}

function tstInfoOf(token: Uint8Array<ArrayBuffer>): TSTInfo | null {
  return partsOf(token)?.tst ?? null;
}

function imprintIs(tst: TSTInfo, digest: Uint8Array): boolean {
  const imprint = tst.messageImprint;
  return imprint.hashAlgorithm.algorithmId === OID.sha256 &&
    equalBytes(imprint.hashedMessage.valueBlock.valueHexView, digest);
}

/** A certificate an auditor trusts, parsed, with its TBS bytes to tell it by. */
export interface TrustedCertificate {
  certificate: Certificate;
  tbs: Uint8Array;
}

/**
 * Reads the certificates of `tsaCertificates`: each a PEM text (one or more `CERTIFICATE`
 * blocks) or the DER bytes of one certificate.
 *
 * @throws {TypeError} When the list is empty or an entry holds no certificate that parses.
 */
export function readCertificates(list: readonly unknown[]): TrustedCertificate[] {
  const ders: Uint8Array<ArrayBuffer>[] = [];
  for (const entry of list) {
    if (entry instanceof Uint8Array) {
      ders.push(Uint8Array.from(entry));
    } else if (typeof entry === "string") {
      const blocks = [
        ...entry.matchAll(
          /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]*?)-----END CERTIFICATE-----/g,
        ),
      ];
      if (blocks.length === 0) {
        throw new TypeError("Invalid options.tsaCertificates: a text without a PEM certificate");
      }
      for (const block of blocks) {
        const binary = atob(block[1]!.replace(/\s+/g, ""));
        ders.push(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
      }
    } else {
      throw new TypeError(
        "Invalid options.tsaCertificates: expected PEM texts or DER bytes of certificates",
      );
    }
  }
  if (ders.length === 0) {
    throw new TypeError("Invalid options.tsaCertificates: expected at least one certificate");
  }
  return ders.map((der) => {
    const asn1 = derOf(der);
    let certificate: Certificate;
    try {
      if (asn1 === null) throw new Error("not DER");
      certificate = new Certificate({ schema: asn1 });
    } catch (error) {
      throw new TypeError("Invalid options.tsaCertificates: a certificate does not parse", {
        cause: error,
      });
    }
    return { certificate, tbs: Uint8Array.from(certificate.tbsView) };
  });
}

function extension(certificate: Certificate, id: string): Extension | undefined {
  return certificate.extensions?.find((e) => e.extnID === id);
}

function isTimeStamper(certificate: Certificate): boolean {
  const eku = extension(certificate, OID.extKeyUsage);
  const purposes = (eku?.parsedValue as { keyPurposes?: unknown } | undefined)?.keyPurposes;
  return eku?.critical === true && Array.isArray(purposes) && purposes.includes(OID.timeStamping);
}

function isCa(certificate: Certificate): boolean {
  const constraints = extension(certificate, OID.basicConstraints);
  return (constraints?.parsedValue as { cA?: unknown } | undefined)?.cA === true;
}

function validAt(certificate: Certificate, at: number): boolean {
  return certificate.notBefore.value.getTime() <= at && at <= certificate.notAfter.value.getTime();
}

async function signedBy(certificate: Certificate, issuer: Certificate): Promise<boolean> {
  if (!CERTIFICATE_SIGNATURES.has(certificate.signatureAlgorithm.algorithmId)) return false;
  try {
    return await certificate.verify(issuer);
  } catch {
    return false;
  }
}

/** The signer's certificate is trusted, or chains to one that is, at `at`. */
async function chainsTo(
  signer: Certificate,
  carried: readonly Certificate[],
  trusted: readonly TrustedCertificate[],
  at: number,
): Promise<boolean> {
  const pool = [...carried, ...trusted.map((t) => t.certificate)];
  let current = signer;
  for (let link = 0; link <= MAX_CHAIN; link++) {
    if (!validAt(current, at)) return false;
    const tbs = current.tbsView;
    if (trusted.some((t) => equalBytes(t.tbs, tbs))) return true;
    let issuer: Certificate | undefined;
    for (const candidate of pool) {
      if (
        !equalBytes(candidate.tbsView, tbs) && candidate.subject.isEqual(current.issuer) &&
        isCa(candidate) && await signedBy(current, candidate)
      ) {
        issuer = candidate;
        break;
      }
    }
    if (issuer === undefined) return false;
    current = issuer;
  }
  return false;
}

/**
 * Checks a token against the text it should stamp and the trusted TSA certificates.
 *
 * @param token The token's DER.
 * @param text The stamped text (its SHA-256 is the token's message imprint).
 * @param trusted The certificates of {@linkcode readCertificates}.
 * @returns The token's time (`genTime`), epoch ms, when it holds; else `null`.
 */
export async function checkToken(
  token: Uint8Array<ArrayBuffer>,
  text: string,
  trusted: readonly TrustedCertificate[],
): Promise<number | null> {
  if (token.length > MAX_TIMESTAMP_BYTES) return null;
  const parts = partsOf(token);
  if (parts === null) return null;
  const { signed, tst } = parts;
  const data = encoder.encode(text);
  if (!imprintIs(tst, await sha256Bytes(text))) return null;
  const signer = signed.signerInfos.length === 1 ? signed.signerInfos[0]! : null;
  const attributes = signer?.signedAttrs?.attributes;
  if (signer === null || attributes === undefined) return null;
  const type = attributes.find((a) => a.type === OID.contentType)?.values[0];
  if (!(type instanceof asn1js.ObjectIdentifier) || type.valueBlock.toString() !== OID.tstInfo) {
    return null;
  }
  if (
    !DIGESTS.has(signer.digestAlgorithm.algorithmId) ||
    !SIGNATURES.has(signer.signatureAlgorithm.algorithmId)
  ) {
    return null;
  }
  const carried = (signed.certificates ?? []).filter((c) => c instanceof Certificate);
  let verified: { signatureVerified?: boolean | null; signerCertificate?: Certificate | null };
  try {
    verified = await signed.verify({ signer: 0, data: data.buffer, extendedMode: true });
  } catch {
    return null;
  }
  const certificate = verified.signerCertificate;
  if (verified.signatureVerified !== true || !(certificate instanceof Certificate)) return null;
  if (!isTimeStamper(certificate)) return null;
  const at = tst.genTime.getTime();
  if (!Number.isSafeInteger(at)) return null;
  return await chainsTo(certificate, carried, trusted, at) ? at : null;
}
