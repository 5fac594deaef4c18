/**
 * The `Store` interface: the canonical invocation store, harness-only.
 *
 * A store is a small required core ({@linkcode Store}: startRun, getRun, begin, complete, get,
 * endRun, readFacts: what every boundary call needs) plus optional capabilities, each an
 * interface of its own that a store offers whole or not at all: {@linkcode CallIndex}
 * (lookupCall, listCalls: `recall`, `listCalls`, `GET /v1/runs/:runId`), {@linkcode RunIndex}
 * (listRuns: `listRuns`, `GET /v1/runs`) and {@linkcode RunSeal} (sealRun, exportRun, and
 * endRun's `seal` answer: a boundary with a `ledgerKey`, `exportRun`). `capabilitiesOf` tells
 * which a store offers; a boundary asked for one its store lacks refuses with a TypeError that
 * names it.
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
 * A run ID names a run only while its state lives: once it is gone (expired, or lost with the
 * store's data), the ID can be started again, as another instance of the run. An instance is
 * told by its `startedAt`: `begin` and `lookupCall` take the one they are for and treat a run
 * of the same ID that started at another ms as absent (RUN_NOT_FOUND, `null`), and begin's
 * answer names the instance it began in, so no caller has to read the run first.
 *
 * Every store accepts the same values, checked before anything is written or sent (with
 * `checkStartRunRequest`, `checkBeginRequest`, `checkEpochMs` and `checkReadFactsRequest` from
 * `./limits.ts`): a method rejects with a `RangeError` a deadline, `now` or instance `startedAt`
 * that is not an integer epoch ms from 0 to 8.64e15 (the largest `Date`), a TTL that is not an
 * integer from 1 to 1e14, a budget that is not a safe integer of at least 0, a tool name (in `begin` or as a `perTool` key)
 * with a lone surrogate, a `requestDigest` that is not 1 to 128 of `A-Z a-z 0-9 _ -`, or a fact
 * cap that is neither a safe integer nor `Infinity`. Per-tool tables are read and written as own
 * properties only: `__proto__`, `constructor` and `toString` are tool names like any other.
 *
 * IDs outside the allow-lists (`isSafeRunId`, `isSafeToolCallId`) are treated alike by every
 * store, and never reach storage: `startRun` refuses such a run ID with INVALID_RUN_ID, `begin`
 * such a run ID with INVALID_RUN_ID, then such a tool call ID with INVALID_TOOL_CALL_ID (both
 * before any other check). Every other method takes them as naming nothing: `getRun`, `get` and
 * `listCalls` answer `null`, `lookupCall` `null` for such a run ID and (when the run exists)
 * `{ call: null, record: null }` for such a tool call ID, `complete` RECORD_EXPIRED and `endRun`
 * RUN_NOT_FOUND (after checking `now`: `checkCompleteRequest`, `checkEndRunRequest`), and
 * `readFacts` skips the identity.
 *
 * @module
 */
import type { ErrorCode } from "./errors.ts";
import type {
  EvidenceStatus,
  ProjectedEvidence,
  RecordCost,
  RecordProof,
  RecordStatus,
  RunCost,
  ToolFailure,
} from "./types.ts";

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
  /**
   * Budgets in force: calls in all, calls per tool, and cost units in all (`cost`, an integer
   * from 0 to `MAX_COST`, only when the run was given one: a call begins only when what the run
   * holds reserved, plus what it spent, plus the call's cost fits in it).
   */
  budget: { calls: number; perTool: Record<string, number>; cost?: number };
  /** Calls begun so far, in all and per tool. */
  used: { calls: number; perTool: Record<string, number> };
  /**
   * The run's cost so far: present once the run has a cost budget or began a call of a tool
   * with a `cost`, absent otherwise.
   */
  cost?: RunCost;
}

