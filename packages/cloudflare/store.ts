/**
 * `DurableObjectStore`: the canonical store in a Durable Object's SQLite storage.
 *
 * @module
 */
import {
  checkBeginRequest,
  checkCompleteRequest,
  checkEndRunRequest,
  checkEpochMs,
  checkListRunsRequest,
  checkReadFactsRequest,
  checkStartRunRequest,
  completeTransition,
  factRowOf,
  fitsCostBudget,
  isSafeRunId,
  isSafeToolCallId,
  MIN_FACT_BYTES,
  ownBudget,
  projectingRecord,
  runsCursor,
  setOwnBudget,
  summarizeCall,
  utf8ByteLength,
} from "./core.ts";
import type {
  BeginReply,
  BeginRequest,
  BegunRun,
  CallIndex,
  CompleteReply,
  CompleteRequest,
  EndRunReply,
  EndRunRequest,
  ExportRunReply,
  FactRow,
  ListCallsReply,
  ListRunsRequest,
  LookupCallReply,
  ReadFactsReply,
  ReadFactsRequest,
  RunCost,
  RunIndex,
  RunSeal,
  RunsPage,
  RunState,
  RunSummary,
  SealRunReply,
  SealRunRequest,
  SealState,
  StartRunReply,
  StartRunRequest,
  Store,
  StoredRecord,
  StoreRefusal,
} from "./core.ts";
import type { DurableObjectContext, SqlStorage, SqlValue } from "./types.ts";

/**
 * The most UTF-8 bytes of text the store writes into one row: a record (request, raw response,
 * agent result, failure, IDs) or a run (its per-tool budgets and seal). A Durable Object's
 * SQLite refuses a string or row over 2 MB; the store refuses first, below it, so that a write
 * fails whole and before it reaches SQLite. The boundary's default `recordBytes` (1.5 MiB) fits.
 */
export const MAX_ROW_BYTES = 1_900_000;

/** Options of {@linkcode DurableObjectStore}. */
export interface DurableObjectStoreOptions {
  /**
   * What the names of the ledger's tables and indexes start with: letters, digits and `_`,
   * starting with a letter, at most 32 characters. Two stores with different prefixes share an
   * object without seeing each other.
   * @default "tb_"
   */
  prefix?: string;
  /** Epoch ms clock that decides expiry; share it with the boundary in tests. @default Date.now */
  clock?: () => number;
  /**
   * Asks for a {@linkcode DurableObjectStore.sweep} at an epoch ms. By default the object's
   * alarm (`ctx.storage.setAlarm`), whose `alarm()` then calls `sweep()`. An `Agent` owns its
   * object's alarm for its own schedules, so inside one pass its scheduler instead:
   * `(at) => this.schedule(new Date(at), "sweepLedger")`, with a `sweepLedger()` method that
   * calls `sweep()`.
   */
  scheduleSweep?: (at: number) => unknown;
  /**
   * The least time between two sweeps, in ms: rows that expire within it of each other go in one
   * sweep, so the alarm wakes the object at most once per this long however many records
   * expire. Rows past their expiry are never served while they wait.
   * @default 60000
   */
  sweepEveryMs?: number;
}

/** What one {@linkcode DurableObjectStore.sweep} did. */
export interface SweepReport {
  /** Records deleted (each past its `expiresAt`). */
  records: number;
  /** Runs deleted, with every begun call they kept. */
  runs: number;
  /** When the next sweep is asked for (epoch ms), or `null` when nothing is left to expire. */
  next: number | null;
}

const PREFIX = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;

/**
 * The layout of the ledger's tables, kept in their meta table: a store refuses tables of a layout
 * it does not know (written by a newer version) rather than misread them. Layout 1 had no cost
 * columns; a store of this version adds them to tables of layout 1 (each `NULL` in the rows
 * there: no cost) and marks them 2, in the transaction that opens them.
 */
const SCHEMA = 2;

/** The columns layout 2 added to layout 1, all `INTEGER` and `NULL` for no cost. */
const COST_COLUMNS = {
  runs: ["budget_cost", "cost_reserved", "cost_spent"],
  records: ["cost_reserved", "cost_spent"],
} as const;

type Row = Record<string, SqlValue>;

/** A run's row. */
interface RunRow extends Row {
  run_id: string;
  attempt_id: string;
  status: "ACTIVE" | "ENDED";
  deadline: number;
  started_at: number;
  ended_at: number | null;
  budget_calls: number;
  budget_per_tool: string;
  used_calls: number;
  used_per_tool: string;
  expires_at: number;
  done_count: number;
  ready_count: number;
  ended_done: number | null;
  ended_ready: number | null;
  ended_expiry: number | null;
  errors: number;
  seal_json: string | null;
  /** `budget.cost`, or `null` for a run without a cost budget. */
  budget_cost: number | null;
  /** `cost.reserved`, or `null` (with `cost_spent`) while the run has no `cost`. */
  cost_reserved: number | null;
  cost_spent: number | null;
}

/** A record's row. */
interface RecordRow extends Row {
  run_id: string;
  tool_call_id: string;
  tool_name: string;
  status: StoredRecord["status"];
  evidence: string | null;
  request_json: string;
  raw_json: string | null;
  agent_result_json: string | null;
  error_code: string | null;
  attempt_id: string;
  seq: number;
  created_at: number;
  updated_at: number;
  expires_at: number;
  failure_name: string | null;
  failure_message: string | null;
  proof_hash: string | null;
  proof_sig: string | null;
  proof_key_id: string | null;
  /** `cost.reserved`, or `null` for a call begun without a cost. */
  cost_reserved: number | null;
  /** `cost.spent`: `null` while PROJECTING, and for a call begun without a cost. */
  cost_spent: number | null;
}

