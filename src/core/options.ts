/**
 * The public option, hook and event types of `ToolBoundary`: what it is created with, what
 * `startRun` and `invoke` take, what the `authorize` hook is asked and what the `observe` hook
 * receives. They live apart from the class so that its steps can read them.
 *
 * @module
 */
import type { RunArchive } from "./archive.ts";
import type { ErrorCode } from "./errors.ts";
import type { JsonObject } from "./json.ts";
import type { RecordCost, RecordProof } from "./types.ts";
import type { Limits } from "./limits.ts";
import type { Store } from "./store.ts";
import type { AnyToolDefinition } from "./tool.ts";
import type { BoundaryResult, ErrorResult, RunBudget, RunContext } from "./types.ts";

/** What `authorize` is asked about. */
export interface AuthorizeRequest {
  /** The framework's tool call ID. */
  toolCallId: string;
  /** The tool. */
  tool: AnyToolDefinition;
  /** The input, after schema validation. */
  input: JsonObject;
}

/**
 * Events for the harness's logs and traces. They may carry internal detail (`error`), so they
 * go to the `observe` hook and nowhere else.
 */
export type BoundaryEvent =
  | {
    /** A call was refused before its executor ran: no record was created. */
    type: "call.refused";
    runId: string;
    toolCallId: string | null;
    toolName: string | null;
    code: ErrorCode;
    /** A copy of what `invoke` returned to the agent. */
    result: ErrorResult;
    /** Internal detail (schema issues, a thrown error); never shown to an agent. */
    error?: unknown;
  }
  | {
    /** A call that began has ended (its record is READY or ERROR, or could not be written). */
    type: "call.finished";
    runId: string;
    toolCallId: string;
    toolName: string;
    status: "READY" | "ERROR";
    code: ErrorCode | null;
    durationMs: number;
    /** A copy of what `invoke` returned to the agent (its evidence, for traces). */
    result: BoundaryResult;
    /**
     * With a `ledgerKey`, once the record was written: its proof, so the harness can anchor
     * `proof.hash` in a log of its own (a record deleted before its run is sealed still shows).
     */
    proof?: RecordProof;
    /**
     * Only for a call of a tool with a `cost`: its record's `cost`, what begin reserved and what
     * the call spent (`spent` is `null` when the complete could not be written).
     */
    cost?: RecordCost;
    /** Internal detail of a failure; never shown to an agent. */
    error?: unknown;
  }
  | {
    /** A used key with the same request got its recorded result again: nothing ran. */
    type: "call.replayed";
    runId: string;
    toolCallId: string;
    toolName: string;
    /** The recorded status. */
    status: "READY" | "ERROR";
    /** The recorded error code of an ERROR record, else `null`. */
    code: ErrorCode | null;
    /** A copy of what `invoke` returned to the agent (`replayed: true`). */
    result: BoundaryResult;
  }
  | {
    /** A run was started. */
    type: "run.started";
    runId: string;
    deadline: number;
  }
  | {
    /** A run was ended and its facts projected. */
    type: "run.ended";
    runId: string;
    facts: number;
    omitted: number;
  };

