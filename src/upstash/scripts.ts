/**
 * The Lua scripts of the Upstash store: one script per transition, so each is atomic and costs
 * one REST round trip; the field layouts their replies follow; how a number crosses to them as
 * ARGV; and each script as sent, with the SHA-1 `EVALSHA` names it by.
 *
 * Rules every script keeps:
 * - It touches only the keys passed in KEYS, and all of them share the run's hash tag, so it is
 *   Redis Cluster-safe (and fits Upstash's key locking).
 * - It replies with one string: a JSON array (built by `cjson.encode`, or a constant) whose first
 *   element is `"OK"` or an error code and whose other elements are strings, or `false` for a
 *   field that is absent. With `automaticDeserialization` on (the default), `@upstash/redis`
 *   JSON-parses that string once into an array whose strings stay strings, so an ID such as
 *   "123" is never turned into a number; with it off, the store parses the string itself. Either
 *   way the client decodes one value per reply, not one per element (each of which used to cost
 *   a base64 decode and a thrown `JSON.parse`).
 * - A reply never carries what the caller already knows: `begin` answers the run's deadline
 *   and start (the caller may know only the run ID) but no record field it sent, and `complete`
 *   only the fields its request does not carry.
 * - Numbers arrive as decimal strings and are compared with `tonumber`; they leave as the strings
 *   Redis holds (cjson would print a Lua number with 14 significant digits), so no counter or
 *   timestamp loses digits on the way out.
 * - `cjson.encode` passes UTF-8 bytes through as they are, escapes `"`, `\`, `/` and control
 *   bytes, and turns an empty table into `{}`: every reply table starts with its status, so it is
 *   never empty, and never holds a nil (HMGET gives `false` for an absent field).
 * - TTLs are set once, by the script run that creates a key (`PEXPIRE` after the `HSET` or
 *   `RPUSH` that created it); updates use `HSET` or `RPUSHX` on an existing key, which keeps the
 *   remaining TTL.
 * - A script cut off part-way (Redis keeps the writes before a refused command) leaves nothing a
 *   reader could take for a later state: each writes in an order where every prefix is safe.
 *
 * @module
 */
import { MIN_FACT_BYTES } from "../core/limits.ts";
import type { SentScript } from "./batch.ts";

/** A Lua script and its SHA-1, as `EVALSHA` wants it. */
export interface LuaScript {
  /** A short name for errors and tests. */
  readonly name: string;
  /** The source sent with `EVAL`. */
  readonly source: string;
  /** True when the script never writes: with key locking it also says `no-writes`. */
  readonly readOnly?: true;
}

/** Fields of a record hash, in the order the scripts return them. */
export const RECORD_FIELDS = [
  "runId",
  "toolCallId",
  "toolName",
  "status",
  "evidence",
  "requestJson",
  "rawJson",
  "agentResultJson",
  "errorCode",
  "attemptId",
  "seq",
  "createdAt",
  "updatedAt",
  "expiresAt",
  "proof",
  "failure",
  // A call begun with a cost: its reservation, and (once complete) what it spent.
  "reserved",
  "spent",
] as const;

/**
 * Fields `complete` returns: those of the record its request does not carry. `updatedAt` follows
 * them only when the record was already complete (a retry), as the request's `now` is not it then.
 */
export const COMPLETE_FIELDS = [
  "toolName",
  "requestJson",
  "createdAt",
  "expiresAt",
  "seq",
  // `false` for a call begun without a cost.
  "reserved",
] as const;

/** Fields `readFacts` returns per row: never the request or the raw response. */
export const FACT_FIELDS = ["toolCallId", "toolName", "evidence", "agentResultJson", "updatedAt"];

/** Fields `listCalls` reads of each begun call's record: no payloads. */
export const SUMMARY_FIELDS = [
  "status",
  "toolName",
  "evidence",
  "errorCode",
  "createdAt",
  "updatedAt",
] as const;

/**
 * The run hash field that marks a run started with a later layout: `"2"` (begun keys as
 * `c:<toolCallId>` fields, the progress list created by startRun) or `"3"` (also `tools`, the
 * names of the tools with a `b:` or `u:` field, so a run read never enumerates the hash). A run
 * started by an earlier version of the scripts has its begun keys in a set instead, and begin
 * checks that set for such a run.
 */
export const LAYOUT_FIELD = "layout";

/** The layout startRun writes now. */
export const LAYOUT = "3";

/**
 * The fixed fields of a run hash that a run read returns (with the `b:` and `u:` fields of the
 * tools named in `tools`): none of them grows with the calls.
 */
export const RUN_FIELDS = [
  "runId",
  "status",
  "deadline",
  "startedAt",
  "calls",
  "used",
  "attemptId",
  "endedAt",
  "endedProgress",
  "endedReady",
  "endedExpiry",
  // Calls that ended ERROR, counted by complete (for listRuns).
  "errors",
  // The cost budget (only when the run has one), the reservations begin made in all (once a call
  // with a cost began), and what completes spent past their reservations in all (less what they
  // gave back), once one spent other than its reservation. See RUN_READ for the run's cost.
  "cost",
  "reserved",
  "adjust",
  LAYOUT_FIELD,
] as const;

/** The field list of an HMGET, as Lua arguments. */
const luaFields = (fields: readonly string[]) => fields.map((f) => `'${f}'`).join(", ");

/** 1-based position of a record field in an HMGET of `RECORD_FIELDS`. */
const at = (field: (typeof RECORD_FIELDS)[number]) => RECORD_FIELDS.indexOf(field) + 1;

/** Lua: `local out` = the record fields of the hash at `key`, `false` for an absent field. */
const readRecord = (key: string) =>
  `local out = redis.call('HMGET', ${key}, ${luaFields(RECORD_FIELDS)})`;

