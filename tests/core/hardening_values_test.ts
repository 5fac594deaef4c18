/**
 * Hostile values against `ToolBoundary.invoke`, on MemoryStore and on UpstashStore (real
 * redis-server behind the Upstash-compatible endpoint): hidden and inherited `toJSON`, getters
 * that throw or change, Proxies whose traps throw or lie, envelopes whose fields throw, values
 * changed after they were read. `invoke` must resolve with the stage's code, never throw; a
 * begun record must end READY or ERROR; the tool, `authorize`, the projector and the agent must
 * each see exactly what was recorded; no canary may reach a result.
 *
 * RELIABILITY_RUNS scales the generated cases on MemoryStore (default 500 per stage),
 * RELIABILITY_UPSTASH_RUNS on UpstashStore (default 60 per stage).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import {
  type BoundaryEvent,
  type BoundaryResult,
  defineTool,
  ERROR_MESSAGES,
  type ErrorCode,
  ToolBoundary,
  type ToolBoundaryOptions,
} from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { checkJson, snapshotJson } from "../../src/core/json.ts";
import { validateProjection } from "../../src/core/progress.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import {
  hostileJsonArb,
  type HostilePlan,
  type HostileValue,
  makeHostile,
} from "../reliability/arbitraries.ts";
import {
  answered,
  check,
  checkEqual,
  envInt,
  type Figures,
  figures,
  report,
} from "../reliability/figures.ts";
import { startSharedUpstashFixture } from "../support/upstash_fixture.ts";

const RUNS = envInt("RELIABILITY_RUNS", 500);
const UPSTASH_RUNS = envInt("RELIABILITY_UPSTASH_RUNS", 60);
const LATER = `${CANARY_SECRET} (a later read)`;

const thrower = (what: string) => () => {
  throw new Error(`${CANARY_SECRET} thrown by ${what}`);
};
const hiddenToJSON = <T extends object>(value: T): T =>
  Object.defineProperty(value, "toJSON", { enumerable: false, value: thrower("toJSON") });
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
/** 2^60 paths through 60 shared objects: a walk must stop long before it visits them all. */
const sharedBomb = () => {
  let value: unknown = { leaf: "x" };
  for (let i = 0; i < 60; i++) value = { a: value, b: value };
  return value;
};
class Subarray extends Array {}
const sparse = () => {
  const array = [1, 2];
  array.length = 3;
  return array;
};

/** JSON data as a snapshot must record it (as JSON text would: -0 is 0). */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

// ---------------------------------------------------------------------------------------------
// snapshotJson itself

