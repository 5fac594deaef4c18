/**
 * Signed values the app hands out and checks without storing anything: run-scoped agent tokens
 * and MCP session IDs. Both are HMAC-SHA-256 (WebCrypto) under the server secret, each with its
 * own prefix in the signed text, so that one can never stand for the other.
 *
 * @module
 */
import { isSafeRunId } from "../core/ids.ts";
import { constantTimeEqual } from "./auth.ts";

/** The shortest server secret `createApp` accepts. */
export const MIN_SECRET_LENGTH = 32;

/**
 * What a run token says: the run instance it is valid on and until when (epoch ms, the run's
 * deadline).
 *
 * A run ID alone does not name one run: once a run's state is gone (a MemoryStore restarted, a
 * Redis key evicted or deleted) the same ID can be started again, and that later run must not
 * accept the earlier one's token. So a token also names the run's `startedAt`, which both stores
 * keep with the run and which a run's context carries: a token is valid only on the run with
 * this ID that started at this ms. Two instances of one run ID never share it in practice: a
 * store refuses a second `startRun` of a live ID (RUN_ALREADY_EXISTS), and a run's state lives
 * past its deadline (by a record's TTL), so the ID can be started anew only after the first
 * run's state vanished, and then the second start must also fall in the same ms of the
 * starting caller's clock. A nonce kept in the run would close even that, at the cost of a new
 * field in every store's run state; the start ms is already there.
 */
export interface RunTokenClaims {
  /** The one run the token may be used on. */
  runId: string;
  /** The `startedAt` of that run: the instance of the run ID the token was issued for. */
  startedAt: number;
  /** Epoch ms after which the token is refused. */
  exp: number;
}

const RUN_TOKEN_PREFIX = "tbr";
const SESSION_CONTEXT = "mcp-session";
const encoder = new TextEncoder();

/** HMAC-SHA-256 under one server secret; the key is imported once, on first use. */
export class Signer {
  readonly #secret: string;
  #key: Promise<CryptoKey> | undefined;

  /**
   * @param secret The server secret.
   * @throws {TypeError} When it is not a string of at least {@linkcode MIN_SECRET_LENGTH} characters.
   */
  constructor(secret: string) {
    if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH) {
      throw new TypeError(
        `Cannot create app: options.secret must be at least ${MIN_SECRET_LENGTH} characters`,
      );
    }
    this.#secret = secret;
  }

  /** The MAC of `text`, base64url without padding. */
  async mac(text: string): Promise<string> {
    this.#key ??= crypto.subtle.importKey(
      "raw",
      encoder.encode(this.#secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = await crypto.subtle.sign("HMAC", await this.#key, encoder.encode(text));
    return toBase64Url(new Uint8Array(mac));
  }

  /** Whether `given` is the MAC of `text`, compared in constant time. */
  async verify(text: string, given: string): Promise<boolean> {
    return constantTimeEqual(encoder.encode(await this.mac(text)), encoder.encode(given));
  }
}

/**
 * Signs a run token: `tbr.<base64url(JSON claims)>.<base64url(HMAC)>`.
 *
 * @param signer The app's signer.
 * @param claims The run, its start (the instance) and the expiry.
 * @returns The token, a valid bearer token.
 */
export async function signRunToken(signer: Signer, claims: RunTokenClaims): Promise<string> {
  const payload = toBase64Url(
    encoder.encode(
      JSON.stringify({ runId: claims.runId, startedAt: claims.startedAt, exp: claims.exp }),
    ),
  );
  const signed = `${RUN_TOKEN_PREFIX}.${payload}`;
  return `${signed}.${await signer.mac(signed)}`;
}

/**
 * Checks a run token: its form, its MAC (before its payload is read), its claims and its expiry.
 * Whether the run it names is still the instance it was issued for is the caller's to check
 * (it needs the run; see {@linkcode RunTokenClaims}), after this, so that a forged token costs
 * no store read.
 *
 * @param signer The app's signer.
 * @param token A bearer token.
 * @param now Epoch ms.
 * @returns The claims of a genuine token that has not expired, else `null`.
 */
export async function verifyRunToken(
  signer: Signer,
  token: string,
  now: number,
): Promise<RunTokenClaims | null> {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== RUN_TOKEN_PREFIX) return null;
  const [prefix, payload, mac] = parts as [string, string, string];
  if (!await signer.verify(`${prefix}.${payload}`, mac)) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64Url(payload)));
  } catch {
    return null;
  }
  if (typeof claims !== "object" || claims === null) return null;
  const { runId, startedAt, exp } = claims as Record<string, unknown>;
  if (!isSafeRunId(runId) || !Number.isSafeInteger(startedAt) || !Number.isSafeInteger(exp)) {
    return null;
  }
  return now < (exp as number)
    ? { runId, startedAt: startedAt as number, exp: exp as number }
    : null;
}

/** Whether a bearer token has the form of a run token (it may still be forged or expired). */
export function isRunTokenForm(token: string): boolean {
  return token.startsWith(`${RUN_TOKEN_PREFIX}.`);
}

/**
 * A new MCP session ID bound to a run: `<random>.<HMAC(run ID, random)>`, base64url. Nothing is
 * stored; {@linkcode verifySessionId} recomputes the MAC.
 *
 * @param signer The app's signer.
 * @param runId The run in the request's path.
 * @returns The session ID (visible ASCII, and a valid tool call ID prefix).
 */
export async function newSessionId(signer: Signer, runId: string): Promise<string> {
  const random = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  return `${random}.${await signer.mac(`${SESSION_CONTEXT}.${runId}.${random}`)}`;
}

/**
 * Whether a session ID was issued by this server (this secret) for this run.
 *
 * @param signer The app's signer.
 * @param sessionId The `Mcp-Session-Id` header as sent.
 * @param runId The run in the request's path.
 */
export async function verifySessionId(
  signer: Signer,
  sessionId: string,
  runId: string,
): Promise<boolean> {
  const parts = sessionId.split(".");
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]{22}$/.test(parts[0]!)) return false;
  return await signer.verify(`${SESSION_CONTEXT}.${runId}.${parts[0]}`, parts[1]!);
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** @throws {DOMException} When the text is not base64url. */
function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new SyntaxError("not base64url");
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}
