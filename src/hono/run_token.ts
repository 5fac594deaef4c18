/**
 * Signed values the app hands out and checks without storing anything: run-scoped agent tokens
 * and MCP session IDs. Both are HMAC-SHA-256 (WebCrypto) under the server secret, each with its
 * own prefix in the signed text, so that one can never stand for the other. The signer keeps the
 * MACs it made or found right in memory (bounded), so a token or session seen before is checked
 * without a WebCrypto call.
 *
 * @module
 */
import { isSafeRunId } from "../core/ids.ts";
import { fromBase64url, toBase64url } from "../core/ledger.ts";
import { decodeUtf8 } from "../core/utf8.ts";
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
const SESSION_RANDOM = /^[A-Za-z0-9_-]{22}\./;
const encoder = new TextEncoder();

/**
 * How many MACs a {@linkcode Signer} keeps in memory, first kept first out: each entry is a
 * signed text of at most a few hundred bytes and its 43-character MAC.
 */
export const KNOWN_MACS = 4096;

/** A kept MAC, and what was read from its text (a run token's claims), read once. */
interface Kept {
  mac: string;
  read?: unknown;
}

/**
 * HMAC-SHA-256 under one server secret; the key is imported once, on first use.
 *
 * WebCrypto costs a turn of the event loop and a hop to the runtime per call (about 70 µs outside
 * workerd), and a run token or session ID is checked on every request that carries it. So the
 * signer keeps the MACs it made (a token it signed, a session it issued) and those it checked and
 * found right, by signed text, at most {@linkcode KNOWN_MACS} of them (the first kept goes first):
 * a text seen before is checked against the kept MAC, in constant time, with no
 * WebCrypto call. A MAC is a function of the text and the secret alone, so a kept one is exactly
 * what WebCrypto would give again. A MAC found wrong is never kept: a forged token costs a
 * WebCrypto call each time and cannot push the genuine ones out.
 *
 * A speed trick; its plain twin is WebCrypto on every request (what a signer that never saw the
 * text does, and `tests/http/run_token_signing_test.ts` holds the two to the same answers). What it
 * buys, in process (BENCHMARKS.md, figure 13): a tool call with a run token 101 -> 20 µs (the
 * static token's is 19), an MCP `tools/call` with a run token and a session 154 -> 26 µs.
 */
export class Signer {
  readonly #secret: string;
  #key: Promise<CryptoKey> | undefined;
  /** Signed text -> its MAC; a Map keeps insertion order, so the first key is the oldest. */
  readonly #known = new Map<string, Kept>();

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

  /** How many MACs are kept. */
  get known(): number {
    return this.#known.size;
  }

  /** The MAC of `text`, base64url without padding; kept, as the next request will show it. */
  async mac(text: string): Promise<string> {
    const kept = this.#recall(text);
    if (kept !== undefined) return kept.mac;
    const mac = await this.#sign(text);
    this.#keep(text, mac);
    return mac;
  }