Deno.test("snapshotJson() reads each property once and makes the text from its own copy", () => {
  let reads = 0;
  const live = {
    get q() {
      return reads++ === 0 ? "first" : LATER;
    },
    list: [1, -0, { deep: true }],
  };
  const snapshot = snapshotJson(live, 64);
  assert.ok("json" in snapshot);
  assert.equal(reads, 1);
  assert.equal(snapshot.json, '{"q":"first","list":[1,0,{"deep":true}]}');
  assert.deepEqual(snapshot.value, JSON.parse(snapshot.json));
  assert.equal(Object.is((snapshot.value as { list: number[] }).list[1], 0), true, "-0 is 0");
  assert.notEqual(snapshot.value, live);
  (live.list[2] as { deep: boolean }).deep = false;
  assert.deepEqual((snapshot.value as { list: unknown[] }).list[2], { deep: true }, "a copy");
  // An own "__proto__" key stays an own key of the copy, and nothing is polluted.
  const own = JSON.parse('{"__proto__":{"polluted":1},"a":1}');
  const copied = snapshotJson(own, 8);
  assert.ok("value" in copied);
  assert.equal(copied.json, '{"__proto__":{"polluted":1},"a":1}');
  assert.equal(Object.getPrototypeOf(copied.value), Object.prototype);
  assert.deepEqual(Object.keys(copied.value as object), ["__proto__", "a"]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  // Null-prototype objects are copied as plain objects: what JSON.parse of the text gives.
  const bare = Object.assign(Object.create(null), { a: 1 });
  assert.deepEqual(snapshotJson(bare, 8), { json: '{"a":1}', value: { a: 1 } });
});

Deno.test("snapshotJson() refuses what JSON.stringify would drop or rewrite, and what throws", () => {
  const inheritedToJSON = Object.create({ toJSON: () => "x" });
  const lyingProxy = new Proxy(Object.create({ toJSON: thrower("toJSON") }), {
    getPrototypeOf: () => Object.prototype,
  });
  const lyingArray = new Proxy(
    Object.setPrototypeOf([1], Object.create(Array.prototype, { toJSON: { value: () => 1 } })),
    { getPrototypeOf: () => Array.prototype },
  );
  const cases: [string, unknown, string][] = [
    ["a hidden (non-enumerable) toJSON", hiddenToJSON({ a: 1 }), "NOT_JSON"],
    ["an enumerable toJSON function", { toJSON: () => 1 }, "NOT_JSON"],
    ["a toJSON on the prototype chain", inheritedToJSON, "NOT_JSON"],
    ["a Proxy hiding an inherited toJSON behind a plain prototype", lyingProxy, "NOT_JSON"],
    ["an array Proxy hiding an inherited toJSON", lyingArray, "NOT_JSON"],
    ["a hidden toJSON on an array", hiddenToJSON([1]), "NOT_JSON"],
    ["a symbol key", { a: 1, [Symbol("s")]: 2 }, "NOT_JSON"],
    [
      "a non-enumerable symbol key",
      Object.defineProperty({}, Symbol("s"), { value: 1 }),
      "NOT_JSON",
    ],
    ["a non-enumerable property", Object.defineProperty({ a: 1 }, "b", { value: 2 }), "NOT_JSON"],
    ["an extra property on an array", Object.assign([1], { extra: 2 }), "NOT_JSON"],
    ["a hidden property on an array", Object.defineProperty([1], "x", { value: 2 }), "NOT_JSON"],
    ["a symbol key on an array", Object.assign([1], { [Symbol("s")]: 2 }), "NOT_JSON"],
    ["a regular-expression match", "ab".match(/a/), "NOT_JSON"],
    ["an Array subclass", Subarray.from([1, 2]), "NOT_JSON"],
    ["a sparse array", [1, , 3], "NOT_JSON"],
    ["a trailing hole", sparse(), "NOT_JSON"],
    ["a throwing getter", {
      get a() {
        return thrower("a getter")();
      },
    }, "NOT_JSON"],
    ["a Proxy whose ownKeys throws", new Proxy({}, { ownKeys: thrower("ownKeys") }), "NOT_JSON"],
    ["a Proxy whose get throws", new Proxy({ a: 1 }, { get: thrower("get") }), "NOT_JSON"],
    [
      "a Proxy whose getOwnPropertyDescriptor throws",
      new Proxy({ a: 1 }, { getOwnPropertyDescriptor: thrower("getOwnPropertyDescriptor") }),
      "NOT_JSON",
    ],
    [
      "a Proxy whose getPrototypeOf throws",
      new Proxy({}, { getPrototypeOf: thrower("getPrototypeOf") }),
      "NOT_JSON",
    ],
    [
      "a Proxy listing a key that does not exist",
      new Proxy({ a: 1 }, { ownKeys: () => ["a", "ghost"] }),
      "NOT_JSON",
    ],
    [
      "an array Proxy answering a length that is not a number",
      new Proxy([1], { get: (t, k) => (k === "length" ? { valueOf: thrower("valueOf") } : t[0]) }),
      "NOT_JSON",
    ],
    ["a revoked Proxy", revoked(), "NOT_JSON"],
    ["a Date", new Date(0), "NOT_JSON"],
    ["a boxed string", new String("s"), "NOT_JSON"],
    ["undefined in an array", [undefined], "NOT_JSON"],
    ["NaN", { n: Number.NaN }, "NOT_JSON"],
    ["BigInt", { n: 1n }, "NOT_JSON"],
  ];
  for (const [name, value, problem] of cases) {
    const snapshot = snapshotJson(value, 64);
    assert.equal("problem" in snapshot && snapshot.problem, problem, name);
    assert.equal(checkJson(value, 64), problem, `checkJson: ${name}`);
  }
  const grows = {
    get a() {
      Object.defineProperty(grows, "added", { value: 1, enumerable: true });
      return 1;
    },
  };
  assert.equal("problem" in snapshotJson(grows, 8), true, "a getter that adds a property");
  // A getter that gives Object.prototype a toJSON while it is read: JSON.stringify would call
  // it on the copy, so the text would not be the copy's. An array's element is read after the
  // array's own toJSON check, so only a check after the walk sees it.
  for (
    const [name, make] of [
      ["an object's getter", (install: () => void) => ({
        get a() {
          install();
          return 1;
        },
      })],
      ["an array element's getter", (install: () => void) => ({
        x: Object.defineProperty([1, 2], 1, {
          get() {
            install();
            return 2;
          },
          enumerable: true,
        }),
      })],
    ] as const
  ) {
    for (const proto of [Object.prototype, Array.prototype]) {
      const polluted = make(() =>
        Object.defineProperty(proto, "toJSON", {
          value: () => "rewritten",
          configurable: true,
        })
      );
      try {
        const snapshot = snapshotJson(polluted, 8);
        assert.equal("problem" in snapshot && snapshot.problem, "NOT_JSON", name);
      } finally {
        delete (proto as { toJSON?: unknown }).toJSON;
      }
    }
  }
  // What a throwing read threw is kept for the harness's logs.
  const thrown = snapshotJson(new Proxy({}, { ownKeys: thrower("ownKeys") }), 8);
  assert.ok("error" in thrown && String(thrown.error).includes("ownKeys"));
});

Deno.test("snapshotJson() stops shared sub-objects at maxLength and cycles at maxDepth", () => {
  const bomb = snapshotJson(sharedBomb(), 100, 65_536);
  assert.equal("problem" in bomb && bomb.problem, "TOO_LARGE");
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(checkJson(cyclic, 512), "TOO_DEEP");
  // The bound is a lower bound of the text's length: data that fits is never refused by it.
  const exact = { s: "x".repeat(100) };
  const length = JSON.stringify(exact).length;
  assert.equal("json" in snapshotJson(exact, 8, length), true);
  assert.equal(
    "json" in snapshotJson({ s: "日本" }, 8, JSON.stringify({ s: "日本" }).length),
    true,
  );
});

Deno.test("snapshotJson() stays right when a getter takes another snapshot while it is read", () => {
  const inner = { n: 1 };
  const outer = {
    get a() {
      assert.equal(checkJson(hiddenToJSON({}), 8), "NOT_JSON");
      assert.deepEqual(snapshotJson(inner, 8), { json: '{"n":1}', value: { n: 1 } });
      return "a";
    },
    b: Object.assign([1], { extra: 1 }),
  };
  assert.equal(checkJson(outer, 8), "NOT_JSON");
  const fine = {
    get a() {
      snapshotJson(sharedBomb(), 100, 10); // TOO_LARGE inside must not leak out
      return "a";
    },
  };
  assert.deepEqual(snapshotJson(fine, 8, 1_000), { json: '{"a":"a"}', value: { a: "a" } });
});

Deno.test("snapshotJson() accepts exactly the generated values whose first read is plain data", () => {
  const f = figures("hardening-snapshot", "none");
  fc.assert(
    fc.property(hostileJsonArb(fc.jsonValue({ maxDepth: 3 })), ({ data, plan }) => {
      f.cases++;
      const hostile = makeHostile(data, plan, CANARY_SECRET);
      const snapshot = snapshotJson(hostile.value, 64);
      if (hostile.refused) {
        check(f, "problem" in snapshot, () => `accepted ${hostile.applied.join(",")}`);
      } else {
        check(f, "json" in snapshot, () => `refused ${hostile.applied.join(",")}`);
        if (!("json" in snapshot)) return;
        checkEqual(f, snapshot.value, plain(data), "the copy is the data");
        checkEqual(f, snapshot.json, JSON.stringify(data), "the text is the data's");
        check(f, !snapshot.json.includes(CANARY_SECRET), "no later read recorded");
      }
    }),
    { numRuns: RUNS * 4 },
  );
  report(f, { runs: RUNS * 4 });
});

Deno.test("checkJson() and validateProjection() never throw, whatever they are given", () => {
  const bad = [
    hiddenToJSON({ evidence: "NO_EVIDENCE", scope: "s", content: null }),
    new Proxy({}, { ownKeys: thrower("ownKeys") }),
    new Proxy({ evidence: "NO_EVIDENCE", scope: "s", content: 1 }, { get: thrower("get") }),
    revoked(),
    { evidence: "NO_EVIDENCE", scope: "s", content: hiddenToJSON([]) },
    { evidence: "NO_EVIDENCE", scope: "s", content: 1, [Symbol("s")]: 1 },
  ];
  for (const value of bad) {
    assert.notEqual(checkJson(value, 64), null);
    assert.equal(validateProjection(value, 64), null);
  }
  // A valid projection comes back as a fresh copy.
  const projection = { evidence: "EVIDENCE_FOUND", scope: "s", content: { a: [1] } };
  const checked = validateProjection(projection, 64);
  assert.deepEqual(checked, projection);
  assert.notEqual(checked?.content, projection.content);
});

// ---------------------------------------------------------------------------------------------
// invoke on both stores

interface OpenStore {
  store: Store;
  close(): Promise<void>;
}

const STORES: { name: string; runs: number; open(): Promise<OpenStore> }[] = [
  {
    name: "MemoryStore",
    runs: RUNS,
    open: () => Promise.resolve({ store: new MemoryStore(), close: () => Promise.resolve() }),
  },
  {
    name: "UpstashStore",
    runs: UPSTASH_RUNS,
    open: async () => {
      const fixture = await startSharedUpstashFixture();
      return {
        store: new UpstashStore({ redis: fixture.createRedis() }),
        close: () => fixture.stop(),
      };
    },
  },
];

/** What the tools are told to do next, and what each step of a call saw. */
interface Slot {
  raw: unknown;
  projection: unknown;
  asyncRaw: boolean;
  asyncProjection: boolean;
  afterReturn: ((raw: unknown) => void) | null;
  duringAuthorize: (() => void) | null;
}

function system(store: Store, options: Partial<ToolBoundaryOptions> = {}) {
  const slot: Slot = {
    raw: null,
    projection: null,
    asyncRaw: false,
    asyncProjection: false,
    afterReturn: null,
    duringAuthorize: null,
  };
  const seen = {
    executed: [] as unknown[],
    projectedRaw: [] as unknown[],
    projectedInput: [] as unknown[],
    authorized: [] as unknown[],
  };
  const events: BoundaryEvent[] = [];
  // What a step saw, copied when it saw it: a live hostile value would answer later reads with
  // the canary, and a Proxy or getter would be read again here.
  const copy = (value: unknown) => JSON.parse(JSON.stringify(value));
  const none = { evidence: "NO_EVIDENCE" as const, scope: "echo", content: null };
  const tools = [
    defineTool({
      name: "input_echo",
      readOnly: true,
      execute: (input) => {
        seen.executed.push(copy(input));
        return { ok: true };
      },
      project: () => none,
    }),
    defineTool({
      name: "schema_echo",
      readOnly: true,
      input: v.pipe(
        v.object({ q: v.string() }),
        v.transform((value) => (value.q === "hostile" ? hiddenToJSON({ ...value }) : value)),
      ),
      execute: (input) => {
        seen.executed.push(copy(input));
        return { ok: true };
      },
      project: () => none,
    }),
    defineTool({
      name: "raw_hostile",
      readOnly: true,
      execute: () => {
        const raw = slot.raw;
        slot.afterReturn?.(raw);
        return slot.asyncRaw ? Promise.resolve(raw) : raw;
      },
      project: (raw, ctx) => {
        seen.projectedRaw.push(copy(raw));
        seen.projectedInput.push(copy(ctx.input));
        return { evidence: "EVIDENCE_FOUND", scope: "raw", content: null };
      },
    }),
    defineTool({
      name: "projection_hostile",
      readOnly: true,
      execute: () => ({ n: 1 }),
      project: () => {
        const projection = slot.projection as never;
        return slot.asyncProjection ? Promise.resolve(projection) : projection;
      },
    }),
  ];
  const boundary = new ToolBoundary({
    store,
    tools,
    authorize: async (_run, call) => {
      seen.authorized.push(copy(call.input));
      if (slot.duringAuthorize !== null) {
        await Promise.resolve();
        slot.duringAuthorize();
      }
      return true;
    },
    observe: (event) => events.push(event),
    ...options,
  });
  return { boundary, slot, seen, events };
}

type System = ReturnType<typeof system>;

let callSeq = 0;

/**
 * One call in a fresh run with every invariant: it resolves (never rejects), the code, the
 * record is final (or absent when refused before begin), no canary in the result, the facts
 * agree with the result.
 */
async function call(
  f: Figures,
  sys: System,
  toolName: string,
  input: unknown,
  expected: ErrorCode | "READY",
  at: string,
  beforeAwait?: () => void,
) {
  const { boundary } = sys;
  const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
  const toolCallId = `call_${callSeq++}`;
  f.cases++;
  let invoked: Promise<BoundaryResult>;
  try {
    invoked = boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
  } catch (error) {
    assert.fail(`${at}: invoke threw synchronously: ${error}`);
  }
  beforeAwait?.();
  let result: BoundaryResult;
  try {
    result = await answered(f, at, invoked);
  } catch (error) {
    assert.fail(`${at}: invoke rejected: ${error}`);
  }
  const text = JSON.stringify(result);
  check(f, !text.includes(CANARY_SECRET), () => `${at}: canary in the result: ${text}`);
  if (expected === "READY") {
    check(f, result.status === "READY", () => `${at}: expected READY, got ${text}`);
  } else {
    checkEqual(
      f,
      result,
      { status: "ERROR", toolCallId, code: expected, message: ERROR_MESSAGES[expected] },
      at,
    );
  }
  const record = await boundary.inspect(run.runId, toolCallId);
  check(f, record?.status !== "PROJECTING", `${at}: record left PROJECTING`);
  const facts = await boundary.endRun(run);
  if (result.status === "READY") {
    checkEqual(f, record?.status, "READY", `${at}: record READY`);
    checkEqual(f, record?.agentResult, {
      evidence: result.evidence,
      scope: result.scope,
      content: result.content,
    }, `${at}: the agent got the recorded result`);
    checkEqual(f, facts.map((fact) => [fact.evidence, fact.scope, fact.content]), [[
      result.evidence,
      result.scope,
      result.content,
    ]], `${at}: the fact is the recorded result`);
  } else {
    checkEqual(f, facts, [], `${at}: no fact`);
  }
  return { result, record, toolCallId, run };
}

/** Codes and records of named hostile values at each stage. */
async function namedStages(f: Figures, store: Store) {
  const sys = system(store);
  const inputs: [string, () => unknown, ErrorCode][] = [
    ["a hidden throwing toJSON", () => hiddenToJSON({ q: "x" }), "INVALID_INPUT"],
    ["an enumerable toJSON", () => ({ q: "x", toJSON: () => ({}) }), "INVALID_INPUT"],
    ["a throwing getter", () => ({
      get q() {
        return thrower("a getter")();
      },
    }), "INVALID_INPUT"],
    [
      "a Proxy whose ownKeys throws",
      () => new Proxy({}, { ownKeys: thrower("ownKeys") }),
      "INVALID_INPUT",
    ],
    [
      "a Proxy whose get throws",
      () => new Proxy({ q: 1 }, { get: thrower("get") }),
      "INVALID_INPUT",
    ],
    [
      "a Proxy whose getOwnPropertyDescriptor throws",
      () => new Proxy({ q: 1 }, { getOwnPropertyDescriptor: thrower("descriptor") }),
      "INVALID_INPUT",
    ],
    [
      "a Proxy whose getPrototypeOf throws",
      () => new Proxy({}, { getPrototypeOf: thrower("getPrototypeOf") }),
      "INVALID_INPUT",
    ],
    [
      "a plain-looking Proxy over a prototype with toJSON",
      () =>
        new Proxy(Object.create({ toJSON: thrower("toJSON") }), {
          getPrototypeOf: () => Object.prototype,
        }),
      "INVALID_INPUT",
    ],
    ["a revoked Proxy", revoked, "INVALID_INPUT"],
    ["a symbol key", () => ({ q: "x", [Symbol(CANARY_SECRET)]: 1 }), "INVALID_INPUT"],
    [
      "a non-enumerable property",
      () => Object.defineProperty({ q: "x" }, "h", { value: CANARY_SECRET }),
      "INVALID_INPUT",
    ],
    ["an extra property on an array", () => ({ q: Object.assign([1], { x: 1 }) }), "INVALID_INPUT"],
    ["an Array subclass", () => ({ q: Subarray.from([1]) }), "INVALID_INPUT"],
    ["a sparse array", () => ({ q: sparse() }), "INVALID_INPUT"],
    ["2^60 paths through shared objects", sharedBomb, "REQUEST_TOO_LARGE"],
  ];
  for (const [name, make, code] of inputs) {
    const before = sys.seen.executed.length;
    const { record } = await call(f, sys, "input_echo", make(), code, `input: ${name}`);
    checkEqual(f, record, null, `input: ${name}: no record`);
    checkEqual(f, sys.seen.executed.length, before, `input: ${name}: the tool did not run`);
  }
  // With a schema: the schema sees a plain copy, and what it returns is read once again.
  const transformed = await call(
    f,
    sys,
    "schema_echo",
    { q: "hostile" },
    "INVALID_INPUT",
    "schema",
  );
  checkEqual(f, transformed.record, null, "schema: a hostile schema output is refused");
  let reads = 0;
  const viaSchema = await call(
    f,
    sys,
    "schema_echo",
    {
      get q() {
        return reads++ === 0 ? "first" : LATER;
      },
      dropped: hiddenToJSON({}),
    },
    "INVALID_INPUT",
    "schema: a hidden toJSON the schema would have dropped",
  );
  checkEqual(f, viaSchema.record, null, "schema: the input is read before the schema");
  const schemaOk = await call(
    f,
    sys,
    "schema_echo",
    {
      get q() {
        return "typed";
      },
      extra: 1,
    },
    "READY",
    "schema: a getter",
  );
  checkEqual(f, schemaOk.record?.request, { q: "typed" }, "schema: its output is recorded");
  checkEqual(f, sys.seen.executed.at(-1), { q: "typed" }, "schema: the tool got its output");

  const raws: [string, () => unknown, ErrorCode, boolean?][] = [
    ["a hidden throwing toJSON", () => hiddenToJSON({ hits: [] }), "SERIALIZATION_FAILED"],
    [
      "a hidden throwing toJSON, resolved by a promise",
      () => hiddenToJSON({}),
      "SERIALIZATION_FAILED",
      true,
    ],
    [
      "a toJSON on the prototype chain",
      () => Object.create({ toJSON: () => 1 }),
      "SERIALIZATION_FAILED",
    ],
    [
      "a plain-looking Proxy over a prototype with toJSON",
      () =>
        new Proxy(Object.create({ toJSON: thrower("toJSON") }), {
          getPrototypeOf: () => Object.prototype,
        }),
      "SERIALIZATION_FAILED",
    ],
    ["a throwing `then` getter", () => ({
      get then() {
        return thrower("then")();
      },
    }), "SERIALIZATION_FAILED"],
    [
      "a Proxy whose get throws",
      () => new Proxy({ a: 1 }, { get: thrower("get") }),
      "SERIALIZATION_FAILED",
    ],
    [
      "a Proxy whose get throws, resolved by a promise",
      () => new Proxy({ a: 1 }, { get: thrower("get") }),
      "EXECUTION_FAILED", // resolving the promise reads `then` first: the tool's promise rejects
      true,
    ],
    [
      "a Proxy whose ownKeys throws",
      () => new Proxy({}, { ownKeys: thrower("ownKeys") }),
      "SERIALIZATION_FAILED",
    ],
    ["a revoked Proxy", revoked, "SERIALIZATION_FAILED"],
    ["a symbol key", () => ({ [Symbol(CANARY_SECRET)]: 1 }), "SERIALIZATION_FAILED"],
    [
      "a non-enumerable property",
      () => Object.defineProperty({}, "h", { value: 1 }),
      "SERIALIZATION_FAILED",
    ],
    [
      "an extra property on an array",
      () => Object.assign([1], { x: CANARY_SECRET }),
      "SERIALIZATION_FAILED",
    ],
    ["an Array subclass", () => Subarray.from([1]), "SERIALIZATION_FAILED"],
    ["a sparse array", sparse, "SERIALIZATION_FAILED"],
    ["2^60 paths through shared objects", sharedBomb, "RESULT_TOO_LARGE"],
  ];
  for (const [name, make, code, async = false] of raws) {
    sys.slot.raw = make();
    sys.slot.asyncRaw = async;
    const before = sys.seen.projectedRaw.length;
    const { record } = await call(f, sys, "raw_hostile", {}, code, `raw: ${name}`);
    checkEqual(f, [record?.status, record?.errorCode], ["ERROR", code], `raw: ${name}: record`);
    check(f, record?.raw === undefined, `raw: ${name}: no raw stored`);
    checkEqual(f, sys.seen.projectedRaw.length, before, `raw: ${name}: no projector call`);
  }
  sys.slot.asyncRaw = false;

  const ok = { evidence: "EVIDENCE_FOUND", scope: "s", content: null };
  const projections: [string, () => unknown, ErrorCode, boolean?][] = [
    ["a hidden throwing toJSON", () => hiddenToJSON({ ...ok }), "INVALID_PROJECTION"],
    [
      "a hidden toJSON in content",
      () => ({ ...ok, content: hiddenToJSON({}) }),
      "INVALID_PROJECTION",
    ],
    [
      "a Proxy whose get throws",
      () => new Proxy({ ...ok }, { get: thrower("get") }),
      "INVALID_PROJECTION",
    ],
    [
      "a Proxy whose get throws, resolved by a promise",
      () => new Proxy({ ...ok }, { get: thrower("get") }),
      "PROJECTION_FAILED",
      true,
    ],
    [
      "a Proxy whose ownKeys throws",
      () => new Proxy({}, { ownKeys: thrower("ownKeys") }),
      "INVALID_PROJECTION",
    ],
    ["a symbol key", () => ({ ...ok, [Symbol("s")]: 1 }), "INVALID_PROJECTION"],
    ["a throwing `then` getter", () => ({
      ...ok,
      get then() {
        return thrower("then")();
      },
    }), "INVALID_PROJECTION"],
    ["a throwing evidence getter", () => ({
      ...ok,
      get evidence() {
        return thrower("evidence")();
      },
    }), "INVALID_PROJECTION"],
    ["2^60 paths in content", () => ({ ...ok, content: sharedBomb() }), "RESULT_TOO_LARGE"],
  ];
  for (const [name, make, code, async = false] of projections) {
    sys.slot.projection = make();
    sys.slot.asyncProjection = async;
    const { record } = await call(f, sys, "projection_hostile", {}, code, `projection: ${name}`);
    checkEqual(f, [record?.status, record?.errorCode], ["ERROR", code], `projection: ${name}`);
    checkEqual(f, record?.raw, { n: 1 }, `projection: ${name}: the raw response is kept`);
  }
  sys.slot.asyncProjection = false;
  // Exception text reached the observer, and only the observer.
  check(
    f,
    sys.events.some((event) => "error" in event && String(event.error).includes(CANARY_SECRET)),
    "the observer got the exceptions",
  );
}

/** Envelopes whose fields throw, or that are Proxies: each field's own code, no record. */
async function namedEnvelopes(f: Figures, store: Store) {
  const sys = system(store);
  const run = await sys.boundary.startRun({ ttlMs: 60_000, budget: { calls: 20 } });
  const fields = { toolCallId: "call_env", runId: run.runId, toolName: "input_echo", input: {} };
  const throwing = (name: keyof typeof fields) => {
    const envelope = { ...fields } as Record<string, unknown>;
    Object.defineProperty(envelope, name, { enumerable: true, get: thrower(`envelope.${name}`) });
    return envelope;
  };
  const cases: [string, unknown, ErrorCode, string | null][] = [
    ["a throwing toolCallId getter", throwing("toolCallId"), "INVALID_TOOL_CALL_ID", null],
    ["a throwing runId getter", throwing("runId"), "RUN_MISMATCH", "call_env"],
    ["a throwing toolName getter", throwing("toolName"), "UNKNOWN_TOOL", "call_env"],
    ["a throwing input getter", throwing("input"), "INVALID_INPUT", "call_env"],
    [
      "a Proxy envelope whose get throws",
      new Proxy(fields, { get: thrower("get") }),
      "INVALID_TOOL_CALL_ID",
      null,
    ],
    ["a revoked Proxy envelope", revoked(), "INVALID_TOOL_CALL_ID", null],
    ["a string envelope", "call_env", "INVALID_TOOL_CALL_ID", null],
  ];
  for (const [name, envelope, code, id] of cases) {
    f.cases++;
    const result = await answered(f, name, sys.boundary.invoke(run, envelope as never));
    checkEqual(
      f,
      result,
      { status: "ERROR", toolCallId: id, code, message: ERROR_MESSAGES[code] },
      name,
    );
    checkEqual(f, await sys.boundary.inspect(run.runId, "call_env"), null, `${name}: no record`);
  }
  checkEqual(f, sys.seen.executed.length, 0, "no tool ran");
  checkEqual(f, (await store.getRun(run.runId))?.used.calls, 0, "no budget used");
  // Each field is read exactly once, through getters or a Proxy alike.
  const reads: Record<string, number> = {};
  const counted = new Proxy(
    { ...fields, input: { q: "once" } },
    {
      get(target, key, receiver) {
        reads[String(key)] = (reads[String(key)] ?? 0) + 1;
        return Reflect.get(target, key, receiver);
      },
    },
  );
  f.cases++;
  const result = await answered(f, "a counting Proxy envelope", sys.boundary.invoke(run, counted));
  checkEqual(f, result.status, "READY", "a Proxy envelope that answers is served");
  checkEqual(f, reads, { toolCallId: 1, runId: 1, toolName: 1, input: 1 }, "each field read once");
  checkEqual(f, sys.seen.executed, [{ q: "once" }], "the tool got the input");
}

/** Generated hostile values as input, raw response and projection. */
async function generated(
  f: Figures,
  store: Store,
  runs: number,
  outcomes: Record<string, number>,
) {
  const count = (what: string, hostile: HostileValue) => {
    outcomes[what] = (outcomes[what] ?? 0) + 1;
    for (const how of hostile.applied) outcomes[how] = (outcomes[how] ?? 0) + 1;
  };
  const sys = system(store);
  const pending: Promise<void>[] = [];
  const noThenOrToJSON = (data: unknown) => !/"(then|toJSON)"/.test(JSON.stringify(data));
  const mutate = (hostile: HostileValue) => {
    for (const target of hostile.targets) {
      if (Array.isArray(target)) target.push(LATER);
      else Object.defineProperty(target, "mutated", { value: LATER, enumerable: true });
    }
  };
  const objectData = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), {
    maxKeys: 5,
  }).filter(noThenOrToJSON);
  const anyData = fc.jsonValue({ maxDepth: 3 }).filter(noThenOrToJSON);
  const when = fc.record({ async: fc.boolean(), mutate: fc.boolean() });

  // As input: the tool and authorize get exactly the recorded request.
  await fc.assert(
    fc.asyncProperty(hostileJsonArb(objectData), when, async ({ data, plan }, how) => {
      const hostile = makeHostile(data, plan, CANARY_SECRET);
      const at = `input ${describe(hostile, plan)}`;
      const executed = sys.seen.executed.length;
      const authorized = sys.seen.authorized.length;
      sys.slot.duringAuthorize = how.mutate ? () => mutate(hostile) : null;
      const expected = hostile.refused ? "INVALID_INPUT" : "READY";
      count(`input:${expected}`, hostile);
      const { record } = await call(f, sys, "input_echo", hostile.value, expected, at, () => {
        if (how.async) mutate(hostile); // the caller changes its object once invoke has it
      });
      if (hostile.refused) {
        checkEqual(f, record, null, `${at}: no record`);
        checkEqual(f, sys.seen.executed.length, executed, `${at}: the tool did not run`);
        return;
      }
      checkEqual(f, record?.request, plain(data), `${at}: the request recorded is the first read`);
      checkEqual(f, sys.seen.executed.at(-1), record?.request, `${at}: the tool got the record`);
      checkEqual(f, sys.seen.authorized.length, authorized + 1, `${at}: authorized once`);
      checkEqual(f, sys.seen.authorized.at(-1), record?.request, `${at}: authorize got it`);
    }),
    { numRuns: runs },
  );
  sys.slot.duringAuthorize = null;

  // As raw response: the projector gets exactly the recorded raw response.
  await fc.assert(
    fc.asyncProperty(hostileJsonArb(anyData), when, async ({ data, plan }, how) => {
      const hostile = makeHostile(data, plan, CANARY_SECRET);
      const at = `raw ${describe(hostile, plan)}${how.async ? " async" : ""}`;
      sys.slot.raw = hostile.value;
      sys.slot.asyncRaw = how.async;
      sys.slot.afterReturn = how.mutate
        ? () => {
          // Changes after the tool returned: a microtask (only when nothing is awaited before
          // the boundary reads the value) and a later task.
          if (!how.async) queueMicrotask(() => mutate(hostile));
          pending.push(new Promise((resolve) => setTimeout(() => resolve(mutate(hostile)), 0)));
        }
        : null;
      const projected = sys.seen.projectedRaw.length;
      const code = !hostile.refused
        ? "READY"
        : how.async && hostile.top === "throwGet"
        ? "EXECUTION_FAILED" // resolving the promise reads `then` through the throwing trap
        : "SERIALIZATION_FAILED";
      count(`raw:${code}`, hostile);
      const { record } = await call(f, sys, "raw_hostile", {}, code, at);
      if (code !== "READY") {
        checkEqual(f, [record?.status, record?.errorCode], ["ERROR", code], `${at}: record`);
        check(f, record?.raw === undefined, `${at}: no raw stored`);
        checkEqual(f, sys.seen.projectedRaw.length, projected, `${at}: no projector call`);
        return;
      }
      checkEqual(f, record?.raw, plain(data), `${at}: the raw recorded is the first read`);
      checkEqual(f, sys.seen.projectedRaw.at(-1), record?.raw, `${at}: the projector got it`);
      checkEqual(f, sys.seen.projectedInput.at(-1), record?.request, `${at}: and the request`);
    }),
    { numRuns: runs },
  );
  sys.slot.afterReturn = null;
  sys.slot.asyncRaw = false;

  // As projection: the agent, the record and the facts agree with the first read.
  const projectionData = anyData.map((content) => ({
    evidence: "EVIDENCE_FOUND",
    scope: "generated",
    content,
  }));
  await fc.assert(
    fc.asyncProperty(hostileJsonArb(projectionData), when, async ({ data, plan }, how) => {
      const hostile = makeHostile(data, plan, CANARY_SECRET);
      const at = `projection ${describe(hostile, plan)}${how.async ? " async" : ""}`;
      sys.slot.projection = hostile.value;
      sys.slot.asyncProjection = how.async;
      const code = !hostile.refused
        ? "READY"
        : how.async && hostile.top === "throwGet"
        ? "PROJECTION_FAILED"
        : "INVALID_PROJECTION";
      count(`projection:${code}`, hostile);
      const { result, record } = await call(f, sys, "projection_hostile", {}, code, at);
      if (how.mutate) mutate(hostile); // after the call: nothing recorded may change
      if (code !== "READY") {
        checkEqual(f, [record?.status, record?.errorCode], ["ERROR", code], `${at}: record`);
        checkEqual(f, record?.raw, { n: 1 }, `${at}: the raw response is kept`);
        return;
      }
      checkEqual(f, record?.agentResult, plain(data), `${at}: recorded is the first read`);
      checkEqual(f, result.status === "READY" && result.content, plain(data.content), at);
    }),
    { numRuns: runs },
  );
  sys.slot.asyncProjection = false;
  await Promise.all(pending);
}

