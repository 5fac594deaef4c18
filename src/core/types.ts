/**
 * The data shapes shared by the boundary, the stores and the HTTP app.
 *
 * @module
 */
import type { ErrorCode } from "./errors.ts";
import type { JsonObject, JsonValue } from "./json.ts";

/** Lifecycle status of a canonical record. Only PROJECTING -> READY | ERROR is allowed. */
export type RecordStatus = "PROJECTING" | "READY" | "ERROR";

/** What a projector may declare about its result. */
export type ProjectedEvidence = "EVIDENCE_FOUND" | "NO_EVIDENCE";

/** Evidence status of a record: a READY record's projected evidence, or ERROR. */
export type EvidenceStatus = ProjectedEvidence | "ERROR";

/** Call budgets of a run: total calls, and optionally calls per tool name. */
export interface RunBudget {
  /** How many tool calls the run may begin in all. */
  calls: number;
  /** How many calls each named tool may begin in this run. */
  perTool?: Record<string, number>;
  /**
   * Cost units (cents, tokens: the harness chooses) the run's calls may reserve and spend in
   * all, an integer from 0 to `MAX_COST`. Only tools with a `cost` count against it. Absent: no
   * cost limit (calls of tools with a cost are still counted).
   */
  cost?: number;
}

/**
 * A run's cost: what its calls in flight hold reserved, and what its completed calls spent.
 * `reserved + spent` is what a cost budget must cover before another call begins.
 */
export interface RunCost {
  /**
   * Held by calls begun and not completed: a call whose boundary crashed keeps its reservation
   * held for the life of the run, never silently refunded.
   */
  reserved: number;
  /** Spent by completed calls, each as its record's `cost.spent`, excess included. */
  spent: number;
}

/** A call's cost, on the record of a call of a tool with a `cost` (absent for any other call). */
export interface RecordCost {
  /** Reserved by begin: the tool's cost for this call. */
  reserved: number;
  /**
   * What the call spent, fixed by complete: what the tool settled, else its reservation when
   * the tool ran, else 0 (cancelled before it ran). `null` while PROJECTING.
   */
  spent: number | null;
}

/**
 * The run instance a tool call runs in, as its tool and projector see it (`ctx.run`): the run
 * ID, the deadline and the start. A {@linkcode RunContext} is one; a call given only a
 * {@linkcode RunRef} gets the one the store's begin answered.
 */
export interface RunInstance {
  /** The run ID, validated against the run ID allow-list. */
  readonly runId: string;
  /** Epoch milliseconds after which no call may begin. */
  readonly deadline: number;
  /** Epoch milliseconds when the run was started: with the ID, it names the instance. */
  readonly startedAt: number;
}

/**
 * The explicit context of one run, passed to every call. Returned by `startRun`; immutable.
 */
export interface RunContext extends RunInstance {
  /** The budgets in force: `perTool` includes each tool's own default budget. */
  readonly budget: Readonly<
    { calls: number; perTool: Readonly<Record<string, number>>; cost?: number }
  >;
}

/**
 * A run named without its context, as an HTTP route or a worker that holds only the run ID knows
 * it: `invoke` and `recall` take one in place of a {@linkcode RunContext}, and read nothing
 * first. The store's begin then checks the run (and, with `startedAt`, that it is still the
 * instance of that start: a run ID started again after its state was gone is another instance,
 * and a call for the earlier one is RUN_NOT_FOUND) and answers the {@linkcode RunInstance} the
 * tool gets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, type RunRef, ToolBoundary } from "@tool-boundary/core";
 *
 * const ping = defineTool({
 *   name: "ping",
 *   readOnly: true,
 *   execute: (_input, { run }) => ({ deadline: run.deadline }),
 *   project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "ping", content: raw.deadline }),
 * });
 * const boundary = new ToolBoundary({ tools: [ping] });
 * const run = await boundary.startRun({ ttlMs: 60_000 });
 * const ref: RunRef = { runId: run.runId, startedAt: run.startedAt };
 * const result = await boundary.invoke(ref, {
 *   toolCallId: "call_1", runId: run.runId, toolName: "ping", input: {},
 * });
 * assert.equal(result.status === "READY" && result.content, run.deadline);
 * const stale = await boundary.invoke({ runId: run.runId, startedAt: run.startedAt - 1 }, {
 *   toolCallId: "call_2", runId: run.runId, toolName: "ping", input: {},
 * });
 * assert.equal(stale.status === "ERROR" && stale.code, "RUN_NOT_FOUND");
 * ```
 */