/** Options of {@linkcode ToolBoundary}. */
export interface ToolBoundaryOptions {
  /** The canonical store. @default new MemoryStore() */
  store?: Store;
  /** The tools agents may call. Names must be unique. */
  tools: readonly AnyToolDefinition[];
  /** Byte and count limits; missing ones take {@linkcode DEFAULT_LIMITS}. */
  limits?: Partial<Limits>;
  /** TTL of each record, set once at creation. @default 86400000 (24 hours) */
  recordTtlMs?: number;
  /** Run length when `startRun` gets neither `deadline` nor `ttlMs`. @default 900000 (15 min) */
  runTtlMs?: number;
  /** Budget when `startRun` gets none. @default { calls: 100 } */
  defaultBudget?: RunBudget;
  /**
   * What `invoke` answers for a tool call ID already used in the run with the same request (an
   * equal input as a JSON value): `"refuse"`, ERROR DUPLICATE_TOOL_CALL; or `"replay"`, the
   * recorded result exactly as first returned plus `replayed: true` (a record still PROJECTING:
   * ERROR OUTCOME_UNKNOWN; one that expired: ERROR RECORD_EXPIRED). Either way the tool never
   * runs again and no budget is used; another request under a used ID is TOOL_CALL_CONFLICT.
   * @default "refuse"
   */
  onDuplicate?: "refuse" | "replay";
  /** Decides whether a call is allowed; anything but `true` (or a throw) refuses it. */
  authorize?: (run: RunContext, call: AuthorizeRequest) => boolean | Promise<boolean>;
  /**
   * Milliseconds `authorize` may take. A call whose `authorize` has not answered by then, or by
   * the run deadline if that comes first, is refused (UNAUTHORIZED, or DEADLINE_EXCEEDED) and
   * creates no record. @default 10000 (10 s)
   */
  authorizeTimeoutMs?: number;
  /**
   * How long a store write that threw (an infrastructure failure, not a refusal) is tried again
   * with the same attempt, with backoff from 50 ms up to 1 s between tries, counted from its
   * first failure: a call's complete, so that the outcome a tool produced is kept when the store
   * comes back within it (the agent waits meanwhile, and gets STORE_UNAVAILABLE only after it),
   * and a run's start. Both are safe to repeat: a store answers a repeat of an attempt with what
   * the first wrote. A try under way when it ends is awaited (a store bounds each try by its own
   * timeout, `timeoutMs` on UpstashStore). `0` tries once. A begin is never tried again: when it
   * fails the tool has not run.
   * @default 5000
   */
  storeRetryMs?: number;
  /** Receives events with internal detail, for harness logs and traces. Errors it throws are ignored. */
  observe?: (event: BoundaryEvent) => void;
  /** Epoch ms clock; readings are rounded down to whole milliseconds. @default Date.now */
  clock?: () => number;
  /**
   * The Ed25519 private key (a JWK, as `generateLedgerKeys` makes it) that signs each completed
   * record (`record.proof`) and each ended run (the receipt): see docs/proof.md. Checked when
   * the boundary is created (a TypeError for anything but an Ed25519 private JWK), then
   * imported with WebCrypto in the background and proved a key pair by signing a probe with `d`
   * and verifying it with `x`. A key that fails (`d` not the private key of `x`) is a TypeError
   * naming `ledgerKey` from `startRun`, `invoke` (before any record is made or tool runs),
   * `endRun` and `ledgerPublicKey`. The store needs `sealRun` and `exportRun`. Without it
   * nothing is signed and no record has a proof.
   */
  ledgerKey?: JsonWebKey;
  /**
   * The ID the proofs and receipts name the key by, so keys can rotate: 1 to 128 of
   * `A-Z a-z 0-9 _ . : -`. @default the RFC 7638 thumbprint of the public key (base64url)
   */
  keyId?: string;
  /**
   * Stamps each seal in time (RFC 3161): given the SHA-256 of the signed receipt (of its
   * canonical JSON, `sig` included, `timestamp` not), it answers the DER of a TimeStampToken of
   * a Time Stamping Authority, e.g. `rfc3161(url)` of `@tool-boundary/core/timestamp`. Called once
   * per seal, by the `endRun` that seals the run, never per call; the token is kept in the
   * receipt (`receipt.timestamp`, base64url) and `verifyRun(bundle, key, { tsaCertificates })`
   * checks it. When it rejects (or answers anything but 1 byte to 64 KiB), `endRun` fails with
   * TIMESTAMP_UNAVAILABLE and nothing is sealed; a later `endRun` asks again. Needs `ledgerKey`.
   * See docs/proof.md.
   */
  timestamp?: (digest: Uint8Array) => Promise<Uint8Array>;
  /**
   * Keeps each sealed run past the store's TTL: every `endRun` that answers a sealed run (the
   * one that seals it, after the seal is kept and stamped, and every later one) writes the run's
   * bundle, `JSON.stringify(await exportRun(runId))`, with `archive.put(runId, bundleJson)`.
   * Never called per call. A write that fails makes `endRun` fail with ARCHIVE_UNAVAILABLE; the
   * run stays sealed, and a later `endRun` writes the same seal again. E.g. `r2Archive(bucket)`
   * of `@tool-boundary/cloudflare`, or `memoryArchive()` for tests. Needs `ledgerKey`. See
   * docs/proof.md.
   */
  archive?: RunArchive;
}

/** Options of {@linkcode ToolBoundary.startRun}. */
export interface StartRunOptions {
  /** A run ID to use; generated (a UUID) when omitted. */
  runId?: string;
  /** Epoch ms or a Date; wins over `ttlMs`. */
  deadline?: number | Date;
  /** Run length from now, in ms. */
  ttlMs?: number;
  /** Call budgets. */
  budget?: RunBudget;
  /**
   * Makes the start safe to send again (after a failure whose outcome is unknown: a timeout, a
   * STORE_UNAVAILABLE, a lost response): 1 to 255 visible ASCII characters (no space), unique
   * per start, such as a UUID. The key and the other options are the start's attempt: a start
   * sent again with both returns the run the first one started (while it lives), not
   * RUN_ALREADY_EXISTS; the key with other options is another start, refused
   * RUN_ALREADY_EXISTS. Without `runId`, the run ID is derived from the key (its SHA-256 in the
   * form of a UUID), so every repeat names the same run.
   */
  idempotencyKey?: string;
}

/** Options of {@linkcode ToolBoundary.invoke}. */
export interface InvokeOptions {
  /**
   * The agent framework's cancellation. Aborted before the call begins: ERROR CANCELLED, no
   * record, the tool never runs. Aborted while the store begins the call: its record ends ERROR
   * CANCELLED and the tool never runs. Aborted while the tool or its projector runs: the tool's
   * `ctx.signal` fires with the same reason and the record ends ERROR CANCELLED (a tool that
   * ran out of time first stays TOOL_TIMEOUT).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineTool, type InvokeOptions, ToolBoundary } from "@tool-boundary/core";
   * const echo = defineTool({
   *   name: "echo",
   *   readOnly: true,
   *   execute: (input) => input,
   *   project: () => ({ evidence: "NO_EVIDENCE", scope: "echo", content: null }),
   * });
   * const boundary = new ToolBoundary({ tools: [echo] });
   * const run = await boundary.startRun();
   * const options: InvokeOptions = { signal: AbortSignal.abort() };
   * const envelope = { toolCallId: "call_1", runId: run.runId, toolName: "echo", input: {} };
   * const result = await boundary.invoke(run, envelope, options);
   * assert.equal(result.status === "ERROR" && result.code, "CANCELLED");
   * ```
   */
  signal?: AbortSignal;
}
