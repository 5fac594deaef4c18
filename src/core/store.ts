/**
 * The `Store` interface: the canonical invocation store, harness-only.
 *
 * A store keeps runs (state, budgets, progress index) and canonical records. Each method is one
 * atomic operation, and the store itself enforces the rules, not only the boundary in front of
 * it: begin checks the run, the deadline, duplicates and budgets and creates the record all or
 * nothing; complete allows only PROJECTING -> READY | ERROR with valid evidence, keeps the TTL and
 * appends to the progress index; reads never touch the TTL.
 *
 * Payloads cross this interface as JSON text, so byte limits apply to exactly what is stored and
 * no store has to serialize twice. Infrastructure failures are thrown (the boundary maps them to
 * STORE_UNAVAILABLE); outcomes a caller must handle are returned as `{ ok: false, code }`.
 *
 * Every operation that writes takes an `attemptId`, unique per logical operation: a store whose
 * transport may resend a request (HTTP retries) must treat a repeat of the same attempt as the
 * same operation, neither a duplicate of itself nor a second use of a budget.
 *
 * Every store accepts the same values, checked before anything is written or sent (with
 * `checkStartRunRequest`, `checkBeginRequest`, `checkEpochMs` and `checkReadFactsRequest` from
 * `./limits.ts`): `startRun` and `begin` refuse a run ID or tool call ID outside the allow-lists
 * with INVALID_RUN_ID / INVALID_TOOL_CALL_ID, and a method rejects with a `RangeError` a deadline
 * or `now` that is not an integer epoch ms from 0 to `MAX_EPOCH_MS`, a TTL that is not an integer
 * from 1 to `MAX_TTL_MS`, a budget that is not an integer from 0 to `MAX_BUDGET`, a tool name (in
 * `begin` or as a `perTool` key) with a lone surrogate, or a fact cap that is neither a safe
 * integer nor `Infinity`. Per-tool tables are read and written as own properties only:
 * `__proto__`, `constructor` and `toString` are tool names like any other.
 *
 * @module
 */
import type { ErrorCode } from "./errors.ts";
import type { EvidenceStatus, ProjectedEvidence, RecordStatus } from "./types.ts";

/** The state of a run as the store keeps it. */
export interface RunState {
  /** The run ID. */
  runId: string;
  /** ACTIVE until `endRun`. */
  status: "ACTIVE" | "ENDED";
  /** Epoch ms after which no call may begin. */
  deadline: number;
  /** Epoch ms when the run was started. */
  startedAt: number;
  /** Epoch ms when the run was ended, else `null`. */
  endedAt: number | null;
  /** Budgets in force. */
  budget: { calls: number; perTool: Record<string, number> };
  /** Calls begun so far, in all and per tool. */
  used: { calls: number; perTool: Record<string, number> };
}

/** A canonical record as stored: payloads as the exact JSON text. */
export interface StoredRecord {
  /** The run that owns the record. */
  runId: string;
  /** The framework's exact tool call ID. */
  toolCallId: string;
  /** The tool called. */
  toolName: string;
  /** Lifecycle status. */
  status: RecordStatus;
  /** `null` while PROJECTING. */
  evidence: EvidenceStatus | null;
  /** The request JSON text. */
  requestJson: string;
  /** The raw response JSON text, or `null`. */
  rawJson: string | null;
  /** The agent result JSON text (`{evidence, scope, content}`), or `null`. */
  agentResultJson: string | null;
  /** The error code when ERROR. */
  errorCode: ErrorCode | null;
  /** The attempt that created the record. */
  attemptId: string;
  /** Epoch ms of creation. */
  createdAt: number;
  /** Epoch ms of the last transition. */
  updatedAt: number;
  /** Epoch ms of expiry, fixed at creation. */
  expiresAt: number;
}

/** Arguments of {@linkcode Store.startRun}. */
export interface StartRunRequest {
  /** A validated run ID. */
  runId: string;
  /** Epoch ms deadline. */
  deadline: number;
  /** Budgets: total calls, and per tool (already merged with tool defaults). */
  budget: { calls: number; perTool: Record<string, number> };
  /** How long the run state and its progress index live, in ms (set once). */
  ttlMs: number;
  /** Unique per logical start; a repeat of it returns the same run. */
  attemptId: string;
  /** The caller's clock, epoch ms. */
  now: number;
}

/** Arguments of {@linkcode Store.begin}. */
export interface BeginRequest {
  /** A validated run ID. */
  runId: string;
  /** A validated tool call ID, exact. */
  toolCallId: string;
  /** The tool name. */
  toolName: string;
  /** The complete request JSON text. */
  requestJson: string;
  /** Unique per invocation; a repeat of it is the same begin. */
  attemptId: string;
  /** Record TTL in ms, set once here. */
  ttlMs: number;
  /** The caller's clock, epoch ms. */
  now: number;
}

