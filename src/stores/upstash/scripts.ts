/**
 * The Lua scripts of the Upstash store: one script per transition, so each is atomic and costs
 * one REST round trip.
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
 * - A reply never carries what the caller already knows: `begin` answers `["OK"]`, and
 *   `complete` only the fields its request does not carry.
 * - Numbers arrive as decimal strings and are compared with `tonumber`; they leave as the strings
 *   Redis holds (cjson would print a Lua number with 14 significant digits), so no counter or
 *   timestamp loses digits on the way out.
 * - `cjson.encode` passes UTF-8 bytes through as they are, escapes `"`, `\`, `/` and control
 *   bytes, and turns an empty table into `{}`: every reply table starts with its status, so it is
 *   never empty, and never holds a nil (HMGET gives `false` for an absent field).
 * - TTLs are set once, by the script run that creates a key (`PEXPIRE` after the `HSET`, `SADD`
 *   or `RPUSH` that created it); updates use `HSET` on an existing key, which keeps the remaining
 *   TTL.
 *
 * @module
 */

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
  "createdAt",
  "updatedAt",
  "expiresAt",
] as const;

/**
 * Fields `complete` returns: those of the record its request does not carry. `updatedAt` follows
 * them only when the record was already complete (a retry), as the request's `now` is not it then.
 */
export const COMPLETE_FIELDS = ["toolName", "requestJson", "createdAt", "expiresAt"] as const;

/** Fields `readFacts` returns per row: never the request or the raw response. */
export const FACT_FIELDS = ["toolCallId", "toolName", "evidence", "agentResultJson", "updatedAt"];

/**
 * Lua statements that end a block by replying `["OK", <fields of the hash at key>]`, `false` for
 * an absent field. Inline rather than a helper function: a `local function` is a new closure on
 * every run of the script.
 */
const replyHash = (key: string, fields: readonly string[]) =>
  `local out = redis.call('HMGET', ${key}, ${fields.map((f) => `'${f}'`).join(", ")})
  table.insert(out, 1, 'OK')
  return cjson.encode(out)`;

/** Replies `["OK", field, value, ...]` of a whole hash; for the scripts that read a run. */
const RUN_REPLY = `
local function run_reply(key)
  local out = redis.call('HGETALL', key)
  table.insert(out, 1, 'OK')
  return cjson.encode(out)
end
`;

/** A constant reply: `["<code>"]`. */
const fixed = (name: string) => `'["${name}"]'`;

/** Creates a run, or returns it again for a repeat of the same attempt. */
export const START_RUN: LuaScript = {
  name: "startRun",
  source: `-- startRun
-- KEYS[1]  run hash
-- ARGV[1]  runId          ARGV[2] attemptId     ARGV[3] deadline (epoch ms)
-- ARGV[4]  calls budget   ARGV[5] ttlMs         ARGV[6] now (epoch ms)
-- ARGV[7..] pairs of tool name, tool budget
-- Reply: ["OK", field, value, ...] (the run hash) | ["RUN_ALREADY_EXISTS"]
${RUN_REPLY}
local attempt = redis.call('HGET', KEYS[1], 'attemptId')
if attempt then
  if attempt ~= ARGV[2] then return ${fixed("RUN_ALREADY_EXISTS")} end
  return run_reply(KEYS[1])
end
redis.call('HSET', KEYS[1], 'runId', ARGV[1], 'status', 'ACTIVE', 'deadline', ARGV[3],
  'startedAt', ARGV[6], 'calls', ARGV[4], 'used', '0', 'attemptId', ARGV[2])
for i = 7, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'b:' .. ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return run_reply(KEYS[1])
`,
};

/** Reads a run; touches no TTL. */
export const GET_RUN: LuaScript = {
  name: "getRun",
  readOnly: true,
  source: `-- getRun
-- KEYS[1]  run hash
-- ARGV     none
-- Reply: ["OK", field, value, ...] | [] when absent
${RUN_REPLY}
if redis.call('EXISTS', KEYS[1]) == 0 then return '[]' end
return run_reply(KEYS[1])
`,
};

/**
 * The checks of `Store.begin` in MemoryStore's order, then the create, all or nothing. Six Redis
 * calls when it creates a record (eight on the run's first begin), and none of its refusals has a
 * write to undo.
 */