export interface RunRef {
  /** The run ID. */
  readonly runId: string;
  /**
   * The `startedAt` of the run instance the call is for (a run token carries it); absent for
   * whichever instance of the ID lives.
   */
  readonly startedAt?: number;
}

/**
 * One tool call as the agent framework produced it.
 *
 * Fields are typed `unknown` where they come from the agent: the boundary checks them.
 */
export interface ToolCallEnvelope {
  /** The framework's exact tool call ID; kept byte for byte. */
  toolCallId: unknown;
  /** The run this call claims to belong to; must equal the RunContext's run ID. */
  runId: unknown;
  /** The tool's name. */
  toolName: unknown;
  /** A JSON object, or JSON text of one (as OpenAI-style APIs deliver arguments). */
  input: unknown;
}

/** What a projector returns: the bounded result the agent sees. */
export interface Projection {
  /** EVIDENCE_FOUND, or NO_EVIDENCE for a scoped negative observation. */
  evidence: ProjectedEvidence;
  /** What was searched, where and when: the scope a negative observation is limited to. */
  scope: string;
  /** The bounded content for the agent. */
  content: JsonValue;
}

/** A successful call as the agent sees it. */
export interface ReadyResult extends Projection {
  /** READY: the record holds the raw response and this projection. */
  status: "READY";
  /** The framework's tool call ID, exactly as submitted. */
  toolCallId: string;
  /** Present when the result is the recorded one given again (replay, recall): nothing ran. */
  replayed?: true;
}

/** A schema issue an agent may see: where and what was expected, never the value. */
export interface InputIssue {
  /** Dotted path of the failing field, `""` for the whole input. */
  path: string;
  /** What was expected, from the schema. */
  expected: string | null;
}

/** A failed or refused call as the agent sees it: a code and a fixed message, nothing else. */
export interface ErrorResult {
  /** ERROR. */
  status: "ERROR";
  /** The tool call ID when it was valid; `null` when the ID itself was refused. */
  toolCallId: string | null;
  /** The stable error code. */
  code: ErrorCode;
  /** The fixed message of the code; carries no data from the call. */
  message: string;
  /** For INVALID_INPUT from a schema: failing field paths and expected types (no values). */
  issues?: InputIssue[];
  /** Present when the error is the one recorded, given again (replay, recall): nothing ran. */
  replayed?: true;
}

/** What `invoke` returns to the agent: a bounded result or a safe error. Never raw data. */
export type BoundaryResult = ReadyResult | ErrorResult;

/**
 * The one canonical record of a tool call (harness-only: it holds the raw response).
 */
export interface CanonicalRecord {
  /** The run that owns the record. */
  runId: string;
  /** The framework's exact tool call ID. */
  toolCallId: string;
  /** The tool that was called. */
  toolName: string;
  /** Lifecycle status. */
  status: RecordStatus;
  /** `null` while PROJECTING, the projected evidence when READY, `ERROR` when ERROR. */
  evidence: EvidenceStatus | null;
  /** The complete request, exactly as the tool received it. */
  request: JsonObject;
  /** The complete raw response; absent while PROJECTING or when it was invalid or too large. */
  raw?: JsonValue;
  /** The bounded agent result; present only when READY. */
  agentResult: Projection | null;
  /** The error code when ERROR, else `null`. */
  errorCode: ErrorCode | null;
  /**
   * The call's position in its run: 1, 2, 3, ... in begin order, assigned atomically by the
   * store's begin. Covered by the record's proof, so a gap or a swap in a bundle shows.
   */
  seq: number;
  /** Epoch ms when the record was created (PROJECTING). */
  createdAt: number;
  /** Epoch ms of the last transition. */
  updatedAt: number;
  /** Epoch ms when the record expires; set once at creation. */
  expiresAt: number;
  /**
   * Only for a call of a tool with a `cost`: what begin reserved and what the call spent
   * (`null` while PROJECTING). Covered by the record's proof.
   */
  cost?: RecordCost;
  /**
   * Harness-only: on an ERROR record of a tool whose executor threw (EXECUTION_FAILED), what it
   * threw. Never shown to the agent, a model view, an MCP answer or a span.
   */
  failure?: ToolFailure;
  /**
   * Present once the record completed on a boundary with a `ledgerKey`: the hash of every other
   * field (their canonical JSON) and its Ed25519 signature (see docs/proof.md).
   */
  proof?: RecordProof;
}