function describe(hostile: HostileValue, plan: readonly HostilePlan[]): string {
  return `[${hostile.applied.join(",") || "plain"}] of plan ${JSON.stringify(plan)}`;
}

/** Values changed after the boundary read them change nothing recorded or seen. */
async function mutations(f: Figures, store: Store) {
  const sys = system(store);
  // A getter that answers differently on every read: the first answer is what ran.
  let reads = 0;
  const changing = {
    get q() {
      return reads++ === 0 ? "first" : LATER;
    },
  };
  const first = await call(f, sys, "input_echo", changing, "READY", "a changing input getter");
  checkEqual(f, reads, 1, "the getter ran once");
  checkEqual(f, first.record?.request, { q: "first" }, "the first answer is recorded");
  checkEqual(f, sys.seen.executed.at(-1), { q: "first" }, "and is what the tool got");

  // The caller changes its object while an async authorize runs, and after invoke returned.
  const input: Record<string, unknown> = { q: "asked", list: [1, 2] };
  sys.slot.duringAuthorize = () => {
    input.q = LATER;
    (input.list as unknown[]).push(LATER);
  };
  const during = await call(
    f,
    sys,
    "input_echo",
    input,
    "READY",
    "changed during authorize",
    () => {
      input.extra = LATER;
    },
  );
  sys.slot.duringAuthorize = null;
  checkEqual(f, input.q, LATER, "the caller's object did change");
  checkEqual(f, during.record?.request, { q: "asked", list: [1, 2] }, "the request as it was read");
  checkEqual(f, sys.seen.executed.at(-1), { q: "asked", list: [1, 2] }, "the tool got that");
  checkEqual(f, sys.seen.authorized.at(-1), { q: "asked", list: [1, 2] }, "so did authorize");

  // authorize changing its own copy of the input changes nothing the tool gets.
  const meddling = system(store, {
    authorize: (_run, request) => {
      request.input.q = LATER;
      return true;
    },
  });
  const meddled = await call(
    f,
    meddling,
    "input_echo",
    { q: "mine" },
    "READY",
    "authorize meddles",
  );
  checkEqual(f, meddling.seen.executed, [{ q: "mine" }], "the tool got the recorded request");
  checkEqual(f, meddled.record?.request, { q: "mine" }, "which was recorded");

  // The tool changes its raw response after returning it (a microtask and a later task), and
  // an async tool after its promise resolved.
  for (const async of [false, true]) {
    const raw = { hits: ["a"], meta: { n: 1 } };
    const later: Promise<void>[] = [];
    sys.slot.raw = raw;
    sys.slot.asyncRaw = async;
    sys.slot.afterReturn = () => {
      if (!async) queueMicrotask(() => raw.hits.push(LATER));
      later.push(
        new Promise((resolve) =>
          setTimeout(() => {
            raw.meta.n = 2;
            resolve();
          }, 0)
        ),
      );
    };
    const changed = await call(f, sys, "raw_hostile", { q: "r" }, "READY", `raw changed, ${async}`);
    await Promise.all(later);
    checkEqual(f, changed.record?.raw, { hits: ["a"], meta: { n: 1 } }, "the raw as returned");
    checkEqual(f, sys.seen.projectedRaw.at(-1), changed.record?.raw, "is what the projector got");
    checkEqual(f, raw.meta.n, 2, "the tool's object did change");
  }
  sys.slot.afterReturn = null;
  sys.slot.asyncRaw = false;

  // The projector changes its raw argument and the projection it returned; the tool its input.
  const changer = system(store, {
    tools: [defineTool({
      name: "changer",
      readOnly: true,
      execute: (input: Record<string, unknown>) => {
        input.q = LATER;
        return { hits: ["h"] };
      },
      project: (raw, ctx) => {
        const projection = { evidence: "EVIDENCE_FOUND" as const, scope: "s", content: raw.hits };
        raw.hits.push("changed by the projector"); // its own copy: the record keeps the raw
        queueMicrotask(() => {
          projection.scope = LATER;
          projection.content.push(LATER);
        });
        changer.seen.projectedInput.push(JSON.parse(JSON.stringify(ctx.input)));
        return projection;
      },
    })],
  });
  const projected = await call(f, changer, "changer", { q: "asked" }, "READY", "projector meddles");
  checkEqual(f, projected.record?.raw, { hits: ["h"] }, "the raw recorded before the projector");
  checkEqual(
    f,
    projected.record?.agentResult,
    { evidence: "EVIDENCE_FOUND", scope: "s", content: ["h", "changed by the projector"] },
    "the projection as returned",
  );
  checkEqual(f, changer.seen.projectedInput, [{ q: "asked" }], "the projector got the request");
  checkEqual(f, projected.record?.request, { q: "asked" }, "as recorded");
}