/**
 * A canonical record as stored: payloads as the exact JSON text, kept and given back as the text
 * it was given (never a parsed copy), so every store answers the same record. The boundary's text
 * comes from `snapshotJson`, which writes `-0` as `0`, as JSON does.
 */
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
  /**
   * The call's position in its run: 1, 2, 3, ... in begin order, assigned by the begin that
   * created the record (the run's `used.calls` after it).
   */
  seq: number;
  /** Epoch ms of creation. */
  createdAt: number;
  /** Epoch ms of the last transition. */
  updatedAt: number;
  /** Epoch ms of expiry, fixed at creation. */
  expiresAt: number;
  /** The call's cost: only for a call begun with one (see {@linkcode BeginRequest.cost}). */
  cost?: RecordCost;
  /** What the executor threw, on an ERROR record (harness-only; see `CanonicalRecord`). */
  failure?: ToolFailure;
  /**
   * The proof the complete that ended the record carried, kept exactly; absent when it carried
   * none (and always while PROJECTING).
   */
  proof?: RecordProof;
}

/** Arguments of {@linkcode Store.startRun}. */
export interface StartRunRequest {
  /** A validated run ID. */
  runId: string;
  /** Epoch ms deadline. */
  deadline: number;
  /** Budgets: total calls, per tool (already merged with tool defaults), and cost. */
  budget: { calls: number; perTool: Record<string, number>; cost?: number };
  /** How long the run state and its progress index live, in ms (set once). */
  ttlMs: number;
  /** Unique per logical start; a repeat of it returns the same run. */
  attemptId: string;
  /** The caller's clock, epoch ms. */
  now: number;
}

/**
 * What {@linkcode Store.startRun} answers: the run it created (or, for a repeat of the attempt,
 * the run as stored), or why it refused (nothing written).
 */
export type StartRunReply =
  | { ok: true; run: RunState }
  | { ok: false; code: "INVALID_RUN_ID" | "RUN_ALREADY_EXISTS" };

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
  /**
   * What makes two requests the same: base64url SHA-256 of the canonical JSON of the request,
   * its tool and its input (the boundary computes it). Stores compare digests only, never
   * requests or tool names.
   */
  requestDigest: string;
  /**
   * When the key was begun by another attempt with the same digest, the DUPLICATE_TOOL_CALL
   * refusal carries the key's record (`null` once it expired), so the caller can answer with it.
   */
  replay?: boolean;
  /** Unique per invocation; a repeat of it is the same begin. */
  attemptId: string;
  /** Record TTL in ms, set once here. */
  ttlMs: number;
  /** The caller's clock, epoch ms. */
  now: number;
  /**
   * The instance of the run the call is for: its `startedAt` (an integer epoch ms). A run of
   * this ID that started at another ms is another instance (the one asked for is gone and its ID
   * was started again): begin refuses RUN_NOT_FOUND, as for an absent run, and writes nothing.
   * Absent: whichever instance lives.
   */
  startedAt?: number;
  /**
   * The tool's cost for this call (an integer, 0 to `MAX_COST`), reserved atomically with the
   * call counts: refused BUDGET_EXHAUSTED when the run's `budget.cost` cannot cover its
   * `reserved + spent` and this. Kept on the record as `cost.reserved`. Absent for a tool
   * without a cost: the record has no `cost` and no cost budget refuses it.
   */
  cost?: number;
}

/**
 * What {@linkcode Store.begin} answers: the PROJECTING record it created (or, for a repeat of
 * the attempt, the record as stored) and the run it began in; or the refusal, in the order begin
 * checks (nothing written).
 */