/**
 * Lua: `settled_of(progress)` = the reservations the completed calls with a cost settled, in all:
 * each such call's progress entry ends in ` $<reserved>` (see COMPLETE), counted once per ID.
 * `with_settled(items, progress)` appends `settled` to a run's items when it reserved anything:
 * the run then holds `reserved - settled` reserved and spent `settled + adjust` (see `toRun`).
 *
 * Lua: `run_items(key, progress)` = the run hash as `{field, value, ...}` without the `c:` fields
 * of its begun calls, the `p:` proof hashes of its signed completes and its `seal`, or nil when
 * absent, with `settled` (above); and the seal (`false` when none).
 * For a run of layout ${LAYOUT} it reads a fixed field list, then the `b:` and `u:` fields of the
 * tools its `tools` field names: two HMGETs, whatever the number of calls. A run of an earlier
 * layout has no `tools`: the whole hash is read and filtered, as then.
 *
 * `run_reply(key, calls, progress)`: `["OK", field, value, ...]` of those items (with `calls`,
 * the whole hash and `settled`, for listCalls and exportRun, which need the begun keys), or `[]`
 * when absent.
 */
const RUN_READ = `
local function settled_of(progress)
  local entries = redis.call('LRANGE', progress, 0, -1)
  local seen, sum = {}, 0
  for i = 1, #entries do
    local entry = entries[i]
    local at = string.find(entry, ' $', 1, true)
    if at then
      local id = string.sub(entry, 1, string.find(entry, ' ', 1, true) - 1)
      if not seen[id] then
        seen[id] = true
        sum = sum + tonumber(string.sub(entry, at + 2))
      end
    end
  end
  return string.format('%d', sum)
end

local function with_settled(items, progress)
  for i = 1, #items - 1, 2 do
    if items[i] == 'reserved' then
      if items[i + 1] ~= '0' then
        items[#items + 1] = 'settled'
        items[#items + 1] = settled_of(progress)
      end
      return items
    end
  end
  return items
end

local function run_items(key, progress)
  local fixed = redis.call('HMGET', key, ${luaFields(RUN_FIELDS)}, 'tools', 'seal')
  if not fixed[2] then return nil end
  local items = {}
  if fixed[${RUN_FIELDS.length}] == '${LAYOUT}' and fixed[${RUN_FIELDS.length + 1}] then
    local names = {${luaFields(RUN_FIELDS)}}
    for i = 1, #names do
      if fixed[i] then
        items[#items + 1] = names[i]
        items[#items + 1] = fixed[i]
      end
    end
    local fields = {}
    for _, tool in ipairs(cjson.decode(fixed[${RUN_FIELDS.length + 1}])) do
      fields[#fields + 1] = 'b:' .. tool
      fields[#fields + 1] = 'u:' .. tool
    end
    for i = 1, #fields, 2000 do
      local last = math.min(i + 1999, #fields)
      local values = redis.call('HMGET', key, unpack(fields, i, last))
      for j = 1, last - i + 1 do
        if values[j] then
          items[#items + 1] = fields[i + j - 1]
          items[#items + 1] = values[j]
        end
      end
    end
    return with_settled(items, progress), fixed[${RUN_FIELDS.length + 2}]
  end
  local all, seal = redis.call('HGETALL', key), false
  for i = 1, #all, 2 do
    local p2 = string.sub(all[i], 1, 2)
    if all[i] == 'seal' then
      seal = all[i + 1]
    elseif p2 ~= 'c:' and p2 ~= 'p:' and all[i] ~= 'tools' then
      items[#items + 1] = all[i]
      items[#items + 1] = all[i + 1]
    end
  end
  return with_settled(items, progress), seal
end

local function run_reply(key, calls, progress)
  if calls then
    local all = redis.call('HGETALL', key)
    if #all == 0 then return '[]' end
    with_settled(all, progress)
    table.insert(all, 1, 'OK')
    return cjson.encode(all)
  end
  local items = run_items(key, progress)
  if not items then return '[]' end
  table.insert(items, 1, 'OK')
  return cjson.encode(items)
end
`;

/** A constant reply: `["<code>"]`. */
const fixed = (name: string) => `'["${name}"]'`;

/**
 * Creates a run and its progress index, or returns the run again for a repeat of the same
 * attempt. Six Redis calls when it creates the run, whatever the number of tool budgets.
 */
export const START_RUN: LuaScript = {
  name: "startRun",
  source: `-- startRun
-- KEYS[1]  run hash       KEYS[2] progress list
-- ARGV[1]  runId          ARGV[2] attemptId     ARGV[3] deadline (epoch ms)
-- ARGV[4]  calls budget   ARGV[5] ttlMs         ARGV[6] now (epoch ms)
-- ARGV[7]  the cost budget, '' for none
-- ARGV[8..] pairs of tool name, tool budget
-- Reply: ["OK"] when created (the caller knows every field)
--      | ["OK", field, value, ...] (the run hash) for a repeat of the same attempt
--      | ["RUN_ALREADY_EXISTS"]
${RUN_READ}
local attempt = redis.call('HGET', KEYS[1], 'attemptId')
if attempt then
  if attempt ~= ARGV[2] then return ${fixed("RUN_ALREADY_EXISTS")} end
  return run_reply(KEYS[1], false, KEYS[2])
end
-- The index first, with its TTL: once the run hash exists, so does its index, and complete never
-- has to create it or set a TTL. Its one element '' is a sentinel that keeps the list in being;
-- whoever reads the index drops it. (Cut off before the run hash is written, a repeat of the
-- same start pushes a second sentinel, dropped the same way.)
redis.call('RPUSH', KEYS[2], '')
redis.call('PEXPIRE', KEYS[2], ARGV[5])
-- One absolute expiry for both keys: two relative PEXPIREs a millisecond apart would leave the
-- index to outlive its run by that millisecond.
local expireAt = redis.call('PEXPIRETIME', KEYS[2])
local fields = {'runId', ARGV[1], 'status', 'ACTIVE', 'deadline', ARGV[3], 'startedAt', ARGV[6],
  'calls', ARGV[4], 'used', '0', 'attemptId', ARGV[2], '${LAYOUT_FIELD}', '${LAYOUT}'}
if ARGV[7] ~= '' then
  fields[#fields + 1] = 'cost'
  fields[#fields + 1] = ARGV[7]
end
local tools = {}
for i = 8, #ARGV, 2 do
  fields[#fields + 1] = 'b:' .. ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
  tools[#tools + 1] = ARGV[i]
end
-- The tools a run read looks up (cjson encodes an empty table as {}).
fields[#fields + 1] = 'tools'
fields[#fields + 1] = #tools == 0 and '[]' or cjson.encode(tools)
-- One HSET, in pieces only past what unpack can pass at once.
for i = 1, #fields, 2000 do
  redis.call('HSET', KEYS[1], unpack(fields, i, math.min(i + 1999, #fields)))
end
redis.call('PEXPIREAT', KEYS[1], expireAt)
return ${fixed("OK")}
`,
};