/** A begun call's row: kept for the life of its run, also after its record expired. */
interface CallRow extends Row {
  tool_call_id: string;
  seq: number;
  request_digest: string;
  attempt_id: string;
  hash: string | null;
}

/**
 * A {@linkcode Store} in a Durable Object's SQLite storage (`ctx.storage.sql`): runs, begun calls
 * and records in three tables of its own (named with `prefix`, so they sit beside an `Agent`'s
 * tables without a clash). Each method is one synchronous transaction
 * (`ctx.storage.transactionSync`): its checks and its writes, all or nothing, and no other event
 * of the object runs in between. The rules are `MemoryStore`'s, with the same helpers of
 * `@tool-boundary/core/store`; every capability is there (`listRuns`, `lookupCall`,
 * `listCalls`, `sealRun`, `exportRun`). A run's cost budget and its `reserved` and `spent` are
 * columns of its row, and a call's cost of its record's: begin checks and reserves a call's cost
 * in the transaction that counts the call, so concurrent begins never pass the budget.
 *
 * TTLs are set once, by `expiresAt`: a read never refreshes one, and nothing is served past its
 * expiry (each read compares with the store's clock). A record's `expiresAt` is its `createdAt`
 * (the caller's `now`) plus its TTL, as `UpstashStore` writes it; a run's is the store's clock at
 * `startRun` plus the run's TTL. Expired rows are deleted by
 * {@linkcode DurableObjectStore.sweep}, which the object's alarm calls; the store keeps the
 * alarm at the next expiry (see `scheduleSweep`).
 *
 * @example
 * ```ts ignore
 * import { DurableObject } from "cloudflare:workers";
 * import { DurableObjectStore } from "@tool-boundary/cloudflare";
 *
 * export class Ledger extends DurableObject {
 *   store = new DurableObjectStore(this.ctx);
 *   alarm() {
 *     return this.store.sweep();
 *   }
 * }
 * ```
 */
export class DurableObjectStore implements Store, CallIndex, RunIndex, RunSeal {
  readonly #sql: SqlStorage;
  readonly #transaction: <T>(fn: () => T) => T;
  readonly #clock: () => number;
  readonly #schedule: (at: number) => unknown;
  readonly #sweepEveryMs: number;
  readonly #t: { runs: string; calls: string; records: string; meta: string };
  /** The sweep a transaction asked for, to schedule once it committed. */
  #sweepAt: number | null = null;