/** The tool name is part of the record: it counts toward recordBytes, in UTF-8. */
async function nameBytes(f: Figures, store: Store) {
  const name = "検索ツール"; // 5 UTF-16 units, 15 UTF-8 bytes
  const tools = [defineTool({
    name,
    readOnly: true,
    execute: () => ({ hits: ["x"] }),
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "s", content: raw.hits }),
  })];
  const attempt = async (recordBytes: number) => {
    const boundary = new ToolBoundary({ store, tools, limits: { recordBytes } });
    const runId = `run-name-${crypto.randomUUID()}`;
    const run = await boundary.startRun({ runId, ttlMs: 60_000 });
    f.cases++;
    const result = await boundary.invoke(run, {
      toolCallId: "call_name",
      runId,
      toolName: name,
      input: {},
    });
    return { result, record: await boundary.inspect(runId, "call_name"), runId };
  };
  const { record, runId } = await attempt(1_000_000);
  const size = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
  const exact = size(record?.request) + size(record?.raw) + size(record?.agentResult) + 512 +
    runId.length + "call_name".length + new TextEncoder().encode(name).length;
  checkEqual(f, (await attempt(exact)).result.status, "READY", "a record of exactly the limit");
  const over = await attempt(exact - 1);
  checkEqual(f, over.result.status === "ERROR" && over.result.code, "RESULT_TOO_LARGE", "1 over");
  checkEqual(f, over.record?.errorCode, "RESULT_TOO_LARGE", "recorded");
}