/** Reads a run; touches no TTL. */
export const GET_RUN: LuaScript = {
  name: "getRun",
  readOnly: true,
  source: `-- getRun
-- KEYS[1]  run hash       KEYS[2] progress list (read only for a run that reserved a cost)
-- ARGV[1]  '1' to include the begun calls (listCalls), '0' not
-- Reply: ["OK", field, value, ...] | [] when absent
${RUN_READ}
return run_reply(KEYS[1], ARGV[1] == '1', KEYS[2])
`,
};

/**
 * The checks of `Store.begin` in MemoryStore's order, then the create, all or nothing: four
 * Redis calls when it creates a record, the first of a run included (a call's cost is reserved in
 * the same writes), and none of its refusals has a write to undo.
 */
export const BEGIN: LuaScript = {
  name: "begin",
  source: `-- begin
-- KEYS[1]  run hash       KEYS[2] record hash
-- KEYS[3]  the set of begun tool call IDs of a run started before the '${LAYOUT_FIELD}' field
-- ARGV[1]  runId          ARGV[2] toolCallId    ARGV[3] toolName     ARGV[4] requestJson
-- ARGV[5]  attemptId      ARGV[6] ttlMs         ARGV[7] now          ARGV[8] expiresAt (now + ttlMs)
-- ARGV[9]  requestDigest  ARGV[10] '1' to carry the record in DUPLICATE_TOOL_CALL (replay), '0' not
-- ARGV[11] the instance asked for: the run's startedAt, or '' for whichever lives
-- ARGV[12] the call's cost, '' for a tool without one
-- Reply: ["OK", deadline, startedAt, seq] when created (the caller knows every other field)
--      | ["OK", deadline, startedAt, <${RECORD_FIELDS.length} record fields>] for a repeat of the same attempt
--      | ["DUPLICATE_TOOL_CALL", "REPLAY", <${RECORD_FIELDS.length} record fields, or none once it expired>] with ARGV[10] '1'
--      | ["RUN_NOT_FOUND" | "RUN_INACTIVE" | "DEADLINE_EXCEEDED" | "DUPLICATE_TOOL_CALL"
--         | "TOOL_CALL_CONFLICT" | "TOOL_BUDGET_EXHAUSTED" | "RUN_BUDGET_EXHAUSTED"
--         | "BUDGET_EXHAUSTED"]
-- A begun key is the run hash field c:<toolCallId> = '<seq>:<attemptId>:<requestDigest>', kept for
-- the life of the run (also after its record expired); the digest holds no ':'.
local run = redis.call('HMGET', KEYS[1], 'status', 'deadline', 'calls', 'used',
  'b:' .. ARGV[3], 'u:' .. ARGV[3], 'c:' .. ARGV[2], '${LAYOUT_FIELD}', 'tools', 'startedAt',
  'cost', 'reserved', 'adjust')
-- startRun gives every run hash a status: none means no run. A run of this ID that started at
-- another ms is another instance: the one asked for is gone.
if not run[1] or (ARGV[11] ~= '' and run[10] ~= ARGV[11]) then
  return ${fixed("RUN_NOT_FOUND")}
end
local attempt, digest
if run[7] then attempt, digest = string.match(run[7], '^%d+:(.*):([^:]*)$') end
-- A client retry of a begin that already ran: the same begin, not a duplicate.
if attempt == ARGV[5] then
  ${readRecord("KEYS[2]")}
  if out[${at("attemptId")}] then
    table.insert(out, 1, run[10])
    table.insert(out, 1, run[2])
    table.insert(out, 1, 'OK')
    return cjson.encode(out)
  end
end
if run[1] ~= 'ACTIVE' then return ${fixed("RUN_INACTIVE")} end
if tonumber(ARGV[7]) >= tonumber(run[2]) then return ${fixed("DEADLINE_EXCEEDED")} end
if run[7] then
  if digest ~= ARGV[9] then return ${fixed("TOOL_CALL_CONFLICT")} end
  if ARGV[10] ~= '1' then return ${fixed("DUPLICATE_TOOL_CALL")} end
  ${readRecord("KEYS[2]")}
  if not out[${at("attemptId")}] then return '["DUPLICATE_TOOL_CALL","REPLAY"]' end
  table.insert(out, 1, 'REPLAY')
  table.insert(out, 1, 'DUPLICATE_TOOL_CALL')
  return cjson.encode(out)
end
-- A run started before this layout keeps the keys begun before it in a set.
if not run[8] and (redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 1
  or redis.call('EXISTS', KEYS[2]) == 1) then
  return ${fixed("DUPLICATE_TOOL_CALL")}
end
if run[5] and tonumber(run[6] or '0') >= tonumber(run[5]) then
  return ${fixed("TOOL_BUDGET_EXHAUSTED")}
end
if tonumber(run[4]) >= tonumber(run[3]) then return ${fixed("RUN_BUDGET_EXHAUSTED")} end
-- The cost budget: what the run holds reserved plus what it spent is every reservation made
-- (reserved) plus what completes spent past theirs (adjust), so the call fits when that plus its
-- cost is within the budget (fitsCostBudget). Nothing to read or write for a call without one.
local reserved = false
if ARGV[12] ~= '' then
  local total = tonumber(run[12] or '0') + tonumber(ARGV[12])
  if run[11] and total + tonumber(run[13] or '0') > tonumber(run[11]) then
    return ${fixed("BUDGET_EXHAUSTED")}
  end
  reserved = string.format('%d', total)
end
-- The call's position in the run: the count of calls begun, this one included. '%d' prints the
-- counters exactly (they stay far below 2^53).
local seq = string.format('%d', tonumber(run[4]) + 1)
local record = {'runId', ARGV[1], 'toolCallId', ARGV[2], 'toolName', ARGV[3],
  'status', 'PROJECTING', 'requestJson', ARGV[4], 'attemptId', ARGV[5], 'seq', seq,
  'createdAt', ARGV[7], 'updatedAt', ARGV[7], 'expiresAt', ARGV[8]}
if reserved then
  record[#record + 1] = 'reserved'
  record[#record + 1] = ARGV[12]
end
redis.call('HSET', KEYS[2], unpack(record))
redis.call('PEXPIRE', KEYS[2], ARGV[6])
-- Both counters and the begun key in one write. Cut off before it, the record exists unmarked:
-- it expires with its TTL, and the same attempt begins again (its budget counted then, once, and
-- its position the same).
local set = {'used', seq, 'u:' .. ARGV[3], string.format('%d', tonumber(run[6] or '0') + 1),
  'c:' .. ARGV[2], seq .. ':' .. ARGV[5] .. ':' .. ARGV[9]}
-- The reservation in the same write: a begin cut off before it reserved nothing, and its
-- record, unmarked, is begun again by the same attempt (see above).
if reserved then
  set[#set + 1] = 'reserved'
  set[#set + 1] = reserved
end
-- A tool's first call (no budget, no count yet) adds its name to the tools a run read looks up,
-- in the same write as its count: a run read never misses a u: field.
if run[9] and not run[5] and not run[6] then
  set[#set + 1] = 'tools'
  set[#set + 1] = run[9] == '[]' and ('[' .. cjson.encode(ARGV[3]) .. ']')
    or (string.sub(run[9], 1, -2) .. ',' .. cjson.encode(ARGV[3]) .. ']')
end
redis.call('HSET', KEYS[1], unpack(set))
return cjson.encode({'OK', run[2], run[10], seq})
`,
};