export type BeginReply =
  | {
    ok: true;
    /** The record as stored. */
    record: StoredRecord;
    /**
     * The run the call began in, so that the caller need not read it first; both fixed when the
     * run starts.
     */
    run: {
      /** Epoch ms after which no call may begin: the call's tool stage ends by it. */
      deadline: number;
      /** Epoch ms when the run was started: the instance the call began in. */
      startedAt: number;
    };
  }
  | {
    ok: false;
    /** Why, in the order begin checks. */
    code:
      | "INVALID_RUN_ID"
      | "INVALID_TOOL_CALL_ID"
      | "RUN_NOT_FOUND"
      | "RUN_INACTIVE"
      | "DEADLINE_EXCEEDED"
      | "TOOL_CALL_CONFLICT"
      | "TOOL_BUDGET_EXHAUSTED"
      | "RUN_BUDGET_EXHAUSTED"
      | "BUDGET_EXHAUSTED";
  }
  | {
    ok: false;
    /** The key was begun by another attempt with the same `requestDigest`. */
    code: "DUPLICATE_TOOL_CALL";
    /**
     * Only when the begin asked for `replay`: the key's record, `null` once it expired. Absent
     * when the store cannot tell the digest the key was begun with (UpstashStore, for a key
     * begun before it kept digests).
     */
    record?: StoredRecord | null;
  };

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
    /**
     * What the executor threw, as the boundary read it; stores refuse one that is not a
     * `ToolFailure` (`isValidOutcome`).
     */
    failure?: ToolFailure;
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
  /** The caller's clock, epoch ms: the completed record's `updatedAt`. */
  now: number;
  /**
   * The record's proof, made by the boundary before the complete (it signs the record as this
   * complete writes it, `updatedAt` = `now`): stored with the outcome, exactly, and given back
   * with the record by every read. A repeat of a complete returns the proof stored first.
   */
  proof?: RecordProof;
  /**
   * What the call spent (an integer, 0 to `MAX_COST`), only for a record begun with a `cost`
   * (given for any other: ILLEGAL_TRANSITION). Absent: its reservation. Kept as `cost.spent`;
   * the run's `reserved` gives back the record's reservation and its `spent` grows by this, in
   * the same atomic step. More than reserved is kept as it is: the excess counts against the
   * budget. A repeat of the complete must carry the same value.
   */
  spent?: number;
}

/** What {@linkcode Store.complete} answers: the completed record, or why it refused. */
export type CompleteReply =
  | { ok: true; record: StoredRecord }
  | { ok: false; code: "RECORD_EXPIRED" | "ILLEGAL_TRANSITION" };

/** Arguments of {@linkcode Store.endRun}. */
export interface EndRunRequest {
  /** The run ID. */
  runId: string;
  /** The caller's clock, epoch ms. */
  now: number;
  /**
   * Only a store with {@linkcode RunSeal}: also answer `seal`, the stored seal and (while there
   * is none) every begun call with the proof hash of its record, for the boundary to sign a
   * receipt over. A store without it never gets this flag.
   */
  seal?: boolean;
  /**
   * Answer one page of the fact candidates instead of the whole index: `toolCallIds` then holds
   * at most `limit` IDs of READY calls (never ERROR ones), from position `from` of that list, and
   * the answer's `page` says where the next page starts and how many live READY calls follow it,
   * counted without reading their records. A store that ignores it answers the whole index (and
   * no `page`), as without it.
   */
  page?: {
    /** Position in the run's READY calls, in completion order: an integer, 0 or more. */
    from: number;
    /**
     * IDs at most, an integer, 0 or more; 0 only counts: no ID, and `left` the live READY calls
     * from `from` on (those a `readFacts` that stopped early did not read).
     */
    limit: number;
  };
}

/**
 * What {@linkcode Store.endRun} answers: the run, the tool call IDs of its facts and, when asked,
 * its seal and page; or RUN_NOT_FOUND.
 */
export type EndRunReply =
  | {
    ok: true;
    /** The run, ENDED. */
    run: RunState;
    /** The progress index (or the page of it asked for). */
    toolCallIds: string[];
    /** With `seal: true` (a {@linkcode RunSeal} store only). */
    seal?: {
      /** The seal {@linkcode RunSeal.sealRun} stored, or `null` while there is none. */
      sealJson: string | null;
      /**
       * Every begun call in begin order, each with the `proof.hash` its complete carried (kept
       * for the life of the run, also after the record expired), or `null`. Empty when
       * `sealJson` is set.
       */
      calls: { toolCallId: string; hash: string | null }[];
      /**
       * With `page`: the IDs of every completed call (READY and ERROR) in completion order, for
       * the receipt, while there is no seal (`toolCallIds` holds the page only).
       */
      completed?: string[];
    };
    /** With `page`: where the next page starts and what follows it. */
    page?: {
      /** Where the next page starts; `null` after the last. */
      next: number | null;
      /** READY calls after this page whose records are live by the request's `now`. */
      left: number;
    };
  }
  | { ok: false; code: "RUN_NOT_FOUND" };