/** The READY or ERROR outcome a complete writes. */
export type CompleteOutcome =
  | {
    /** READY: raw, agent result and a projected evidence status. */
    status: "READY";
    /** EVIDENCE_FOUND or NO_EVIDENCE; anything else is refused by the store. */
    evidence: ProjectedEvidence;
    /** The raw response JSON text. */
    rawJson: string;
    /** The agent result JSON text. */
    agentResultJson: string;
  }
  | {
    /** ERROR: evidence becomes ERROR. */
    status: "ERROR";
    /** Why. */
    errorCode: ErrorCode;
    /** The raw response JSON text when it was valid and within limits, else `null`. */
    rawJson: string | null;
  };

/** Arguments of {@linkcode Store.complete}. */
export interface CompleteRequest {
  /** The run ID. */
  runId: string;
  /** The tool call ID. */
  toolCallId: string;
  /** Must equal the attempt that began the record. */
  attemptId: string;
  /** What to write. */
  outcome: CompleteOutcome;
  /** The caller's clock, epoch ms. */
  now: number;
}

/** Arguments of {@linkcode Store.endRun}. */
export interface EndRunRequest {
  /** The run ID. */
  runId: string;
  /** The caller's clock, epoch ms. */
  now: number;
}

/** A canonical identity: the key of one record. */
export interface CanonicalIdentity {
  /** The run ID. */
  runId: string;
  /** The tool call ID. */
  toolCallId: string;
}

/** Arguments of {@linkcode Store.readFacts}. */
export interface ReadFactsRequest {
  /** The run whose facts are read: identities of any other run are excluded. */
  runId: string;
  /** Identities in execution order. */
  identities: CanonicalIdentity[];
  /** Stop after this many facts. */
  maxFacts: number;
  /** Stop before the agent-result bytes of the facts would exceed this. */
  maxBytes: number;
}

/** One READY record's fact fields, without the request or raw response. */
export interface FactRow {
  /** The owning run (always the requested run). */
  runId: string;
  /** The tool call ID. */
  toolCallId: string;
  /** The tool name. */
  toolName: string;
  /** Always READY. */
  status: RecordStatus;
  /** EVIDENCE_FOUND or NO_EVIDENCE. */
  evidence: EvidenceStatus | null;
  /** The agent result JSON text. */
  agentResultJson: string;
  /** Epoch ms when the record became READY. */
  updatedAt: number;
}

/** A refusal the caller must handle: nothing was written. */
export interface StoreRefusal {
  /** Not done. */
  ok: false;
  /** Why. */
  code: ErrorCode;
}

/**
 * The canonical invocation store. See the module doc for the rules every implementation keeps;
 * `storeConformance` from `./testing` checks them.
 */
export interface Store {
  /**
   * Creates a run: ACTIVE, with its deadline and budgets, counters at zero.
   * Refuses RUN_ALREADY_EXISTS unless it is a repeat of the same attempt.
   */
  startRun(request: StartRunRequest): Promise<{ ok: true; run: RunState } | StoreRefusal>;
  /** Reads a run; `null` when absent or expired. Never touches TTLs. */
  getRun(runId: string): Promise<RunState | null>;
  /**
   * Atomically: run exists (RUN_NOT_FOUND), is ACTIVE (RUN_INACTIVE), `now` before its deadline
   * (DEADLINE_EXCEEDED), key new (DUPLICATE_TOOL_CALL, unless the same attempt; a key stays
   * used for the life of the run even after its record expires, so no call runs twice), tool
   * and run budgets left (TOOL_BUDGET_EXHAUSTED, RUN_BUDGET_EXHAUSTED); then creates the
   * PROJECTING record with its TTL and counts both budgets. A refusal writes nothing.
   */
  begin(request: BeginRequest): Promise<{ ok: true; record: StoredRecord } | StoreRefusal>;
  /**
   * Atomically: PROJECTING -> READY | ERROR for the attempt that began it, keeping the remaining
   * TTL, and appends the identity to the run's progress index. An absent record gives
   * RECORD_EXPIRED and stays absent; any other transition, another attempt, or READY with an
   * evidence other than EVIDENCE_FOUND / NO_EVIDENCE gives ILLEGAL_TRANSITION. Repeating the same
   * attempt with the same outcome returns the stored record again.
   */
  complete(request: CompleteRequest): Promise<{ ok: true; record: StoredRecord } | StoreRefusal>;
  /** Reads one record; `null` when absent or expired. Never touches its TTL. */
  get(runId: string, toolCallId: string): Promise<StoredRecord | null>;
  /**
   * Marks the run ENDED (idempotent) and returns its progress index: the tool call IDs of its
   * completed calls in completion order. RUN_NOT_FOUND when absent.
   *
   * The first endRun fixes the facts: a call still in flight then is recorded when it completes
   * (its complete succeeds and its record ends READY or ERROR), but every later endRun returns
   * exactly the tool call IDs the first returned, never the late call.
   */
  endRun(
    request: EndRunRequest,
  ): Promise<{ ok: true; run: RunState; toolCallIds: string[] } | StoreRefusal>;
  /**
   * Resolves identities to fact rows: only READY records owned by `runId` with evidence
   * EVIDENCE_FOUND or NO_EVIDENCE, in the given order, within the caps. Missing, expired,
   * cross-run, PROJECTING and ERROR identities are skipped. Never returns raw responses.
   */
  readFacts(request: ReadFactsRequest): Promise<{ rows: FactRow[]; omitted: number }>;
}