/** Fields complete reads: the checks, the reply, and a repeat's comparison, in one HMGET. */
const COMPLETE_READ = [
  "attemptId",
  "status",
  ...COMPLETE_FIELDS,
  "evidence",
  "errorCode",
  "rawJson",
  "agentResultJson",
  "updatedAt",
  "proof",
  "failure",
  "spent",
] as const;
const c = (field: (typeof COMPLETE_READ)[number]) => `r[${COMPLETE_READ.indexOf(field) + 1}]`;

/**
 * PROJECTING -> READY | ERROR for the attempt that began it; appends to the progress index
 * first, so a run cut off part-way never leaves a READY record outside the index. Three Redis
 * calls; for a call with a cost that spent other than it reserved, four (the run's `adjust`).
 */
export const COMPLETE: LuaScript = {
  name: "complete",
  source: `-- complete
-- KEYS[1]  record hash    KEYS[2] run hash      KEYS[3] progress list
-- ARGV[1]  toolCallId     ARGV[2] attemptId     ARGV[3] '1' when the outcome passed validation
-- ARGV[4]  READY | ERROR  ARGV[5] evidence      ARGV[6] errorCode ('' for READY)
-- ARGV[7]  '1' when a raw response is given     ARGV[8] rawJson
-- ARGV[9]  '1' when an agent result is given    ARGV[10] agentResultJson
-- ARGV[11] now
-- ARGV[12] the proof's JSON text, '' for none  ARGV[13] its hash
-- ARGV[14] the failure's JSON text (ERROR only), '' for none
-- ARGV[15] what the call spent, '' for its reservation (or for a call begun without a cost)
-- Reply: ["OK", ${COMPLETE_FIELDS.join(", ")}] when completed now (updatedAt is ARGV[11])
--      | ["OK", ${COMPLETE_FIELDS.join(", ")}, updatedAt, proof] for a repeat of the same complete
--      | ["RECORD_EXPIRED"] | ["ILLEGAL_TRANSITION"]
-- Everything else of the record is in the request: the script checked that it is what is stored.
-- The rules are those of completeTransition (src/core/lifecycle.ts).
local r = redis.call('HMGET', KEYS[1], ${luaFields(COMPLETE_READ)})
-- Absent (expired): never re-created here.
if not ${c("attemptId")} then return ${fixed("RECORD_EXPIRED")} end
if ${c("attemptId")} ~= ARGV[2] or ARGV[3] ~= '1' then return ${fixed("ILLEGAL_TRANSITION")} end
local status, evidence, code, raw, agent = ARGV[4], false, false, false, false
local failure = false
if ARGV[7] == '1' then raw = ARGV[8] end
if ARGV[14] ~= '' then
  if status ~= 'ERROR' then return ${fixed("ILLEGAL_TRANSITION")} end
  failure = ARGV[14]
end
if status == 'READY' then
  evidence = ARGV[5]
  if evidence ~= 'EVIDENCE_FOUND' and evidence ~= 'NO_EVIDENCE' then
    return ${fixed("ILLEGAL_TRANSITION")}
  end
  if not raw or ARGV[9] ~= '1' then return ${fixed("ILLEGAL_TRANSITION")} end
  agent = ARGV[10]
elseif status == 'ERROR' and ARGV[6] ~= '' then
  evidence, code = 'ERROR', ARGV[6]
else
  return ${fixed("ILLEGAL_TRANSITION")}
end
-- Only a call begun with a cost settles one: what it spent, else its reservation.
local reserved, spent = ${c("reserved")}, false
if reserved then
  spent = ARGV[15] ~= '' and ARGV[15] or reserved
elseif ARGV[15] ~= '' then
  return ${fixed("ILLEGAL_TRANSITION")}
end
-- A record begun by the earlier layout has no position: '0'.
local reply = {'OK', ${
    COMPLETE_FIELDS.map((f) => f === "seq" ? `${c(f)} or '0'` : c(f)).join(", ")
  }}
if ${c("status")} ~= 'PROJECTING' then
  -- A retry of this very complete returns the record again; anything else is refused.
  if ${c("status")} == status and ${c("evidence")} == evidence and ${c("errorCode")} == code and ${
    c("rawJson")
  } == raw and ${c("agentResultJson")} == agent and ${c("failure")} == failure and ${
    c("spent")
  } == spent then
    reply[${COMPLETE_FIELDS.length + 2}] = ${c("updatedAt")}
    reply[${COMPLETE_FIELDS.length + 3}] = ${c("proof")}
    return cjson.encode(reply)
  end
  return ${fixed("ILLEGAL_TRANSITION")}
end
-- The index first, then the record. Redis does not undo a script's earlier writes when a later
-- command fails (Upstash refuses writes past the storage quota), so a run cut off in between
-- leaves an index entry whose record is still PROJECTING, which readFacts skips; the other
-- order could leave a READY record that the facts miss. A repeat after such a cut appends the ID
-- again: whoever reads the index keeps the first occurrence of each ID.
-- startRun created the index with the run's TTL, so RPUSHX (which never creates) is enough
-- while the run lives. It answers 0 when the run is gone, or when the run was started before
-- startRun created the index: then, while the run lives (PTTL is not -2), RPUSH creates it.
-- The entry marks the outcome: '<id> r<expiresAt>' for READY, '<id> e' for ERROR (see END_RUN),
-- and for a call with a cost ends in ' $<reserved>': the entry settles it (RUN_READ), so that a
-- call that spent its reservation costs no command more.
local entry = ARGV[1] .. (status == 'READY' and (' r' .. ${c("expiresAt")}) or ' e')
if reserved then entry = entry .. ' $' .. reserved end
local alive = redis.call('RPUSHX', KEYS[3], entry) ~= 0
if not alive then
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl ~= -2 then
    alive = true
    redis.call('RPUSH', KEYS[3], entry)
    if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
  end
end
-- What it spent past its reservation (or gave back) goes to the run's adjust, in the order that
-- never undercounts a spend when cut off part-way: an excess before the record is written (a
-- repeat after such a cut counts it twice, never not at all), a refund after it (a cut loses the
-- refund, never counts it twice). The index holds the run's TTL: while it lives, so does the run.
local excess = reserved and (tonumber(spent) - tonumber(reserved)) or 0
if alive and excess > 0 then
  redis.call('HINCRBY', KEYS[2], 'adjust', string.format('%d', excess))
end
-- The run's count of ERROR records, for listRuns (HINCRBY on an absent hash would create it).
if code and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HINCRBY', KEYS[2], 'errors', 1) end
-- HSET on an existing key keeps its TTL.
local set = {'status', status, 'evidence', evidence, 'updatedAt', ARGV[11]}
if code then set[#set + 1] = 'errorCode'; set[#set + 1] = code end
if raw then set[#set + 1] = 'rawJson'; set[#set + 1] = raw end
if agent then set[#set + 1] = 'agentResultJson'; set[#set + 1] = agent end
if failure then set[#set + 1] = 'failure'; set[#set + 1] = failure end
if spent then set[#set + 1] = 'spent'; set[#set + 1] = spent end
if ARGV[12] ~= '' then
  set[#set + 1] = 'proof'; set[#set + 1] = ARGV[12]
  -- The hash also in the run hash, for the seal: endRun reads no record.
  redis.call('HSET', KEYS[2], 'p:' .. ARGV[1], ARGV[13])
end
redis.call('HSET', KEYS[1], unpack(set))
if alive and excess < 0 then
  redis.call('HINCRBY', KEYS[2], 'adjust', string.format('%d', excess))
end
return cjson.encode(reply)
`,
};