/** A hanging authorize is bounded by its timeout and by the run deadline; no record either way. */
async function slowAuthorize(f: Figures, store: Store) {
  let executed = 0;
  const tools = [defineTool({
    name: "guarded",
    readOnly: true,
    execute: () => ++executed,
    project: () => ({ evidence: "NO_EVIDENCE", scope: "s", content: null }),
  })];
  const hanging = () => new Promise<boolean>(() => {});
  let lateAnswer: Promise<void> = Promise.resolve();
  const late = () =>
    new Promise<boolean>((resolve) => {
      lateAnswer = new Promise((done) =>
        setTimeout(() => {
          resolve(true);
          done();
        }, 100)
      );
    });
  const cases: [string, Partial<ToolBoundaryOptions>, number, ErrorCode][] = [
    ["past its timeout", { authorize: hanging, authorizeTimeoutMs: 20 }, 60_000, "UNAUTHORIZED"],
    [
      "past the deadline",
      { authorize: hanging, authorizeTimeoutMs: 60_000 },
      60,
      "DEADLINE_EXCEEDED",
    ],
    [
      "answering true too late",
      { authorize: late, authorizeTimeoutMs: 20 },
      60_000,
      "UNAUTHORIZED",
    ],
  ];
  for (const [name, options, ttlMs, code] of cases) {
    const boundary = new ToolBoundary({ store, tools, ...options });
    const run = await boundary.startRun({ ttlMs });
    f.cases++;
    const result = await answered(
      f,
      name,
      boundary.invoke(run, {
        toolCallId: "call_slow",
        runId: run.runId,
        toolName: "guarded",
        input: {},
      }),
    );
    await lateAnswer;
    checkEqual(f, result.status === "ERROR" && result.code, code, `authorize ${name}`);
    checkEqual(f, await boundary.inspect(run.runId, "call_slow"), null, `${name}: no record`);
    checkEqual(f, (await store.getRun(run.runId))?.used.calls ?? 0, 0, `${name}: no budget used`);
  }
  checkEqual(f, executed, 0, "the tool never ran");
  assert.throws(() => new ToolBoundary({ tools, authorizeTimeoutMs: 0 }), RangeError);
}

