/**
 * What the scripts answer, read back: one JSON array per reply (see `scripts.ts`), its status,
 * and the records, runs and begun keys laid out in it. A reply that is not of that form is a
 * store failure, never a crash and never a value taken as it came.
 *
 * @module
 */
import { type ErrorCode, isErrorCode } from "../core/errors.ts";
import { checkFailure } from "../core/failure.ts";
import { checkRecordProof } from "../core/ledger.ts";
import { setOwnBudget } from "../core/limits.ts";
import type { BegunCall, RunState, StoredRecord, StoreRefusal } from "../core/store.ts";
import type {
  EvidenceStatus,
  RecordCost,
  RecordProof,
  RecordStatus,
  ToolFailure,
} from "../core/types.ts";
import { RedisStoreError, storeUnavailable } from "./errors.ts";
import { RECORD_FIELDS } from "./scripts.ts";

/** A script's reply, decoded: its elements, `null` for an absent field. */
export type Reply = (string | null)[];

/**
 * A script's reply: one JSON array of strings and `false` (absent), see scripts.ts. The client
 * hands it over parsed (`automaticDeserialization` on, the default) or as the string.
 */
export function decodeReply(reply: unknown): Reply {
  let items = reply;
  if (typeof reply === "string") {
    try {
      items = JSON.parse(reply);
    } catch {
      throw unreadable();
    }
  }
  if (!Array.isArray(items)) throw unreadable();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === false) items[i] = null;
    else if (typeof item !== "string") throw unreadable();
  }
  return items as Reply;
}

export function unreadable(): RedisStoreError {
  return new RedisStoreError("ReplyError", "Unexpected reply from Redis");
}

/** The first element: "OK" or a refusal code. */
export function replyStatus(reply: Reply): "OK" | ErrorCode {
  const status = reply[0];
  if (status === "OK" || isErrorCode(status)) return status;
  throw unreadable();
}

export const START_RUN_CODES = ["RUN_ALREADY_EXISTS"] as const;
export const BEGIN_CODES = [
  "RUN_NOT_FOUND",
  "RUN_INACTIVE",
  "DEADLINE_EXCEEDED",
  "DUPLICATE_TOOL_CALL",
  "TOOL_CALL_CONFLICT",
  "TOOL_BUDGET_EXHAUSTED",
  "RUN_BUDGET_EXHAUSTED",
  "BUDGET_EXHAUSTED",
] as const;
export const COMPLETE_CODES = ["RECORD_EXPIRED", "ILLEGAL_TRANSITION"] as const;
export const END_RUN_CODES = ["RUN_NOT_FOUND"] as const;

/** A script's refusal, which must be one its method can give; anything else is unreadable. */
export function refusalOf<C extends ErrorCode>(
  code: ErrorCode,
  codes: readonly C[],
): StoreRefusal<C> {
  if (!(codes as readonly ErrorCode[]).includes(code)) throw storeUnavailable(unreadable());
  return { ok: false, code: code as C };
}

/** A begun key as the run hash keeps it: `<seq>:<attemptId>:<requestDigest>`. */
export function toBegunCall(toolCallId: string, value: string | null | undefined): BegunCall {
  // The digest holds no ':' (REQUEST_DIGEST_PATTERN); an attempt ID may.
  const match = /^(\d+):(.*):([^:]*)$/s.exec(text(value));
  if (match === null) throw unreadable();
  return { toolCallId, requestDigest: match[3]!, attemptId: match[2]!, seq: int(match[1]) };
}

export function int(value: string | null | undefined): number {
  const n = Number(value);
  if (value === null || value === undefined || value === "" || !Number.isFinite(n)) {
    throw unreadable();
  }
  return n;
}

export function text(value: string | null | undefined): string {
  if (typeof value !== "string") throw unreadable();
  return value;
}