/** Reads one record; touches no TTL. */
export const GET: LuaScript = {
  name: "get",
  readOnly: true,
  source: `-- get
-- KEYS[1]  record hash
-- ARGV     none
-- Reply: ["OK", <${RECORD_FIELDS.length} record fields>] | [] when absent
${readRecord("KEYS[1]")}
-- Every record hash has an attemptId: none means no record.
if not out[${at("attemptId")}] then return '[]' end
table.insert(out, 1, 'OK')
return cjson.encode(out)
`,
};

/**
 * Ends a run (idempotent) and returns it with its progress index. The first end fixes the facts:
 * it keeps the index's length in the run hash (`endedProgress`), and every end returns that
 * prefix, so a call that completes after the first end is recorded (and indexed) but never listed.
 * With a page it returns only that page of the READY entries and counts those after it; the first
 * end also keeps that count (`endedReady`) and the soonest READY expiry (`endedExpiry`), so a
 * later end walks the index only up to its page.
 */
export const END_RUN: LuaScript = {
  name: "endRun",
  source: `-- endRun
-- KEYS[1]  run hash       KEYS[2] progress list
-- ARGV[1]  now            ARGV[2] '1' for the seal, '0' not
-- ARGV[3]  the page's first position, '' for the whole index   ARGV[4] the page's size
-- Reply: ["OK", "<n>", <n run hash items: field, value, ...>, <tool call IDs in order>]
--      | with the seal: ["OK", "<n>", <n run hash items>, "<m>", <m tool call IDs>,
--        seal (false when none), then (while none) per begun call: toolCallId, its c: value,
--        its proof hash (false when none)]
--      | with a page, the IDs are those of the page, after "<next>" (false after the last page)
--        and "<left>"; and with the seal, before the seal: "<k>", every completed call's ID
--        ("0" and none once there is a seal)
--      | ["RUN_NOT_FOUND"]
-- An index entry is '<id> r<expiresAt>' (READY), '<id> e' (ERROR) or, written before the marks,
-- '<id>': a run with such an entry gets all its candidates in one page, as its records alone
-- tell READY from ERROR. A call with a cost adds ' $<reserved>' after its mark (see COMPLETE). The marks are read, no record is: the READY entries past the page are
-- counted (those whose expiresAt is past ARGV[1] are gone), not resolved.
${RUN_READ}
-- The expiresAt of a READY entry, as text: the digits after its ' r'.
local function expiry_text(entry, space)
  local text = string.sub(entry, space + 2)
  local stop = string.find(text, ' ', 1, true)
  if stop then text = string.sub(text, 1, stop - 1) end
  return text
end
local items, seal = run_items(KEYS[1], KEYS[2])
if not items then return ${fixed("RUN_NOT_FOUND")} end
local out, status_at, kept, counted, soonest = {'OK', '0'}, nil, nil, nil, nil
for i = 1, #items, 2 do
  local n = #out
  out[n + 1], out[n + 2] = items[i], items[i + 1]
  if items[i] == 'status' then status_at = n + 2
  elseif items[i] == 'endedProgress' then kept = items[i + 1]
  elseif items[i] == 'endedReady' then counted = tonumber(items[i + 1])
  elseif items[i] == 'endedExpiry' then soonest = tonumber(items[i + 1]) end
end
-- The seal's state: every begun call and its proof hash, read (the whole run hash, once per
-- call) only with a ledger key and only while the run has no seal.
local sealing, begun, hashes = ARGV[2] == '1', {}, {}
if sealing and not seal then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local p2 = string.sub(all[i], 1, 2)
    if p2 == 'c:' then
      begun[#begun + 1] = all[i]
      begun[all[i]] = all[i + 1]
    elseif p2 == 'p:' then
      hashes[string.sub(all[i], 3)] = all[i + 1]
    end
  end
end
local ending = status_at and out[status_at] == 'ACTIVE'
if ending then
  -- The length of the list as it is, sentinel and repeats included: the prefix is what counts.
  kept = string.format('%d', redis.call('LLEN', KEYS[2]))
  out[status_at] = 'ENDED'
  local n = #out
  out[n + 1], out[n + 2] = 'endedAt', ARGV[1]
end
out[2] = tostring(#out - 2)
local now, paging = tonumber(ARGV[1]), ARGV[3] ~= ''
local want_done = not paging or (sealing and not seal)
-- The whole prefix is walked by the first end (which counts its READY entries, endedReady, and
-- keeps the soonest expiresAt among them, endedExpiry), for the completed IDs (the seal, or no
-- page), and once a READY entry may have expired; any other end walks only up to its page.
local whole = want_done or ending or not counted or (soonest and soonest <= now)
local upto = whole and math.huge or tonumber(ARGV[3]) + tonumber(ARGV[4])
local size = kept and tonumber(kept) or redis.call('LLEN', KEYS[2])
-- Without the sentinel, each ID once, where it first appears; its outcome from its mark. A plain
-- find and no number read per entry but for the count: nothing else of an end walks the index.
local seen, done, ready, marks, unmarked, min_expiry, min_text = {}, {}, {}, {}, false, nil, nil
local at, chunk = 0, whole and size or math.max(64, 2 * upto)
while at < size and #ready < upto do
  local ids = redis.call('LRANGE', KEYS[2], at, math.min(size, at + chunk) - 1)
  at = at + #ids
  for i = 1, #ids do
    local entry = ids[i]
    local space = string.find(entry, ' ', 1, true)
    local id = space and string.sub(entry, 1, space - 1) or entry
    if id ~= '' and not seen[id] then
      seen[id] = true
      if want_done then done[#done + 1] = id end
      if not space then
        unmarked = true
        ready[#ready + 1] = id
      elseif string.byte(entry, space + 1) == 114 then -- 'r': READY
        ready[#ready + 1] = id
        marks[#ready] = entry
        if whole then
          local text = expiry_text(entry, space)
          local expiry = tonumber(text)
          if not min_expiry or expiry < min_expiry then min_expiry, min_text = expiry, text end
        end
      end
    end
  end
  if #ids == 0 then break end
end
if ending then
  local set = {'status', 'ENDED', 'endedAt', ARGV[1], 'endedProgress', kept}
  if not unmarked then
    set[#set + 1], set[#set + 2] = 'endedReady', string.format('%d', #ready)
    if min_text then set[#set + 1], set[#set + 2] = 'endedExpiry', min_text end
  end
  redis.call('HSET', KEYS[1], unpack(set))
end
local listed = done
if paging then
  local from, total = tonumber(ARGV[3]), #ready
  if not whole then total = counted end
  local last = unmarked and total or math.min(total, from + tonumber(ARGV[4]))
  local left = total - last
  if whole then
    -- The entries past the page whose records may have expired: by their expiresAt.
    left = 0
    for i = last + 1, #ready do
      local entry = marks[i]
      if tonumber(expiry_text(entry, string.find(entry, ' ', 1, true))) > now then
        left = left + 1
      end
    end
  end
  local ready_total = total
  out[#out + 1] = last < ready_total and string.format('%d', last) or false
  out[#out + 1] = string.format('%d', left)
  listed = {}
  for i = from + 1, last do listed[#listed + 1] = ready[i] end
end
if sealing then out[#out + 1] = string.format('%d', #listed) end
for i = 1, #listed do out[#out + 1] = listed[i] end
if sealing then
  if ARGV[3] ~= '' then
    if seal then done = {} end
    out[#out + 1] = string.format('%d', #done)
    for i = 1, #done do out[#out + 1] = done[i] end
  end
  out[#out + 1] = seal
  if not seal then
    for i = 1, #begun do
      local id = string.sub(begun[i], 3)
      out[#out + 1], out[#out + 2], out[#out + 3] = id, begun[begun[i]], hashes[id] or false
    end
  end
end
return cjson.encode(out)
`,
};