for (const { name, runs, open } of STORES) {
  Deno.test(`${name}: invoke() keeps its promises under hostile values`, async (t) => {
    const f = figures("hardening", name === "MemoryStore" ? "memory" : "upstash");
    const outcomes: Record<string, number> = {};
    const { store, close } = await open();
    try {
      await t.step(
        "a raw response with a hidden throwing toJSON is SERIALIZATION_FAILED, its record ERROR",
        async () => {
          const sys = system(store);
          sys.slot.raw = hiddenToJSON({ hits: [] });
          const { record } = await call(f, sys, "raw_hostile", {}, "SERIALIZATION_FAILED", "repro");
          checkEqual(f, record?.status, "ERROR", "the record ends ERROR, not PROJECTING");
        },
      );
      await t.step(
        "named hostile inputs, raw responses and projections get their stage's code",
        () => namedStages(f, store),
      );
      await t.step(
        "envelopes whose fields throw get that field's code and create no record",
        () => namedEnvelopes(f, store),
      );
      await t.step(
        "changes made after a value was read change nothing recorded or seen",
        () => mutations(f, store),
      );
      await t.step(
        "the tool name counts toward recordBytes in UTF-8 bytes",
        () => nameBytes(f, store),
      );
      await t.step(
        "a slow authorize is refused at its timeout or the deadline, with no record",
        () => slowAuthorize(f, store),
      );
      await t.step(
        "generated hostile values: every call resolves, every step saw the record",
        () => generated(f, store, runs, outcomes),
      );
    } finally {
      await close();
    }
    report(f, { runsPerStage: runs, outcomes });
  });
}