  /**
   * Whether `given` is the MAC of `text`, compared in constant time: at once when the MAC of
   * `text` is kept, else after WebCrypto computed it (and kept it, when `given` was right).
   */
  verify(text: string, given: string): boolean | Promise<boolean> {
    const kept = this.#recall(text);
    if (kept !== undefined) return constantTimeEqual(kept.mac, given);
    return this.#sign(text).then((mac) => {
      const right = constantTimeEqual(mac, given);
      if (right) this.#keep(text, mac);
      return right;
    });
  }

  /**
   * What `read` gives for a text whose MAC is kept, read once and kept with it (a run token's
   * claims are a function of its text); read every time for a text whose MAC is not kept.
   */
  readOnce<T>(text: string, read: () => T): T {
    const kept = this.#known.get(text);
    if (kept === undefined) return read();
    if (!("read" in kept)) kept.read = read();
    return kept.read as T;
  }

  /** Drops the kept MAC of `text` (a token past its expiry is not checked again). */
  forget(text: string): void {
    this.#known.delete(text);
  }

  async #sign(text: string): Promise<string> {
    this.#key ??= crypto.subtle.importKey(
      "raw",
      encoder.encode(this.#secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = await crypto.subtle.sign("HMAC", await this.#key, encoder.encode(text));
    return toBase64url(new Uint8Array(mac));
  }

  /**
   * The kept MAC of `text`. Not moved to the back: with a few thousand entries a Map's delete and
   * set on every request cost more than the WebCrypto call saved now and then by keeping the most
   * used ones longer (about 9 µs against 0.1 µs for the lookup alone, in Deno).
   */
  #recall(text: string): Kept | undefined {
    return this.#known.get(text);
  }

  #keep(text: string, mac: string): void {
    this.#known.delete(text);
    this.#known.set(text, { mac });
    if (this.#known.size > KNOWN_MACS) this.#known.delete(this.#known.keys().next().value!);
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
  const payload = toBase64url(
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
 * no store read. Synchronous when the signer keeps the token's MAC (see {@linkcode Signer}); a
 * token past its expiry is refused and its MAC no longer kept.
 *
 * @param signer The app's signer.
 * @param token A bearer token.
 * @param now Epoch ms.
 * @returns The claims of a genuine token that has not expired, else `null`.
 */
export function verifyRunToken(
  signer: Signer,
  token: string,
  now: number,
): RunTokenClaims | null | Promise<RunTokenClaims | null> {
  // `tbr.<payload>.<mac>`: exactly two dots, the prefix before the first.
  if (!token.startsWith(`${RUN_TOKEN_PREFIX}.`)) return null;
  const dot = token.indexOf(".", RUN_TOKEN_PREFIX.length + 1);
  if (dot < 0 || token.indexOf(".", dot + 1) >= 0) return null;
  const signed = token.slice(0, dot);
  const payload = signed.slice(RUN_TOKEN_PREFIX.length + 1);
  const mac = token.slice(dot + 1);
  const claimsOf = (genuine: boolean): RunTokenClaims | null => {
    if (!genuine) return null;
    const claims = signer.readOnce(signed, () => readClaims(payload));
    if (claims !== null && now < claims.exp) return claims;
    signer.forget(signed);
    return null;
  };
  const genuine = signer.verify(signed, mac);
  return typeof genuine === "boolean" ? claimsOf(genuine) : genuine.then(claimsOf);
}

/** The claims of a run token's payload (its MAC already checked), or `null` when malformed. */
function readClaims(payload: string): RunTokenClaims | null {
  const bytes = fromBase64url(payload);
  if (bytes === null) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(decodeUtf8(bytes));
  } catch {
    return null;
  }
  if (typeof claims !== "object" || claims === null) return null;
  const { runId, startedAt, exp } = claims as Record<string, unknown>;
  if (!isSafeRunId(runId) || !Number.isSafeInteger(startedAt) || !Number.isSafeInteger(exp)) {
    return null;
  }
  // Frozen: the signer hands the same claims to every request of the token.
  return Object.freeze({ runId, startedAt: startedAt as number, exp: exp as number });
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
  const random = toBase64url(crypto.getRandomValues(new Uint8Array(16)));
  return `${random}.${await signer.mac(`${SESSION_CONTEXT}.${runId}.${random}`)}`;
}

/**
 * Whether a session ID was issued by this server (this secret) for this run; synchronous when the
 * signer keeps its MAC (it issued or checked it before).
 *
 * @param signer The app's signer.
 * @param sessionId The `Mcp-Session-Id` header as sent.
 * @param runId The run in the request's path.
 */
export function verifySessionId(
  signer: Signer,
  sessionId: string,
  runId: string,
): boolean | Promise<boolean> {
  // `<random>.<mac>`: 22 characters of base64url, one dot, the MAC.
  if (sessionId.length < 23 || !SESSION_RANDOM.test(sessionId)) return false;
  const mac = sessionId.slice(23);
  if (mac.includes(".")) return false;
  return signer.verify(`${SESSION_CONTEXT}.${runId}.${sessionId.slice(0, 22)}`, mac);
}