/** Resolves record keys to fact rows inside Redis, so no request or raw payload leaves it. */
export const READ_FACTS: LuaScript = {
  name: "readFacts",
  readOnly: true,
  source: `-- readFacts
-- KEYS[1..n] record hashes of one run, in execution order
-- ARGV[1]  runId          ARGV[2] maxFacts      ARGV[3] maxBytes
-- Reply: ["OK", "<omitted>", "<unread>", then ${FACT_FIELDS.length} fields per row: ${
    FACT_FIELDS.join(", ")
  }]
-- Only READY records of ARGV[1] with evidence EVIDENCE_FOUND or NO_EVIDENCE become rows. Once
-- the caps can take no more (maxFacts rows, or fewer bytes left than the smallest agent result,
-- ${MIN_FACT_BYTES}), the keys left are not read: "<unread>" counts them.
local max_facts, max_bytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local rows, bytes, omitted, unread = 0, 0, 0, 0
local out = {'OK', '0', '0'}
for i = 1, #KEYS do
  if rows >= max_facts or max_bytes - bytes < ${MIN_FACT_BYTES} then
    unread = #KEYS - i + 1
    break
  end
  local r = redis.call('HMGET', KEYS[i], 'runId', 'status', 'evidence', 'agentResultJson',
    'toolCallId', 'toolName', 'updatedAt')
  if r[1] == ARGV[1] and r[2] == 'READY' and r[4] and r[5] and r[6] and r[7]
    and (r[3] == 'EVIDENCE_FOUND' or r[3] == 'NO_EVIDENCE') then
    local size = #r[4]
    if bytes + size > max_bytes then
      omitted = omitted + 1
    else
      rows, bytes = rows + 1, bytes + size
      local n = #out
      out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = r[5], r[6], r[3], r[4], r[7]
    end
  end
end
out[2], out[3] = tostring(omitted), tostring(unread)
return cjson.encode(out)
`,
};