export const BEGIN: LuaScript = {
  name: "begin",
  source: `-- begin
-- KEYS[1]  run hash       KEYS[2] record hash   KEYS[3] set of the run's begun tool call IDs
-- ARGV[1]  runId          ARGV[2] toolCallId    ARGV[3] toolName     ARGV[4] requestJson
-- ARGV[5]  attemptId      ARGV[6] ttlMs         ARGV[7] now          ARGV[8] expiresAt (now + ttlMs)
-- Reply: ["OK"] when created (the caller knows every field)
--      | ["OK", <${RECORD_FIELDS.length} record fields>] for a repeat of the same attempt
--      | ["RUN_NOT_FOUND" | "RUN_INACTIVE" | "DEADLINE_EXCEEDED" | "DUPLICATE_TOOL_CALL"
--         | "TOOL_BUDGET_EXHAUSTED" | "RUN_BUDGET_EXHAUSTED"]
local run = redis.call('HMGET', KEYS[1], 'status', 'deadline', 'calls', 'used',
  'b:' .. ARGV[3], 'u:' .. ARGV[3])
-- startRun gives every run hash a status: none means no run.
if not run[1] then return ${fixed("RUN_NOT_FOUND")} end
-- Every record hash has an attemptId: none means no record.
local attempt = redis.call('HGET', KEYS[2], 'attemptId')
-- A client retry of a begin that already ran: the same begin, not a duplicate.
if attempt == ARGV[5] then
  ${replyHash("KEYS[2]", RECORD_FIELDS)}
end
if run[1] ~= 'ACTIVE' then return ${fixed("RUN_INACTIVE")} end
if tonumber(ARGV[7]) >= tonumber(run[2]) then return ${fixed("DEADLINE_EXCEEDED")} end
if attempt then return ${fixed("DUPLICATE_TOOL_CALL")} end
local over = false
if run[5] and tonumber(run[6] or '0') >= tonumber(run[5]) then
  over = ${fixed("TOOL_BUDGET_EXHAUSTED")}
elseif tonumber(run[4]) >= tonumber(run[3]) then
  over = ${fixed("RUN_BUDGET_EXHAUSTED")}
end
-- A key stays used for the life of its run, also after its record expired, and that check
-- comes before the budgets. Over a budget, only a read tells which refusal it is; otherwise
-- SADD is the check and the mark at once, so no refusal ever has a write to undo.
if over then
  if redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 1 then
    return ${fixed("DUPLICATE_TOOL_CALL")}
  end
  return over
end
if redis.call('SADD', KEYS[3], ARGV[2]) == 0 then return ${fixed("DUPLICATE_TOOL_CALL")} end
redis.call('HSET', KEYS[2], 'runId', ARGV[1], 'toolCallId', ARGV[2], 'toolName', ARGV[3],
  'status', 'PROJECTING', 'requestJson', ARGV[4], 'attemptId', ARGV[5],
  'createdAt', ARGV[7], 'updatedAt', ARGV[7], 'expiresAt', ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
-- The set expires with its run: its TTL is set once, to the run's remaining TTL, when the
-- run's first begin creates it. Every begin that gets here adds to the set and counts 'used'
-- in the same script, so 'used' is '0' exactly when the SADD above created the set.
if run[4] == '0' then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
end
-- Both counters in one write; '%d' prints them exactly (they stay far below 2^53).
redis.call('HSET', KEYS[1], 'used', string.format('%d', tonumber(run[4]) + 1),
  'u:' .. ARGV[3], string.format('%d', tonumber(run[6] or '0') + 1))
return ${fixed("OK")}
`,
};