// ---------------------------------------------------------------------------------------------
// Over HTTP

Deno.test("HTTP: hostile tool values are 200 with the code, never 500", async () => {
  const AGENT = "agent-token-0123456789abcdef";
  const HARNESS = "harness-token-0123456789abcdef";
  const ok = { evidence: "EVIDENCE_FOUND" as const, scope: "s", content: null };
  const tool = (name: string, execute: () => unknown, project: () => unknown = () => ok) =>
    defineTool({ name, readOnly: true, execute, project: project as never });
  const boundary = new ToolBoundary({
    tools: [
      tool("hidden_tojson", () => hiddenToJSON({ hits: [CANARY_SECRET] })),
      tool("throwing_getter", () => ({
        get hits() {
          return thrower("a getter")();
        },
      })),
      tool(
        "proxy_projection",
        () => ({ n: 1 }),
        () => new Proxy({ ...ok }, { get: thrower("get") }),
      ),
    ],
  });
  const errors: unknown[] = [];
  const app = createApp({
    boundary,
    agentToken: AGENT,
    harnessToken: HARNESS,
    onError: (error) => errors.push(error),
  });
  const post = (path: string, token: string, body: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const started = await post("/v1/runs", HARNESS, { ttlMs: 60_000 });
  assert.equal(started.status, 201);
  const { runId } = await started.json();
  const cases: [string, ErrorCode][] = [
    ["hidden_tojson", "SERIALIZATION_FAILED"],
    ["throwing_getter", "SERIALIZATION_FAILED"],
    ["proxy_projection", "INVALID_PROJECTION"],
  ];
  for (const [toolName, code] of cases) {
    const toolCallId = `call_${toolName}`;
    const res = await post(`/v1/runs/${runId}/tool-calls`, AGENT, {
      toolCallId,
      toolName,
      input: {},
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.deepEqual(JSON.parse(text), {
      status: "ERROR",
      toolCallId,
      code,
      message: ERROR_MESSAGES[code],
    });
    assert.ok(!text.includes(CANARY_SECRET));
    const record = await app.request(`/v1/runs/${runId}/tool-calls/${toolCallId}`, {
      headers: { authorization: `Bearer ${HARNESS}` },
    });
    assert.equal(record.status, 200);
    const body = await record.json();
    assert.deepEqual([body.status, body.errorCode], ["ERROR", code]);
  }
  assert.deepEqual(errors, [], "nothing reached the app's error handler");
});