/** Reads one begun key of a run and its record, in one round trip; touches no TTL. */
export const LOOKUP_CALL: LuaScript = {
  name: "lookupCall",
  readOnly: true,
  source: `-- lookupCall
-- KEYS[1]  run hash       KEYS[2] record hash
-- ARGV[1]  toolCallId     ARGV[2] the instance asked for: the run's startedAt, or '' for any
-- Reply: [] when the run is absent (or another instance) | ["OK"] when the key was never begun
--      | ["OK", "<seq>:<attemptId>:<requestDigest>", <${RECORD_FIELDS.length} record fields, false once it expired>]
local run = redis.call('HMGET', KEYS[1], 'status', 'c:' .. ARGV[1], 'startedAt')
if not run[1] or (ARGV[2] ~= '' and run[3] ~= ARGV[2]) then return '[]' end
if not run[2] then return ${fixed("OK")} end
${readRecord("KEYS[2]")}
table.insert(out, 1, run[2])
table.insert(out, 1, 'OK')
return cjson.encode(out)
`,
};

/** The summary fields of begun calls' records, for listCalls after it read the run hash. */
export const READ_CALLS: LuaScript = {
  name: "readCalls",
  readOnly: true,
  source: `-- readCalls
-- KEYS[1..n] record hashes of one run, in begin order
-- ARGV     none
-- Reply: ["OK", then ${SUMMARY_FIELDS.length} fields per key: ${
    SUMMARY_FIELDS.join(", ")
  }, false for an absent field (all of them once a record expired)]
local out = {'OK'}
for i = 1, #KEYS do
  local r = redis.call('HMGET', KEYS[i], ${luaFields(SUMMARY_FIELDS)})
  for j = 1, ${SUMMARY_FIELDS.length} do out[#out + 1] = r[j] end
end
return cjson.encode(out)
`,
};

/**
 * Keeps a run's seal, once: the first one stays for the life of the run (its hash's TTL).
 */
export const SEAL_RUN: LuaScript = {
  name: "sealRun",
  source: `-- sealRun
-- KEYS[1]  run hash
-- ARGV[1]  the seal's JSON text
-- Reply: ["OK", <the seal kept>] | ["RUN_NOT_FOUND"]
-- HSETNX on an absent key would create it, without a TTL.
if redis.call('EXISTS', KEYS[1]) == 0 then return ${fixed("RUN_NOT_FOUND")} end
if redis.call('HSETNX', KEYS[1], 'seal', ARGV[1]) == 1 then return cjson.encode({'OK', ARGV[1]}) end
return cjson.encode({'OK', redis.call('HGET', KEYS[1], 'seal')})
`,
};

/**
 * Lua: `now` is Redis's clock in ms (the clock the run hash's TTL follows, whatever the callers'
 * clocks say); drops from both run indexes the runs whose expiry (KEYS[2]'s score) is past it, at
 * most 100 per call, and the members the caller found gone (ARGV from `from`).
 */
const DROP_EXPIRED = (from: number) => `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)
for i = ${from}, #ARGV do gone[#gone + 1] = ARGV[i] end
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('ZREM', KEYS[2], unpack(gone))
end`;

/**
 * Puts a run in the run indexes, for listRuns: sent with startRun, in the same pipeline request
 * when the store batches (these keys have a hash tag of their own, so no startRun script may
 * touch them). NX: a repeat of a start, or a refused one, never moves a run already listed.
 *
 * The indexes expire with their latest run, as every other key does with its own: each start
 * pushes their expiry out to its run's (by Redis's clock, as the run hash's TTL), never in, so
 * no live run's entry is cut, and once every run has expired nothing of them is left.
 */
export const INDEX_RUN: LuaScript = {
  name: "indexRun",
  source: `-- indexRun
-- KEYS[1]  runs by startedAt  KEYS[2] runs by expiry (both the store's, hash tag {runs})
-- ARGV[1]  runId              ARGV[2] startedAt       ARGV[3] ttlMs
-- Reply: ["OK"]
${DROP_EXPIRED(4)}
local expiry = now + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], 'NX', expiry, ARGV[1])
-- Both keys are written together and so expire together: one expiry tells both.
local current = redis.call('PEXPIRETIME', KEYS[2])
if current < expiry then
  if current == -1 then
    -- None yet: a key this ZADD made, or one an earlier version left without any, whose runs
    -- may outlive this one: the latest of them.
    local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
    expiry = math.max(expiry, tonumber(last[2]))
  end
  local at = string.format('%d', expiry)
  redis.call('PEXPIREAT', KEYS[1], at)
  redis.call('PEXPIREAT', KEYS[2], at)
end
return ${fixed("OK")}
`,
};