/** Arguments of {@linkcode Store.readFacts}. */
export interface ReadFactsRequest {
  /** The run whose facts are read: identities of any other run are excluded. */
  runId: string;
  /** Identities in execution order. */
  identities: { runId: string; toolCallId: string }[];
  /** Rows at most. */
  maxFacts: number;
  /** Agent-result bytes of the rows at most, summed. */
  maxBytes: number;
}

/** What {@linkcode Store.readFacts} answers. */
export interface ReadFactsReply {
  /** The facts' rows, in the given order. */
  rows: FactRow[];
  /** Identities read that would have been rows but for the caps. */
  omitted: number;
  /**
   * Identities not read, at the end of the list: those after the point where the caps could
   * take no more rows (`maxFacts` rows, or fewer than `MIN_FACT_BYTES` left under `maxBytes`).
   * Neither rows nor `omitted`: the caller counts them if it needs to. Absent (as 0) from a store
   * that reads every identity.
   */
  unread?: number;
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

/** What a store keeps of every begun key for the life of its run, also after its record expired. */
export interface BegunCall {
  /** The tool call ID. */
  toolCallId: string;
  /** The `requestDigest` of the begin that created the record. */
  requestDigest: string;
  /** The attempt that began it. */
  attemptId: string;
  /** Begin order in the run, from 1 (the run's `used.calls` after that begin). */
  seq: number;
}

/**
 * What {@linkcode CallIndex.lookupCall} answers: in a run that exists, the begun key (or `null`
 * when it was never begun in the run) and its record (`null` when never begun or expired);
 * `null` when the run is absent.
 */
export type LookupCallReply = { call: BegunCall | null; record: StoredRecord | null } | null;

/**
 * What {@linkcode CallIndex.listCalls} answers: the run and every call it began, in begin order;
 * `null` when the run is absent.
 */
export type ListCallsReply = { run: RunState; calls: CallSummary[] } | null;

/** One line of {@linkcode CallIndex.listCalls}: a begun call, without payloads. */
export interface CallSummary {
  /** The tool call ID. */
  toolCallId: string;
  /** The record's status, or EXPIRED once the record is gone (the key stays begun). */
  status: RecordStatus | "EXPIRED";
  /** The tool called; `null` only for EXPIRED. */
  toolName: string | null;
  /** As the record holds it: ERROR for ERROR, `null` while PROJECTING and for EXPIRED. */
  evidence: EvidenceStatus | null;
  /** The error code of an ERROR record, else `null`. */
  errorCode: ErrorCode | null;
  /** Epoch ms of creation; `null` only for EXPIRED. */
  createdAt: number | null;
  /** Epoch ms of the last transition; `null` only for EXPIRED. */
  updatedAt: number | null;
}

/** Arguments of {@linkcode RunIndex.listRuns}. */
export interface ListRunsRequest {
  /** Runs per page: an integer from 1 to `MAX_LIST_RUNS`. */
  limit: number;
  /**
   * Where the page starts: the `next` of the page before, or `null` (or absent) for the first
   * page. A position in the list's order (`<startedAt>.<runId>`), not a token: any text of that
   * form is taken, whether or not a page gave it (see `runsCursor`).
   */
  cursor?: string | null;
}

/** One run as {@linkcode RunIndex.listRuns} lists it: its state and counts, no calls. */
export interface RunSummary {
  /** The run ID. */
  runId: string;
  /** ACTIVE until `endRun`. */
  status: "ACTIVE" | "ENDED";
  /** Epoch ms when the run was started (the `now` of its `startRun`). */
  startedAt: number;
  /** Epoch ms when it was ended, else `null`. */
  endedAt: number | null;
  /** Calls begun (`used.calls`). */
  calls: number;
  /** Begun calls whose record ended ERROR. */
  errors: number;
  /** The run's cost, as {@linkcode RunState.cost} (and present when it is). */
  cost?: RunCost;
}

/** A page of {@linkcode RunIndex.listRuns}. */
export interface RunsPage {
  /** Live runs, newest first (by `startedAt`, then run ID, both descending). */
  runs: RunSummary[];
  /**
   * The cursor of the next page (the position of this page's last run), or `null` on the last.
   * Pass it back as it is.
   */
  next: string | null;
}

/** Arguments of {@linkcode RunSeal.sealRun}. */
export interface SealRunRequest {
  /** The run ID. */
  runId: string;
  /** The seal: JSON text the store keeps as it is, for the life of the run. */
  sealJson: string;
}

/** What {@linkcode RunSeal.sealRun} answers: the seal kept (the first one), or RUN_NOT_FOUND. */
export type SealRunReply = { ok: true; sealJson: string } | { ok: false; code: "RUN_NOT_FOUND" };

/**
 * What {@linkcode RunSeal.exportRun} reads: a run, all its records, its seal; `null` when the run
 * is absent.
 */
export type ExportRunReply = {
  /** The run. */
  run: RunState;
  /** Every begun call in begin order, with its record (`null` once it expired). */
  calls: { toolCallId: string; record: StoredRecord | null }[];
  /** The stored seal, or `null`. */
  sealJson: string | null;
} | null;

/**
 * The canonical invocation store: the required core, what every boundary call needs. See the
 * module doc for the rules every implementation keeps; `storeConformance` from `./testing`
 * checks them. A store may offer the optional capabilities too: {@linkcode CallIndex},
 * {@linkcode RunIndex}, {@linkcode RunSeal}, each whole or not at all.
 */
export interface Store {
  /**
   * Creates a run: ACTIVE, with its deadline and budgets, counters at zero.
   * Refuses RUN_ALREADY_EXISTS unless it is a repeat of the same attempt.
   */
  startRun(request: StartRunRequest): Promise<StartRunReply>;
  /** Reads a run; `null` when absent or expired. Never touches TTLs. */
  getRun(runId: string): Promise<RunState | null>;
  /**
   * Atomically, in this order: run exists, and is the instance asked for when the request names
   * one by `startedAt` (RUN_NOT_FOUND); a repeat of the attempt that began the key returns its
   * record (while it lives); run ACTIVE (RUN_INACTIVE); `now` before its deadline
   * (DEADLINE_EXCEEDED); key new, else DUPLICATE_TOOL_CALL when it was begun with the same
   * `requestDigest` (carrying the record when `replay` is asked) and TOOL_CALL_CONFLICT when
   * with another (a key stays begun for the life of the run, also after its record expired, so
   * no call runs twice); tool and run budgets left (TOOL_BUDGET_EXHAUSTED,
   * RUN_BUDGET_EXHAUSTED); the call's `cost`, when given, fits the run's cost budget
   * (BUDGET_EXHAUSTED). Then creates the PROJECTING record with its TTL, keeps the
   * {@linkcode BegunCall}, counts both budgets and reserves the cost, and answers the record with
   * the run it began in. A refusal writes nothing.
   */
  begin(request: BeginRequest): Promise<BeginReply>;
  /**
   * Atomically: PROJECTING -> READY | ERROR for the attempt that began it, keeping the remaining
   * TTL, appends the identity to the run's progress index and, for a call begun with a cost,
   * settles it (`spent`): the run's reservation given back, its spend counted. An absent record gives
   * RECORD_EXPIRED and stays absent; any other transition, another attempt, or an outcome that
   * `isValidOutcome` refuses gives ILLEGAL_TRANSITION. Repeating the same attempt with the same
   * outcome returns the stored record again.
   */
  complete(request: CompleteRequest): Promise<CompleteReply>;
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
  endRun(request: EndRunRequest): Promise<EndRunReply>;
  /**
   * Resolves identities to fact rows: only READY records owned by `runId` with evidence
   * EVIDENCE_FOUND or NO_EVIDENCE, in the given order, within the caps (a row over them is
   * counted in `omitted`, and a later, smaller one may still be a row). Missing, expired,
   * cross-run, PROJECTING and ERROR identities are skipped. Stops reading once the caps can take
   * no more rows, and answers how many identities it left `unread`. Never returns raw responses.
   */
  readFacts(request: ReadFactsRequest): Promise<ReadFactsReply>;
}

/**
 * Optional capability: the calls a run began, looked up one by one or listed. Needed by
 * `recall`, `listCalls`, `GET /v1/runs/:runId`, `POST /v1/runs/:runId/recall` and
 * `invokeOnce` of `@tool-boundary/durable`. A store offers both methods or neither.
 */
export interface CallIndex {
  /**
   * Reads what the run keeps of one key: the begun call and its record. `null` when the run is
   * absent or expired, or (when `startedAt` is given) another instance than the one asked for.
   * Rejects with a `RangeError` a `startedAt` that is not an integer epoch ms (`checkEpochMs`).
   * Never touches TTLs.
   */
  lookupCall(runId: string, toolCallId: string, startedAt?: number): Promise<LookupCallReply>;
  /**
   * Every call the run began, in begin order, each with its record's status (EXPIRED once the
   * record is gone); refusals were never begun and are not listed. `null` when the run is absent.
   * Never touches TTLs.
   */
  listCalls(runId: string): Promise<ListCallsReply>;
}

/**
 * Optional capability: the live runs, listed. Needed by `listRuns` and `GET /v1/runs` (the run
 * console's list; without it the route answers 404 NOT_FOUND).
 */
export interface RunIndex {
  /**
   * The live runs, newest first (by `startedAt`, then run ID, both descending), `limit` per
   * page, from the `cursor` a page before gave as `next`. An expired run is never listed. A page
   * may be cut short only at the last page. Rejects with a `RangeError` a request that
   * `checkListRunsRequest` refuses (a limit outside 1 to `MAX_LIST_RUNS`, a cursor that names no
   * position). A cursor that names one lists the runs after that position, whether or not a
   * page gave it and whether or not its run still lives. Never touches TTLs.
   */
  listRuns(request: ListRunsRequest): Promise<RunsPage>;
}

/**
 * Optional capability: a run sealed and exported whole. Needed by a boundary with a
 * `ledgerKey` (refused at construction without it), `exportRun`, and the routes
 * `GET /v1/runs/:runId/export` and `/verdict`. A store that offers it also answers `endRun`'s
 * `seal` flag. A store offers both methods or neither.
 */
export interface RunSeal {
  /**
   * Keeps a run's seal, once. The first seal of a run is kept for the life of the run; a later
   * one changes nothing. Answers the seal kept (the first one), or RUN_NOT_FOUND when the run is
   * absent.
   */
  sealRun(request: SealRunRequest): Promise<SealRunReply>;
  /**
   * The run, every begun call's whole record (raw included) in begin order, and its seal; `null`
   * when the run is absent. Never touches TTLs.
   */
  exportRun(runId: string): Promise<ExportRunReply>;
}

// Names the stores and the boundary use for parts of the replies above; the entries export the
// replies alone, so that a store author meets each shape once.

/** A refusal: nothing was written. */
export interface StoreRefusal<C extends ErrorCode = ErrorCode> {
  /** Not done. */
  ok: false;
  /** Why. */
  code: C;
}

/** The run a begin answers with its record. */
export type BegunRun = Extract<BeginReply, { ok: true }>["run"];

/** What `endRun` answers with `seal: true`. */
export type SealState = NonNullable<Extract<EndRunReply, { ok: true }>["seal"]>;

/** What `endRun` answers about a page. */
export type EndRunPageState = NonNullable<Extract<EndRunReply, { ok: true }>["page"]>;