/**
 * PROJECTING -> READY | ERROR for the attempt that began it; appends to the progress index
 * first, so a run cut off part-way never leaves a READY record outside the index.
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
-- Reply: ["OK", ${COMPLETE_FIELDS.join(", ")}] when completed now (updatedAt is ARGV[11])
--      | ["OK", ${COMPLETE_FIELDS.join(", ")}, updatedAt] for a repeat of the same complete
--      | ["RECORD_EXPIRED"] | ["ILLEGAL_TRANSITION"]
-- Everything else of the record is in the request: the script checked that it is what is stored.
local r = redis.call('HMGET', KEYS[1], 'attemptId', 'status', ${
    COMPLETE_FIELDS.map((f) => `'${f}'`).join(", ")
  })
-- Absent (expired): never re-created here.
if not r[1] then return ${fixed("RECORD_EXPIRED")} end
if r[1] ~= ARGV[2] or ARGV[3] ~= '1' then return ${fixed("ILLEGAL_TRANSITION")} end
local status, evidence, code, raw, agent = ARGV[4], false, false, false, false
if ARGV[7] == '1' then raw = ARGV[8] end
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
local reply = {'OK', r[3], r[4], r[5], r[6]}
if r[2] ~= 'PROJECTING' then
  -- A retry of this very complete returns the record again; anything else is refused.
  local d = redis.call('HMGET', KEYS[1], 'evidence', 'errorCode', 'rawJson', 'agentResultJson',
    'updatedAt')
  if r[2] == status and d[1] == evidence and d[2] == code and d[3] == raw and d[4] == agent then
    reply[6] = d[5]
    return cjson.encode(reply)
  end
  return ${fixed("ILLEGAL_TRANSITION")}
end
-- The index first, then the record. Redis does not undo a script's earlier writes when a later
-- command fails (Upstash refuses writes past the storage quota), so a run cut off in between
-- leaves an index entry whose record is still PROJECTING, which readFacts skips; the other
-- order could leave a READY record that the facts miss. 'indexing' (set before the append)
-- tells a repeat that an earlier run may have appended already: only then does LPOS look, so
-- the entry is appended once.
local appended = redis.call('HSETNX', KEYS[1], 'indexing', '1') == 0
  and redis.call('LPOS', KEYS[3], ARGV[1])
if appended then
  -- Cut off between creating the index and setting its TTL: set it now, still once.
  if redis.call('PTTL', KEYS[3]) == -1 then
    local ttl = redis.call('PTTL', KEYS[2])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
  end
-- Indexed only while the run lives. The index expires with its run: its TTL is set once, to
-- the run's remaining TTL, when the run's first complete creates it, so while it exists its run
-- does and RPUSHX (which never creates) is enough. Otherwise, when the run lives (PTTL is not
-- -2), RPUSH creates it.
elseif redis.call('RPUSHX', KEYS[3], ARGV[1]) == 0 then
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl ~= -2 then
    redis.call('RPUSH', KEYS[3], ARGV[1])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
  end
end
-- HSET on an existing key keeps its TTL.
local set = {'status', status, 'evidence', evidence, 'updatedAt', ARGV[11]}
if code then set[#set + 1] = 'errorCode'; set[#set + 1] = code end
if raw then set[#set + 1] = 'rawJson'; set[#set + 1] = raw end
if agent then set[#set + 1] = 'agentResultJson'; set[#set + 1] = agent end
redis.call('HSET', KEYS[1], unpack(set))
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
if redis.call('EXISTS', KEYS[1]) == 0 then return '[]' end
${replyHash("KEYS[1]", RECORD_FIELDS)}
`,
};

/**
 * Ends a run (idempotent) and returns it with its progress index. The first end fixes the facts:
 * it keeps the index's length in the run hash (`endedProgress`), and every end returns that
 * prefix, so a call that completes after the first end is recorded (and indexed) but never listed.
 */
export const END_RUN: LuaScript = {
  name: "endRun",
  source: `-- endRun
-- KEYS[1]  run hash       KEYS[2] progress list
-- ARGV[1]  now
-- Reply: ["OK", "<n>", <n run hash items: field, value, ...>, <tool call IDs in order>]
--      | ["RUN_NOT_FOUND"]
if redis.call('EXISTS', KEYS[1]) == 0 then return ${fixed("RUN_NOT_FOUND")} end
if redis.call('HGET', KEYS[1], 'status') == 'ACTIVE' then
  redis.call('HSET', KEYS[1], 'status', 'ENDED', 'endedAt', ARGV[1],
    'endedProgress', string.format('%d', redis.call('LLEN', KEYS[2])))
end
local kept = redis.call('HGET', KEYS[1], 'endedProgress')
local out = redis.call('HGETALL', KEYS[1])
local n = #out
local ids = {}
if not kept then
  -- Ended before endedProgress existed: the whole index, as then.
  ids = redis.call('LRANGE', KEYS[2], 0, -1)
elseif kept ~= '0' then
  ids = redis.call('LRANGE', KEYS[2], 0, tonumber(kept) - 1)
end
for i = 1, #ids do out[n + i] = ids[i] end
table.insert(out, 1, tostring(n))
table.insert(out, 1, 'OK')
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
-- Reply: ["OK", "<omitted>", then ${FACT_FIELDS.length} fields per row: ${FACT_FIELDS.join(", ")}]
-- Only READY records of ARGV[1] with evidence EVIDENCE_FOUND or NO_EVIDENCE become rows.
local max_facts, max_bytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local rows, bytes, omitted = 0, 0, 0
local out = {'OK', '0'}
for i = 1, #KEYS do
  local r = redis.call('HMGET', KEYS[i], 'runId', 'status', 'evidence', 'agentResultJson',
    'toolCallId', 'toolName', 'updatedAt')
  if r[1] == ARGV[1] and r[2] == 'READY' and r[4] and r[5] and r[6] and r[7]
    and (r[3] == 'EVIDENCE_FOUND' or r[3] == 'NO_EVIDENCE') then
    local size = #r[4]
    if rows >= max_facts or bytes + size > max_bytes then
      omitted = omitted + 1
    else
      rows, bytes = rows + 1, bytes + size
      local n = #out
      out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = r[5], r[6], r[3], r[4], r[7]
    end
  end
end
out[2] = tostring(omitted)
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
  GET_RUN,
  BEGIN,
  COMPLETE,
  GET,
  END_RUN,
  READ_FACTS,
];