/** Builds a record from reply elements laid out as `RECORD_FIELDS`. */
export function toRecord(reply: Reply): StoredRecord {
  const at = (name: (typeof RECORD_FIELDS)[number]) => reply[RECORD_FIELDS.indexOf(name) + 1];
  return {
    runId: text(at("runId")),
    toolCallId: text(at("toolCallId")),
    toolName: text(at("toolName")),
    status: text(at("status")) as RecordStatus,
    evidence: (at("evidence") ?? null) as EvidenceStatus | null,
    requestJson: text(at("requestJson")),
    rawJson: at("rawJson") ?? null,
    agentResultJson: at("agentResultJson") ?? null,
    errorCode: (at("errorCode") ?? null) as ErrorCode | null,
    attemptId: text(at("attemptId")),
    // A record begun by the earlier layout has no position.
    seq: at("seq") == null ? 0 : int(at("seq")),
    createdAt: int(at("createdAt")),
    updatedAt: int(at("updatedAt")),
    expiresAt: int(at("expiresAt")),
    ...costOf(at("reserved"), at("spent")),
    ...failureOf(at("failure")),
    ...proofOf(at("proof")),
  };
}

/** A record's `reserved` and `spent` fields, as its `cost` (none for a call without a cost). */
export function costOf(
  reserved: string | null | undefined,
  spent: string | null | undefined,
): { cost?: RecordCost } {
  if (reserved == null) return {};
  return { cost: { reserved: int(reserved), spent: spent == null ? null : int(spent) } };
}

/** A record's `failure` field (JSON text), as the record's `failure` member. */
export function failureOf(value: string | null | undefined): { failure?: ToolFailure } {
  if (value == null) return {};
  try {
    return { failure: checkFailure(JSON.parse(value)) };
  } catch {
    throw unreadable();
  }
}

/** A record's `proof` field (JSON text), as the record's `proof` member. */
export function proofOf(value: string | null | undefined): { proof?: RecordProof } {
  if (value == null) return {};
  try {
    return { proof: checkRecordProof(JSON.parse(value)) };
  } catch {
    throw unreadable();
  }
}

/**
 * Builds a run from `field, value, ...` items of its hash; its begun keys (`c:` fields), when
 * the reply holds them, go to `calls`.
 */
export function toRun(items: Reply, calls?: BegunCall[]): RunState {
  const hash = new Map<string, string>();
  const budget: Record<string, number> = {};
  const used: Record<string, number> = {};
  for (let i = 0; i + 1 < items.length; i += 2) {
    const field = text(items[i]);
    const value = text(items[i + 1]);
    if (field.startsWith("b:")) setOwnBudget(budget, field.slice(2), int(value));
    else if (field.startsWith("u:")) setOwnBudget(used, field.slice(2), int(value));
    else if (field.startsWith("c:")) calls?.push(toBegunCall(field.slice(2), value));
    else hash.set(field, value);
  }
  const status = hash.get("status");
  if (status !== "ACTIVE" && status !== "ENDED") throw unreadable();
  const endedAt = hash.get("endedAt");
  const run: RunState = {
    runId: text(hash.get("runId")),
    status,
    deadline: int(hash.get("deadline")),
    startedAt: int(hash.get("startedAt")),
    endedAt: endedAt === undefined ? null : int(endedAt),
    budget: { calls: int(hash.get("calls")), perTool: budget },
    used: { calls: int(hash.get("used")), perTool: used },
  };
  // The cost: once the run has a cost budget or reserved a cost. Every reservation made less
  // those settled is held; what was settled, plus what completes spent past it, was spent.
  const limit = hash.get("cost");
  const reserved = hash.get("reserved");
  if (limit !== undefined) run.budget.cost = int(limit);
  if (limit !== undefined || reserved !== undefined) {
    const settled = int(hash.get("settled") ?? "0");
    const held = int(reserved ?? "0") - settled;
    const spent = settled + int(hash.get("adjust") ?? "0");
    run.cost = { reserved: held, spent };
  }
  return run;
}

/** A refusal of the store's own checks, before anything is sent. */
export function refuse<C extends ErrorCode>(code: C): StoreRefusal<C> {
  return { ok: false, code };
}