/**
 * A page of run IDs, newest first (score, then member, both descending: a sorted set's reverse
 * order), after a cursor; drops expired ones first.
 */
export const LIST_RUNS: LuaScript = {
  name: "listRuns",
  source: `-- listRuns
-- KEYS[1]  runs by startedAt  KEYS[2] runs by expiry
-- ARGV[1]  unused             ARGV[2] how many        ARGV[3] the cursor's startedAt ('' for none)
-- ARGV[4]  the cursor's runId ARGV[5..] run IDs the caller found gone, to drop
-- Reply: ["OK", runId, startedAt, ...]
${DROP_EXPIRED(5)}
-- Byte order, as the sorted set orders equal scores (Lua's < on strings follows the locale).
local function below(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local want = tonumber(ARGV[2])
local out, got, offset = {'OK'}, 0, 0
local top = ARGV[3] == '' and '+inf' or ARGV[3]
local at = tonumber(ARGV[3])
while got < want do
  local chunk = redis.call('ZREVRANGEBYSCORE', KEYS[1], top, '-inf', 'WITHSCORES', 'LIMIT', offset, want)
  if #chunk == 0 then break end
  for i = 1, #chunk, 2 do
    -- At the cursor's own start, only the IDs below the cursor's come after it.
    if got < want and (not at or tonumber(chunk[i + 1]) < at or below(chunk[i], ARGV[4])) then
      out[#out + 1] = chunk[i]
      out[#out + 1] = chunk[i + 1]
      got = got + 1
    end
  end
  offset = offset + want
end
return cjson.encode(out)
`,
};

/** The whole records of begun calls, for exportRun after it read the run hash. */
export const READ_RECORDS: LuaScript = {
  name: "readRecords",
  readOnly: true,
  source: `-- readRecords
-- KEYS[1..n] record hashes of one run, in begin order
-- ARGV     none
-- Reply: ["OK", then ${RECORD_FIELDS.length} fields per key (${RECORD_FIELDS.join(", ")}),
--   false for an absent field (all of them once a record expired)]
local out = {'OK'}
for i = 1, #KEYS do
  local r = redis.call('HMGET', KEYS[i], ${luaFields(RECORD_FIELDS)})
  for j = 1, ${RECORD_FIELDS.length} do out[#out + 1] = r[j] end
end
return cjson.encode(out)
`,
};

/**
 * The first line Upstash reads as "lock only the script's KEYS" instead of the whole database.
 * Prepended to every writing script's source when `UpstashStore`'s `keyLocking` option is on;
 * stock redis-server refuses it (`ERR Unexpected flag in script shebang: allow-key-locking`).
 */
export const KEY_LOCKING_SHEBANG = "#!lua flags=allow-key-locking\n";

/**
 * The same for a script that never writes: `no-writes` lets Redis run it where writes are
 * refused (over the memory limit, on a replica) and refuses any write it would attempt.
 */
export const KEY_LOCKING_READ_ONLY_SHEBANG = "#!lua flags=no-writes,allow-key-locking\n";

/**
 * A script's source as sent with key locking on: its first line is
 * {@linkcode KEY_LOCKING_READ_ONLY_SHEBANG} for a read-only script,
 * {@linkcode KEY_LOCKING_SHEBANG} otherwise.
 *
 * @param script The script.
 * @returns The source to send.
 */
export function keyLockingSource(script: LuaScript): string {
  return (script.readOnly ? KEY_LOCKING_READ_ONLY_SHEBANG : KEY_LOCKING_SHEBANG) + script.source;
}

/** Every script, for hashing once. */
export const SCRIPTS: readonly LuaScript[] = [
  START_RUN,
  INDEX_RUN,
  LIST_RUNS,
  GET_RUN,
  BEGIN,
  COMPLETE,
  GET,
  END_RUN,
  READ_FACTS,
  LOOKUP_CALL,
  READ_CALLS,
  SEAL_RUN,
  READ_RECORDS,
];

/**
 * A number as a script's ARGV: a plain integer string. Upstash's Lua reads nothing else exactly:
 * its `tonumber` returns nil for "1e+21", "1e308" or "5e-7", which `String()` gives for numbers
 * the store never sends now, and a number past 2^53 would not be the one meant.
 */
export function intArg(value: number): string {
  if (!Number.isSafeInteger(value) || Object.is(value, -0)) {
    throw new RangeError("Invalid number for Redis: expected a safe integer");
  }
  return String(value);
}

/** "No cap" as a plain integer: no count of facts or of their bytes can reach it. */
const NO_CAP = Number.MAX_SAFE_INTEGER;

/** A fact cap as a script's ARGV: `Infinity` as {@linkcode NO_CAP}. */
export function capArg(value: number): string {
  return intArg(value === Number.POSITIVE_INFINITY ? NO_CAP : value);
}

/** Per `keyLocking` value: the scripts as sent; `sentScriptsNow` once they are computed. */
const sentScripts = new Map<boolean, Promise<Map<LuaScript, SentScript>>>();
export const sentScriptsNow = new Map<boolean, Map<LuaScript, SentScript>>();

/**
 * Every script as sent, with or without the key-locking first line, and the SHA-1 of that exact
 * source: computed once per process and option value, with WebCrypto.
 */
export function scriptsFor(keyLocking: boolean): Promise<Map<LuaScript, SentScript>> {
  let scripts = sentScripts.get(keyLocking);
  if (scripts === undefined) {
    scripts = Promise.all(SCRIPTS.map(async (script) => {
      const source = keyLocking ? keyLockingSource(script) : script.source;
      const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(source));
      const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"));
      return [script, { source, sha: hex.join("") }] as const;
    })).then((pairs) => {
      const computed = new Map(pairs);
      sentScriptsNow.set(keyLocking, computed);
      return computed;
    });
    sentScripts.set(keyLocking, scripts);
  }
  return scripts;
}