  /**
   * Creates the ledger's tables in the object's storage when they are not there yet.
   *
   * @param ctx The Durable Object's `ctx` (`this.ctx`): its `storage.sql` must be SQLite's (a
   *   class declared in `new_sqlite_classes`).
   * @param options Table prefix, clock and how sweeps are scheduled.
   * @throws {TypeError} When the prefix is not of the allowed form.
   * @throws {RangeError} When `sweepEveryMs` is not an integer of 0 or more.
   */
  constructor(ctx: DurableObjectContext, options: DurableObjectStoreOptions = {}) {
    const prefix = options.prefix ?? "tb_";
    if (typeof prefix !== "string" || !PREFIX.test(prefix)) {
      throw new TypeError(
        "Invalid prefix: expected a letter, then up to 31 letters, digits or _",
      );
    }
    const sweepEveryMs = options.sweepEveryMs ?? 60_000;
    if (!Number.isSafeInteger(sweepEveryMs) || sweepEveryMs < 0) {
      throw new RangeError("Invalid sweepEveryMs: expected an integer of 0 or more");
    }
    const storage = ctx.storage;
    this.#sql = storage.sql;
    this.#transaction = (fn) => storage.transactionSync(fn);
    this.#clock = options.clock ?? Date.now;
    this.#schedule = options.scheduleSweep ?? ((at) => storage.setAlarm(at));
    this.#sweepEveryMs = sweepEveryMs;
    this.#t = {
      runs: `${prefix}runs`,
      calls: `${prefix}calls`,
      records: `${prefix}records`,
      meta: `${prefix}meta`,
    };
    this.#transaction(() => this.#createTables(prefix));
  }

  #createTables(prefix: string): void {
    const { runs, calls, records, meta } = this.#t;
    // A Durable Object's SQLite bills every row written, index entries included: the tables are
    // keyed by their primary keys (WITHOUT ROWID, no second index for the key), and a begun
    // call's row has no index of its own (a run's calls are read through the key's run prefix,
    // and sorted, by endRun, listCalls and exportRun only).
    const statements = [
      `CREATE TABLE IF NOT EXISTS ${runs} (
        run_id TEXT PRIMARY KEY,
        attempt_id TEXT NOT NULL,
        status TEXT NOT NULL,
        deadline INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        budget_calls INTEGER NOT NULL,
        budget_per_tool TEXT NOT NULL,
        used_calls INTEGER NOT NULL,
        used_per_tool TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        done_count INTEGER NOT NULL,
        ready_count INTEGER NOT NULL,
        ended_done INTEGER,
        ended_ready INTEGER,
        ended_expiry INTEGER,
        errors INTEGER NOT NULL,
        seal_json TEXT,
        budget_cost INTEGER,
        cost_reserved INTEGER,
        cost_spent INTEGER
      ) WITHOUT ROWID`,
      `CREATE INDEX IF NOT EXISTS ${prefix}runs_by_start ON ${runs} (started_at, run_id)`,
      `CREATE INDEX IF NOT EXISTS ${prefix}runs_by_expiry ON ${runs} (expires_at)`,
      `CREATE TABLE IF NOT EXISTS ${calls} (
        run_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        request_digest TEXT NOT NULL,
        attempt_id TEXT NOT NULL,
        hash TEXT,
        done_pos INTEGER,
        ready_pos INTEGER,
        ready_expires INTEGER,
        PRIMARY KEY (run_id, tool_call_id)
      ) WITHOUT ROWID`,
      `CREATE TABLE IF NOT EXISTS ${records} (
        run_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        status TEXT NOT NULL,
        evidence TEXT,
        request_json TEXT NOT NULL,
        raw_json TEXT,
        agent_result_json TEXT,
        error_code TEXT,
        attempt_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        failure_name TEXT,
        failure_message TEXT,
        proof_hash TEXT,
        proof_sig TEXT,
        proof_key_id TEXT,
        cost_reserved INTEGER,
        cost_spent INTEGER,
        PRIMARY KEY (run_id, tool_call_id)
      ) WITHOUT ROWID`,
      `CREATE INDEX IF NOT EXISTS ${prefix}records_by_expiry ON ${records} (expires_at)`,
      `CREATE TABLE IF NOT EXISTS ${meta} (key TEXT PRIMARY KEY, value INTEGER NOT NULL)
      WITHOUT ROWID`,
    ];
    for (const statement of statements) this.#sql.exec(statement);
    this.#exec(`INSERT OR IGNORE INTO ${meta} (key, value) VALUES ('schema', ?)`, SCHEMA);
    let schema = this.#one<{ value: number }>(
      `SELECT value FROM ${meta} WHERE key = 'schema'`,
    )!.value;
    if (schema === 1) {
      this.#addCostColumns();
      this.#exec(`UPDATE ${meta} SET value = ? WHERE key = 'schema'`, SCHEMA);
      schema = SCHEMA;
    }
    if (schema !== SCHEMA) {
      throw new Error(
        `DurableObjectStore cannot read the tables ${prefix}*: their layout is ${schema}, this version reads ${SCHEMA}`,
      );
    }
  }

  /**
   * Layout 1 to 2, in the constructor's transaction: adds the cost columns to the tables, `NULL`
   * in every row already there (no cost budget, no cost). A column a table already has (read
   * with `PRAGMA table_info`) is left as it is.
   */
  #addCostColumns(): void {
    for (const [table, columns] of Object.entries(COST_COLUMNS)) {
      const name = this.#t[table as keyof typeof COST_COLUMNS];
      const has = new Set(
        this.#rows<{ name: string }>(`PRAGMA table_info(${name})`).map((row) => row.name),
      );
      for (const column of columns) {
        if (!has.has(column)) this.#sql.exec(`ALTER TABLE ${name} ADD COLUMN ${column} INTEGER`);
      }
    }
  }

  /** {@inheritDoc Store.startRun} */
  startRun(request: StartRunRequest): Promise<StartRunReply> {
    return this.#write(() => {
      const code = checkStartRunRequest(request);
      if (code !== null) return refusal(code);
      const now = this.#clock();
      const existing = this.#liveRun(request.runId, now);
      if (existing !== undefined) {
        return existing.attempt_id === request.attemptId
          ? { ok: true as const, run: runStateOf(existing) }
          : refusal("RUN_ALREADY_EXISTS");
      }
      // A run of the same ID that expired: its begun calls go with it, before the new one.
      this.#dropRun(request.runId);
      const budgetPerTool = JSON.stringify({ ...request.budget.perTool });
      checkRowBytes("run", budgetPerTool);
      const expiresAt = now + request.ttlMs;
      // A cost budget counts from nothing; a run without one has no cost until a costed call.
      const budgetCost = request.budget.cost ?? null;
      const costStart = budgetCost === null ? null : 0;
      this.#exec(
        `INSERT INTO ${this.#t.runs} (run_id, attempt_id, status, deadline, started_at, ended_at,
          budget_calls, budget_per_tool, used_calls, used_per_tool, expires_at, done_count,
          ready_count, ended_done, ended_ready, ended_expiry, errors, seal_json, budget_cost,
          cost_reserved, cost_spent)
        VALUES (?, ?, 'ACTIVE', ?, ?, NULL, ?, ?, 0, '{}', ?, 0, 0, NULL, NULL, NULL, 0, NULL, ?, ?,
          ?)`,
        request.runId,
        request.attemptId,
        request.deadline,
        request.now,
        request.budget.calls,
        budgetPerTool,
        expiresAt,
        budgetCost,
        costStart,
        costStart,
      );
      this.#expiresAt(expiresAt);
      return { ok: true as const, run: runStateOf(this.#liveRun(request.runId, now)!) };
    });
  }

  /** {@inheritDoc Store.getRun} */
  getRun(runId: string): Promise<RunState | null> {
    return this.#read(() => {
      const run = isSafeRunId(runId) ? this.#liveRun(runId, this.#clock()) : undefined;
      return run === undefined ? null : runStateOf(run);
    });
  }

  /** {@inheritDoc Store.begin} */
  begin(request: BeginRequest): Promise<BeginReply> {
    return this.#write((): BeginReply => {
      const code = checkBeginRequest(request);
      if (code !== null) return refusal(code);
      const { runId, toolCallId } = request;
      const now = this.#clock();
      const run = this.#liveRun(runId, now);
      // Another instance of the run ID is not the run asked for: that one is gone.
      if (run === undefined || !isInstance(run, request.startedAt)) {
        return refusal("RUN_NOT_FOUND");
      }
      const begun = this.#call(runId, toolCallId);
      if (begun !== undefined && begun.attempt_id === request.attemptId) {
        const existing = this.#liveRecord(runId, toolCallId, now);
        if (existing !== undefined) return { ok: true, record: existing, run: begunRunOf(run) };
      }
      if (run.status !== "ACTIVE") return refusal("RUN_INACTIVE");
      if (request.now >= run.deadline) return refusal("DEADLINE_EXCEEDED");
      if (begun !== undefined) {
        if (begun.request_digest !== request.requestDigest) return refusal("TOOL_CALL_CONFLICT");
        if (request.replay !== true) return refusal("DUPLICATE_TOOL_CALL");
        const record = this.#liveRecord(runId, toolCallId, now);
        return { ok: false, code: "DUPLICATE_TOOL_CALL", record: record ?? null };
      }
      const budget = JSON.parse(run.budget_per_tool) as Record<string, number>;
      const used = JSON.parse(run.used_per_tool) as Record<string, number>;
      const toolLimit = ownBudget(budget, request.toolName);
      const toolUsed = ownBudget(used, request.toolName) ?? 0;
      if (toolLimit !== undefined && toolUsed >= toolLimit) return refusal("TOOL_BUDGET_EXHAUSTED");
      if (run.used_calls >= run.budget_calls) return refusal("RUN_BUDGET_EXHAUSTED");
      // The cost is checked and reserved in this transaction, with the call counts: no other
      // begin of the object reads the run in between.
      const { cost } = request;
      if (cost !== undefined && !fitsCostBudget(costStateOf(run), cost)) {
        return refusal("BUDGET_EXHAUSTED");
      }
      // The record's own times agree (expiresAt = createdAt + TTL, both on the caller's clock, as
      // UpstashStore writes them); this store's clock decides when that time has come.
      const seq = run.used_calls + 1;
      const record = projectingRecord(request, request.now + request.ttlMs, seq);
      setOwnBudget(used, request.toolName, toolUsed + 1);
      const usedPerTool = JSON.stringify(used);
      checkRowBytes("run", run.budget_per_tool, usedPerTool, run.seal_json ?? "");
      this.#putRecord(record);
      this.#exec(
        `INSERT INTO ${this.#t.calls} (run_id, tool_call_id, seq, request_digest, attempt_id)
        VALUES (?, ?, ?, ?, ?)`,
        runId,
        toolCallId,
        seq,
        request.requestDigest,
        request.attemptId,
      );
      this.#exec(
        `UPDATE ${this.#t.runs} SET used_calls = ?, used_per_tool = ?, cost_reserved = ?,
          cost_spent = ? WHERE run_id = ?`,
        seq,
        usedPerTool,
        cost === undefined ? run.cost_reserved : (run.cost_reserved ?? 0) + cost,
        cost === undefined ? run.cost_spent : run.cost_spent ?? 0,
        runId,
      );
      this.#expiresAt(record.expiresAt);
      return { ok: true, record, run: begunRunOf(run) };
    });
  }

  /** {@inheritDoc Store.complete} */
  complete(
    request: CompleteRequest,
  ): Promise<CompleteReply> {
    return this.#write((): CompleteReply => {
      const code = checkCompleteRequest(request);
      if (code !== null) return refusal(code);
      const { runId, toolCallId } = request;
      const now = this.#clock();
      const done = completeTransition(this.#liveRecord(runId, toolCallId, now), request);
      if (!done.ok) return done;
      const { record } = done;
      if (done.changed) {
        this.#writeOutcome(record);
        const run = this.#liveRun(runId, now);
        if (run !== undefined && this.#call(runId, toolCallId) !== undefined) {
          const ready = record.status === "READY";
          const donePos = run.done_count + 1;
          const readyPos = ready ? run.ready_count + 1 : null;
          this.#exec(
            `UPDATE ${this.#t.calls} SET done_pos = ?, ready_pos = ?, ready_expires = ?,
              hash = ? WHERE run_id = ? AND tool_call_id = ?`,
            donePos,
            readyPos,
            ready ? record.expiresAt : null,
            record.proof?.hash ?? null,
            runId,
            toolCallId,
          );
          // A costed call settles: its reservation leaves `reserved`, what it spent joins `spent`.
          const cost = run.cost_reserved === null ? undefined : record.cost;
          this.#exec(
            `UPDATE ${this.#t.runs} SET done_count = ?, ready_count = ?, errors = ?,
              cost_reserved = ?, cost_spent = ? WHERE run_id = ?`,
            donePos,
            readyPos ?? run.ready_count,
            run.errors + (record.status === "ERROR" ? 1 : 0),
            cost === undefined ? run.cost_reserved : run.cost_reserved! - cost.reserved,
            cost === undefined ? run.cost_spent : (run.cost_spent ?? 0) + (cost.spent ?? 0),
            runId,
          );
        }
      }
      return { ok: true, record };
    });
  }

  /** {@inheritDoc Store.get} */
  get(runId: string, toolCallId: string): Promise<StoredRecord | null> {
    return this.#read(() =>
      isSafeRunId(runId) && isSafeToolCallId(toolCallId)
        ? this.#liveRecord(runId, toolCallId, this.#clock()) ?? null
        : null
    );
  }

  /** {@inheritDoc Store.endRun} */
  endRun(request: EndRunRequest): Promise<EndRunReply> {
    return this.#write((): EndRunReply => {
      const code = checkEndRunRequest(request);
      if (code !== null) return refusal(code);
      const { runId } = request;
      const now = this.#clock();
      let run = this.#liveRun(runId, now);
      if (run === undefined) return refusal("RUN_NOT_FOUND");
      if (run.status === "ACTIVE") {
        // Once, here: until the soonest expiry of the READY calls it fixes, none has expired.
        const soonest = this.#one<{ at: number | null }>(
          `SELECT MIN(ready_expires) AS at FROM ${this.#t.calls}
          WHERE run_id = ? AND ready_pos IS NOT NULL`,
          runId,
        );
        this.#exec(
          `UPDATE ${this.#t.runs} SET status = 'ENDED', ended_at = ?, ended_done = done_count,
            ended_ready = ready_count, ended_expiry = ? WHERE run_id = ?`,
          request.now,
          soonest?.at ?? null,
          runId,
        );
        run = this.#liveRun(runId, now)!;
      }
      // The first endRun fixes the facts: a call completed after it is recorded, not listed.
      const ended = run.ended_done ?? run.done_count;
      const { page } = request;
      let toolCallIds: string[];
      let paged: { page: { next: number | null; left: number } } | undefined;
      if (page === undefined) {
        toolCallIds = this.#ids(
          `SELECT tool_call_id FROM ${this.#t.calls}
          WHERE run_id = ? AND done_pos IS NOT NULL AND done_pos <= ? ORDER BY done_pos`,
          runId,
          ended,
        );
      } else {
        const end = run.ended_ready ?? run.ready_count;
        const last = Math.min(end, page.from + page.limit);
        toolCallIds = this.#ids(
          `SELECT tool_call_id FROM ${this.#t.calls}
          WHERE run_id = ? AND ready_pos > ? AND ready_pos <= ? ORDER BY ready_pos`,
          runId,
          page.from,
          last,
        );
        let left = Math.max(end - last, 0);
        if (run.ended_expiry !== null && run.ended_expiry <= now) {
          left = this.#one<{ n: number }>(
            `SELECT COUNT(*) AS n FROM ${this.#t.calls}
            WHERE run_id = ? AND ready_pos > ? AND ready_pos <= ? AND ready_expires > ?`,
            runId,
            last,
            end,
            now,
          )!.n;
        }
        paged = { page: { next: last < end ? last : null, left } };
      }
      const state = runStateOf(run);
      if (request.seal !== true) return { ok: true, run: state, toolCallIds, ...paged };
      const sealed = run.seal_json !== null;
      const calls = sealed ? [] : this.#rows<{ tool_call_id: string; hash: string | null }>(
        `SELECT tool_call_id, hash FROM ${this.#t.calls} WHERE run_id = ? ORDER BY seq`,
        runId,
      ).map((row) => ({ toolCallId: row.tool_call_id, hash: row.hash }));
      const seal: SealState = { sealJson: run.seal_json, calls };
      if (page !== undefined) {
        seal.completed = sealed ? [] : this.#ids(
          `SELECT tool_call_id FROM ${this.#t.calls}
          WHERE run_id = ? AND done_pos IS NOT NULL AND done_pos <= ? ORDER BY done_pos`,
          runId,
          ended,
        );
      }
      return { ok: true, run: state, toolCallIds, seal, ...paged };
    });
  }

  /** {@inheritDoc RunSeal.sealRun} */
  sealRun(request: SealRunRequest): Promise<SealRunReply> {
    return this.#write((): SealRunReply => {
      if (typeof request?.sealJson !== "string") {
        throw new TypeError("Invalid sealJson: expected a string");
      }
      const { runId, sealJson } = request;
      const run = isSafeRunId(runId) ? this.#liveRun(runId, this.#clock()) : undefined;
      if (run === undefined) return refusal("RUN_NOT_FOUND");
      if (run.seal_json !== null) return { ok: true, sealJson: run.seal_json };
      checkRowBytes("run", run.budget_per_tool, run.used_per_tool, sealJson);
      this.#exec(`UPDATE ${this.#t.runs} SET seal_json = ? WHERE run_id = ?`, sealJson, runId);
      return { ok: true, sealJson };
    });
  }

  /** {@inheritDoc RunSeal.exportRun} */
  exportRun(runId: string): Promise<ExportRunReply> {
    return this.#read(() => {
      const now = this.#clock();
      const run = isSafeRunId(runId) ? this.#liveRun(runId, now) : undefined;
      if (run === undefined) return null;
      const rows = this.#rows<RecordRow & { begun_id: string }>(
        `SELECT c.tool_call_id AS begun_id, r.* FROM ${this.#t.calls} c
        LEFT JOIN ${this.#t.records} r ON r.run_id = c.run_id
          AND r.tool_call_id = c.tool_call_id AND r.expires_at > ?
        WHERE c.run_id = ? ORDER BY c.seq`,
        now,
        runId,
      );
      const calls = rows.map((row) => ({
        toolCallId: row.begun_id,
        record: row.run_id === null ? null : recordOf(row),
      }));
      return { run: runStateOf(run), calls, sealJson: run.seal_json };
    });
  }

  /** {@inheritDoc RunIndex.listRuns} */
  listRuns(request: ListRunsRequest): Promise<RunsPage> {
    return this.#read(() => {
      const { limit, after } = checkListRunsRequest(request);
      const columns =
        "run_id, status, started_at, ended_at, used_calls, errors, cost_reserved, cost_spent";
      // One more than the page, to tell whether there is a next one.
      const rows = after === null
        ? this.#rows<RunRow>(
          `SELECT ${columns} FROM ${this.#t.runs} WHERE expires_at > ?
          ORDER BY started_at DESC, run_id DESC LIMIT ?`,
          this.#clock(),
          limit + 1,
        )
        : this.#rows<RunRow>(
          `SELECT ${columns} FROM ${this.#t.runs}
          WHERE expires_at > ? AND (started_at < ? OR (started_at = ? AND run_id < ?))
          ORDER BY started_at DESC, run_id DESC LIMIT ?`,
          this.#clock(),
          after.startedAt,
          after.startedAt,
          after.runId,
          limit + 1,
        );
      const listed: RunSummary[] = rows.map((row) => {
        const summary: RunSummary = {
          runId: row.run_id,
          status: row.status,
          startedAt: row.started_at,
          endedAt: row.ended_at,
          calls: row.used_calls,
          errors: row.errors,
        };
        const cost = runCostOf(row);
        if (cost !== undefined) summary.cost = cost;
        return summary;
      });
      const runs = listed.slice(0, limit);
      const last = runs[runs.length - 1];
      return { runs, next: listed.length > limit && last !== undefined ? runsCursor(last) : null };
    });
  }

  /** {@inheritDoc Store.readFacts} */
  readFacts(request: ReadFactsRequest): Promise<ReadFactsReply> {
    return this.#read(() => {
      checkReadFactsRequest(request);
      const rows: FactRow[] = [];
      let bytes = 0;
      let omitted = 0;
      const now = this.#clock();
      const { identities, maxFacts, maxBytes } = request;
      for (let i = 0; i < identities.length; i++) {
        if (rows.length >= maxFacts || maxBytes - bytes < MIN_FACT_BYTES) {
          return { rows, omitted, unread: identities.length - i };
        }
        const identity = identities[i]!;
        if (identity.runId !== request.runId || !isSafeToolCallId(identity.toolCallId)) continue;
        const row = factRowOf(this.#liveRecord(identity.runId, identity.toolCallId, now));
        if (row === null) continue;
        const size = utf8ByteLength(row.agentResultJson);
        if (bytes + size > maxBytes) {
          omitted++;
          continue;
        }
        bytes += size;
        rows.push(row);
      }
      return { rows, omitted, unread: 0 };
    });
  }

  /** {@inheritDoc CallIndex.lookupCall} */
  lookupCall(runId: string, toolCallId: string, startedAt?: number): Promise<LookupCallReply> {
    if (startedAt !== undefined) {
      try {
        checkEpochMs("startedAt", startedAt);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.#read((): LookupCallReply => {
      const now = this.#clock();
      const run = isSafeRunId(runId) ? this.#liveRun(runId, now) : undefined;
      if (run === undefined || !isInstance(run, startedAt)) return null;
      const call = isSafeToolCallId(toolCallId) ? this.#call(runId, toolCallId) : undefined;
      if (call === undefined) return { call: null, record: null };
      return {
        call: {
          toolCallId: call.tool_call_id,
          requestDigest: call.request_digest,
          attemptId: call.attempt_id,
          seq: call.seq,
        },
        record: this.#liveRecord(runId, toolCallId, now) ?? null,
      };
    });
  }

  /** {@inheritDoc CallIndex.listCalls} */
  listCalls(runId: string): Promise<ListCallsReply> {
    return this.#read(() => {
      const now = this.#clock();
      const run = isSafeRunId(runId) ? this.#liveRun(runId, now) : undefined;
      if (run === undefined) return null;
      const rows = this.#rows<RecordRow & { begun_id: string }>(
        `SELECT c.tool_call_id AS begun_id, r.run_id, r.tool_name, r.status, r.evidence,
          r.error_code, r.created_at, r.updated_at FROM ${this.#t.calls} c
        LEFT JOIN ${this.#t.records} r ON r.run_id = c.run_id
          AND r.tool_call_id = c.tool_call_id AND r.expires_at > ?
        WHERE c.run_id = ? ORDER BY c.seq`,
        now,
        runId,
      );
      const calls = rows.map((row) =>
        summarizeCall(
          row.begun_id,
          row.run_id === null ? null : {
            toolName: row.tool_name,
            status: row.status,
            evidence: row.evidence as StoredRecord["evidence"],
            errorCode: row.error_code as StoredRecord["errorCode"],
            createdAt: row.created_at,
            updatedAt: row.updated_at,
          },
        )
      );
      return { run: runStateOf(run), calls };
    });
  }

  /**
   * Deletes every record and run past its expiry (a run with the calls it kept), and asks for
   * the next sweep at the soonest expiry left (at least `sweepEveryMs` from now). The object's
   * `alarm()` calls it (or, in an `Agent`, the callback `scheduleSweep` named).
   *
   * @returns What it deleted, and when the next sweep is.
   */
  sweep(): Promise<SweepReport> {
    return this.#write((): SweepReport => {
      const now = this.#clock();
      const { runs, calls, records, meta } = this.#t;
      const deletedRecords = this.#exec(`DELETE FROM ${records} WHERE expires_at <= ?`, now);
      this.#exec(
        `DELETE FROM ${calls} WHERE run_id IN (SELECT run_id FROM ${runs} WHERE expires_at <= ?)`,
        now,
      );
      const deletedRuns = this.#exec(`DELETE FROM ${runs} WHERE expires_at <= ?`, now);
      this.#exec(`DELETE FROM ${meta} WHERE key = 'sweep_at'`);
      const soonest = this.#one<{ at: number | null }>(
        `SELECT MIN(at) AS at FROM (SELECT MIN(expires_at) AS at FROM ${records}
          UNION ALL SELECT MIN(expires_at) AS at FROM ${runs})`,
      )?.at ?? null;
      const next = soonest === null ? null : Math.max(soonest, now + this.#sweepEveryMs);
      if (next !== null) this.#expiresAt(next);
      return { records: deletedRecords, runs: deletedRuns, next };
    });
  }

  /**
   * Notes that a row expires at `at`: when no sweep is asked for before it, the sweep moves
   * there, asked for once the transaction commits.
   */
  #expiresAt(at: number): void {
    const scheduled = this.#one<{ value: number }>(
      `SELECT value FROM ${this.#t.meta} WHERE key = 'sweep_at'`,
    )?.value;
    if (scheduled !== undefined && scheduled <= at) return;
    this.#exec(
      `INSERT INTO ${this.#t.meta} (key, value) VALUES ('sweep_at', ?)
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      at,
    );
    this.#sweepAt = at;
  }

  /**
   * Runs `fn` as one transaction and resolves with its answer once the sweep it asked for (if
   * any) is scheduled; rejects with what it threw (nothing written) or what scheduling threw
   * (the operation's writes stay; the sweep is asked for again by the next write that expires).
   */
  #write<T>(fn: () => T): Promise<T> {
    let value: T;
    this.#sweepAt = null;
    try {
      value = this.#transaction(fn);
    } catch (error) {
      this.#sweepAt = null;
      return Promise.reject(error);
    }
    const at = this.#sweepAt;
    if (at === null) return Promise.resolve(value);
    this.#sweepAt = null;
    // A scheduler that throws at once rejects as one that fails later.
    return new Promise((resolve) => resolve(this.#schedule(at))).then(() => value, (error) => {
      // Not asked for after all: the next write whose row expires asks again.
      this.#transaction(() =>
        this.#exec(`DELETE FROM ${this.#t.meta} WHERE key = 'sweep_at' AND value = ?`, at)
      );
      throw error;
    });
  }

  /** Runs a read: its answer, or its throw as a rejection. */
  #read<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Runs a statement; answers the rows it wrote. */
  #exec(query: string, ...bindings: SqlValue[]): number {
    const cursor = this.#sql.exec(query, ...bindings) as unknown as {
      toArray(): unknown[];
      rowsWritten?: number;
    };
    cursor.toArray();
    return cursor.rowsWritten ?? 0;
  }

  #rows<T extends Row>(query: string, ...bindings: SqlValue[]): T[] {
    return this.#sql.exec<T>(query, ...bindings).toArray();
  }

  #one<T extends Row>(query: string, ...bindings: SqlValue[]): T | undefined {
    return this.#rows<T>(query, ...bindings)[0];
  }

  #ids(query: string, ...bindings: SqlValue[]): string[] {
    return this.#rows<{ tool_call_id: string }>(query, ...bindings).map((row) => row.tool_call_id);
  }

  #liveRun(runId: string, now: number): RunRow | undefined {
    return this.#one<RunRow>(
      `SELECT * FROM ${this.#t.runs} WHERE run_id = ? AND expires_at > ?`,
      runId,
      now,
    );
  }

  #dropRun(runId: string): void {
    this.#exec(`DELETE FROM ${this.#t.calls} WHERE run_id = ?`, runId);
    this.#exec(`DELETE FROM ${this.#t.runs} WHERE run_id = ?`, runId);
  }

  #call(runId: string, toolCallId: string): CallRow | undefined {
    return this.#one<CallRow>(
      `SELECT tool_call_id, seq, request_digest, attempt_id, hash FROM ${this.#t.calls}
      WHERE run_id = ? AND tool_call_id = ?`,
      runId,
      toolCallId,
    );
  }

  #liveRecord(runId: string, toolCallId: string, now: number): StoredRecord | undefined {
    const row = this.#one<RecordRow>(
      `SELECT * FROM ${this.#t.records} WHERE run_id = ? AND tool_call_id = ? AND expires_at > ?`,
      runId,
      toolCallId,
      now,
    );
    return row === undefined ? undefined : recordOf(row);
  }

  /** Writes a new record (a begin's), or one over a record of an expired run of the same ID. */
  #putRecord(record: StoredRecord): void {
    checkRecordBytes(record);
    this.#exec(
      `INSERT OR REPLACE INTO ${this.#t.records} (run_id, tool_call_id, tool_name, status,
        evidence, request_json, raw_json, agent_result_json, error_code, attempt_id, seq,
        created_at, updated_at, expires_at, failure_name, failure_message, proof_hash, proof_sig,
        proof_key_id, cost_reserved, cost_spent)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, ?, ?)`,
      record.runId,
      record.toolCallId,
      record.toolName,
      record.status,
      record.evidence,
      record.requestJson,
      record.rawJson,
      record.agentResultJson,
      record.errorCode,
      record.attemptId,
      record.seq,
      record.createdAt,
      record.updatedAt,
      record.expiresAt,
      record.cost?.reserved ?? null,
      record.cost?.spent ?? null,
    );
  }

  /** Writes a complete's outcome over the record's row, its key and expiry untouched. */
  #writeOutcome(record: StoredRecord): void {
    checkRecordBytes(record);
    const { failure, proof } = record;
    this.#exec(
      `UPDATE ${this.#t.records} SET status = ?, evidence = ?, raw_json = ?,
        agent_result_json = ?, error_code = ?, updated_at = ?, failure_name = ?,
        failure_message = ?, proof_hash = ?, proof_sig = ?, proof_key_id = ?, cost_spent = ?
      WHERE run_id = ? AND tool_call_id = ?`,
      record.status,
      record.evidence,
      record.rawJson,
      record.agentResultJson,
      record.errorCode,
      record.updatedAt,
      failure?.name ?? null,
      failure === undefined ? null : failure.message,
      proof?.hash ?? null,
      proof?.sig ?? null,
      proof?.keyId ?? null,
      record.cost?.spent ?? null,
      record.runId,
      record.toolCallId,
    );
  }
}