/**
 * What a tool's executor threw, as its record keeps it (harness-only), read once by
 * `readFailure`: a short `name` (the error's, or the `typeof` of a thrown non-object) and its
 * `message`, `null` when there was none or its JSON would pass `MAX_FAILURE_BYTES`.
 */
export interface ToolFailure {
  /** 1 to 64 of `A-Z a-z 0-9 _ $ . : -`, starting with a letter, `_` or `$`; else "Error". */
  name: string;
  /** The message as thrown, whole, or `null` (none, not a string, or past the bound). */
  message: string | null;
}

/** A bounded observed fact produced at the end of a run from one READY record. */
export interface ObservedFact {
  /** The tool call that produced it. */
  toolCallId: string;
  /** The tool that produced it. */
  toolName: string;
  /** EVIDENCE for EVIDENCE_FOUND; NEGATIVE_OBSERVATION for NO_EVIDENCE, limited to `scope`. */
  kind: "EVIDENCE" | "NEGATIVE_OBSERVATION";
  /** The record's evidence status. */
  evidence: ProjectedEvidence;
  /** The scope of the observation. */
  scope: string;
  /** The bounded content the agent saw. */
  content: JsonValue;
  /** Epoch ms when the record became READY. */
  observedAt: number;
}

/** Whether a final answer may cite one tool call, as `checkCitations` decides it. */
export interface Citation {
  /** The tool call ID, as given. */
  toolCallId: string;
  /**
   * EVIDENCE: a READY record of this run with EVIDENCE_FOUND. NEGATIVE_OBSERVATION: READY with
   * NO_EVIDENCE, valid only within `scope`. NOT_EVIDENCE: anything else (never begun, expired,
   * another run's, still PROJECTING, ERROR, or an ID outside the allow-list).
   */
  verdict: "EVIDENCE" | "NEGATIVE_OBSERVATION" | "NOT_EVIDENCE";
  /** The scope of a NEGATIVE_OBSERVATION, from the recorded agent result; absent otherwise. */
  scope?: string;
}

/** A run and its facts as `endRun` reports them. */
export interface RunEnd {
  /** Facts in execution order, within the count and byte caps. */
  facts: ObservedFact[];
  /** READY records of the run left out because of the caps. */
  omitted: number;
  /** With a `ledgerKey`: the run's seal, signed over its calls and these facts. */
  receipt?: RunReceipt;
}

/** What a completed record carries when the boundary has a ledger key. */
export interface RecordProof {
  /** Base64url SHA-256 of the canonical JSON of the record without `proof`. */
  hash: string;
  /** Base64url Ed25519 signature of {@linkcode recordMessage}. */
  sig: string;
  /** The key that signed. */
  keyId: string;
}

/**
 * One begun call of a sealed run, in begin order, with the hash of its record when it was
 * completed at the seal. Without `state`: completed with a proof, `hash` the proof's. UNSIGNED:
 * completed without a proof (by a boundary without a ledger key, or written past the boundary),
 * `hash` its record's as the seal read it (`null` when the record was already gone or not
 * data); `verifyRun` never finds such a call ok. INCOMPLETE: not completed when the run was
 * sealed (still in flight, or its record expired PROJECTING); once completed, its record must
 * carry a proof of its own.
 */
export type ReceiptCall =
  | { toolCallId: string; hash: string }
  | { toolCallId: string; hash: string | null; state: "UNSIGNED" }
  | { toolCallId: string; hash: null; state: "INCOMPLETE" };

/** The seal of an ended run instance, signed over its calls and its facts. */
export interface RunReceipt {
  /** The run. */
  runId: string;
  /**
   * The run's `startedAt`: with `runId`, the instance sealed (a run ID can be started again
   * once an earlier run's state is gone; each start is another instance).
   */
  startedAt: number;
  /** Every begun call, in begin order. */
  calls: ReceiptCall[];
  /** Base64url SHA-256 of the canonical JSON of the facts the sealing `endRun` returned. */
  factsHash: string;
  /** The key that signed. */
  keyId: string;
  /** Base64url Ed25519 signature of {@linkcode receiptMessage}. */
  sig: string;
  /**
   * With the boundary's `timestamp` option: the RFC 3161 TimeStampToken (DER, base64url) of a
   * Time Stamping Authority over the SHA-256 of the canonical JSON of this receipt without
   * `timestamp` (its `sig` included). `verifyRun` checks it with `tsaCertificates`.
   */
  timestamp?: string;
}