/** {@linkcode checkRowBytes} of a record's row. */
function checkRecordBytes(record: StoredRecord): void {
  checkRowBytes(
    "record",
    record.runId,
    record.toolCallId,
    record.toolName,
    record.requestJson,
    record.rawJson ?? "",
    record.agentResultJson ?? "",
    record.attemptId,
    record.failure?.name ?? "",
    record.failure?.message ?? "",
  );
}

function refusal<C extends StoreRefusal["code"]>(code: C): StoreRefusal<C> {
  return { ok: false, code };
}

/**
 * Refuses a row whose text is over {@linkcode MAX_ROW_BYTES}: thrown inside the transaction, so
 * nothing of the operation is written (the boundary reports STORE_UNAVAILABLE).
 */
function checkRowBytes(what: "record" | "run", ...texts: string[]): void {
  let bytes = 0;
  for (const text of texts) bytes += utf8ByteLength(text);
  if (bytes > MAX_ROW_BYTES) {
    throw new RangeError(
      `DurableObjectStore cannot keep this ${what}: ${bytes} bytes of text, over the ${MAX_ROW_BYTES} a row may hold`,
    );
  }
}

/** Whether the run is the instance asked for (any, when none is named). */
function isInstance(row: RunRow, startedAt: number | undefined): boolean {
  return startedAt === undefined || row.started_at === startedAt;
}

/** What every begin of the run answers of it: fixed when the run started. */
function begunRunOf(row: RunRow): BegunRun {
  return { deadline: row.deadline, startedAt: row.started_at };
}

function runStateOf(row: RunRow): RunState {
  const state: RunState = {
    runId: row.run_id,
    status: row.status,
    deadline: row.deadline,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    // JSON.parse makes every key an own property, `__proto__` included.
    budget: { calls: row.budget_calls, perTool: JSON.parse(row.budget_per_tool) },
    used: { calls: row.used_calls, perTool: JSON.parse(row.used_per_tool) },
  };
  if (row.budget_cost !== null) state.budget.cost = row.budget_cost;
  const cost = runCostOf(row);
  if (cost !== undefined) state.cost = cost;
  return state;
}

/** The run's `cost`: absent until it has a cost budget or began a costed call. */
function runCostOf(row: Pick<RunRow, "cost_reserved" | "cost_spent">): RunCost | undefined {
  return row.cost_reserved === null
    ? undefined
    : { reserved: row.cost_reserved, spent: row.cost_spent ?? 0 };
}

/** What `fitsCostBudget` reads of a run: its `budget.cost` and its `cost`. */
function costStateOf(row: RunRow): Pick<RunState, "budget" | "cost"> {
  const state: Pick<RunState, "budget" | "cost"> = {
    budget: { calls: row.budget_calls, perTool: {} },
  };
  if (row.budget_cost !== null) state.budget.cost = row.budget_cost;
  const cost = runCostOf(row);
  if (cost !== undefined) state.cost = cost;
  return state;
}

function recordOf(row: RecordRow): StoredRecord {
  const record: StoredRecord = {
    runId: row.run_id,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    status: row.status,
    evidence: row.evidence as StoredRecord["evidence"],
    requestJson: row.request_json,
    rawJson: row.raw_json,
    agentResultJson: row.agent_result_json,
    errorCode: row.error_code as StoredRecord["errorCode"],
    attemptId: row.attempt_id,
    seq: row.seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  };
  if (row.cost_reserved !== null) {
    record.cost = { reserved: row.cost_reserved, spent: row.cost_spent };
  }
  if (row.failure_name !== null) {
    record.failure = { name: row.failure_name, message: row.failure_message };
  }
  if (row.proof_hash !== null && row.proof_sig !== null && row.proof_key_id !== null) {
    record.proof = { hash: row.proof_hash, sig: row.proof_sig, keyId: row.proof_key_id };
  }
  return record;
}
