/**
 * Hostile envelopes and inputs against the library (ToolBoundary on MemoryStore): every case
 * gets READY or the right safe code, never an exception, a hang, an executor call after a
 * refusal, or a polluted prototype. Generated cases (fast-check) plus a table of named ones.
 *
 * RELIABILITY_RUNS scales the generated cases (default 500 per property).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import {
  BoundaryError,
  type BoundaryResult,
  defineTool,
  ERROR_MESSAGES,
  type ErrorCode,
  ToolBoundary,
} from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import { answered, check, checkEqual, envInt, type Figures, figures, report } from "./figures.ts";
import { checkPrototypes, checkResultSafe } from "./model.ts";

const RUNS = envInt("RELIABILITY_RUNS", 500);
const TOOL_CALL_ID = /^(?!\.+$)[A-Za-z0-9_.:-]{1,256}$/;
const RUN_ID = /^(?!\.+$)[A-Za-z0-9_.-]{1,128}$/;
const REQUEST_BYTES = 65_536; // the default
const INPUT_DEPTH = 16;

function system() {
  const received: unknown[] = [];
  const echo = (name: string, input?: v.GenericSchema<unknown, Record<string, unknown>>) =>
    defineTool({
      name,
      readOnly: true,
      ...(input === undefined ? {} : { input }),
      execute: (value) => {
        received.push(value);
        return { keys: Object.keys(value).length, credential: CANARY_SECRET };
      },
      project: (raw) => ({ evidence: "NO_EVIDENCE", scope: "echo", content: raw.keys }),
    });
  const boundary = new ToolBoundary({
    store: new MemoryStore(),
    tools: [
      echo("echo"),
      echo("loose", v.looseObject({})),
      echo("record", v.record(v.string(), v.unknown())),
    ],
    limits: { requestBytes: REQUEST_BYTES, inputDepth: INPUT_DEPTH },
  });
  return { boundary, received };
}

function expectCode(
  f: Figures,
  result: BoundaryResult,
  code: ErrorCode,
  id: string | null,
  at: string,
) {
  checkEqual(
    f,
    { ...result, issues: undefined },
    { status: "ERROR", toolCallId: id, code, message: ERROR_MESSAGES[code], issues: undefined },
    at,
  );
}

/** Container nesting depth, or -1 when the value is not exactly JSON (an independent oracle). */
function jsonDepth(value: unknown, seen = new Set<unknown>()): number {
  if (value === null || typeof value === "string" || typeof value === "boolean") return 0;
  if (typeof value === "number") return Number.isFinite(value) ? 0 : -1;
  if (typeof value !== "object" || seen.has(value)) return -1;
  seen.add(value);
  let children: unknown[];
  if (Array.isArray(value)) {
    if (Object.keys(value).length !== value.length) return -1; // holes
    children = [...value];
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return -1;
    if (Object.getOwnPropertySymbols(value).length > 0) {
      children = Object.values(value); // symbol keys are not data; JSON drops them
    } else children = Object.values(value);
    if (Object.getOwnPropertyNames(value).length !== Object.keys(value).length) return -1;
  }
  let depth = 0;
  for (const child of children) {
    const d = jsonDepth(child, seen);
    if (d < 0) return -1;
    depth = Math.max(depth, d);
  }
  seen.delete(value);
  return depth + 1;
}

function isPlain(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** What preflight must answer for an input given as a value (not text). */
function expectedForValue(value: unknown): ErrorCode | "READY" {
  if (!isPlain(value)) return "INVALID_INPUT";
  const depth = jsonDepth(value);
  if (depth < 0 || depth > INPUT_DEPTH) return "INVALID_INPUT";
  if (new TextEncoder().encode(JSON.stringify(value)).length > REQUEST_BYTES) {
    return "REQUEST_TOO_LARGE";
  }
  return "READY";
}

function expectedForText(text: string): ErrorCode | "READY" {
  if (text.length > REQUEST_BYTES * 4) return "REQUEST_TOO_LARGE";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "INVALID_INPUT";
  }
  return expectedForValue(value);
}

const f = figures("hostile", "library");
let callSeq = 0;

/** One invoke with every invariant: the code, no throw, no hang, no execution on refusal. */
async function invokeCase(
  envelope: Record<string, unknown>,
  expected: ErrorCode | "READY",
  expectedId: string | null,
  at: string,
): Promise<BoundaryResult> {
  const { boundary, received } = system();
  const run = await boundary.startRun({ runId: "run-hostile", ttlMs: 60_000 });
  f.cases++;
  const result = await answered(
    f,
    at,
    boundary.invoke(run, {
      toolCallId: undefined,
      runId: run.runId,
      toolName: "echo",
      input: {},
      ...envelope,
    }),
  );
  checkResultSafe(f, result, at);
  checkPrototypes(f, at);
  if (expected === "READY") {
    check(
      f,
      result.status === "READY",
      () => `${at}: expected READY, got ${JSON.stringify(result)}`,
    );
    checkEqual(f, received.length, 1, `${at}: executed once`);
    const id = envelope.toolCallId as string;
    const record = await boundary.inspect(run.runId, id);
    checkEqual(f, record?.toolCallId, id, `${at}: exact ID kept`);
    checkEqual(f, JSON.stringify(record?.request), JSON.stringify(received[0]), `${at}: request`);
  } else {
    expectCode(f, result, expected, expectedId, at);
    checkEqual(f, received.length, 0, `${at}: executor ran after a refusal`);
    checkEqual(f, (await boundary.store.getRun(run.runId))?.used.calls, 0, `${at}: budget used`);
  }
  return result;
}

const hostileString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }), // lone surrogates included
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{1,40}$/),
  fc.constantFrom(
    "",
    " ",
    "call_1 ",
    "\u0000",
    "call\u0000",
    "call\r\n",
    "{call}",
    "a{b}c",
    "a:b",
    "a/b",
    "a\\b",
    "../x",
    "%2F",
    "call_\u00e9",
    "\ud800",
    "\udfff\ud800",
    "call_\u202e",
    "c".repeat(256),
    "c".repeat(257),
    "c".repeat(10_000),
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "123",
    "-0",
    "1e400",
    "null",
    "true",
  ),
);
const hostileValue = fc.oneof(
  hostileString,
  fc.anything({ maxDepth: 2, withBigInt: true, withDate: true, withMap: true, withSet: true }),
);

Deno.test("hostile: any tool call ID gets READY when it matches the allow-list, else INVALID_TOOL_CALL_ID", async () => {
  await fc.assert(
    fc.asyncProperty(hostileValue, async (toolCallId) => {
      const ok = typeof toolCallId === "string" && TOOL_CALL_ID.test(toolCallId);
      await invokeCase(
        { toolCallId },
        ok ? "READY" : "INVALID_TOOL_CALL_ID",
        null,
        `toolCallId ${Deno.inspect(toolCallId).slice(0, 80)}`,
      );
    }),
    { numRuns: RUNS },
  );
});

Deno.test("hostile: any envelope run ID other than the run's own gets RUN_MISMATCH", async () => {
  await fc.assert(
    fc.asyncProperty(hostileValue, async (runId) => {
      const id = `call_${callSeq++}`;
      await invokeCase(
        { toolCallId: id, runId },
        runId === "run-hostile" ? "READY" : "RUN_MISMATCH",
        id,
        `runId ${Deno.inspect(runId).slice(0, 80)}`,
      );
    }),
    { numRuns: RUNS },
  );
});

Deno.test("hostile: any tool name but a registered one gets UNKNOWN_TOOL", async () => {
  await fc.assert(
    fc.asyncProperty(hostileValue, async (toolName) => {
      const id = `call_${callSeq++}`;
      await invokeCase(
        { toolCallId: id, toolName },
        toolName === "echo" ? "READY" : "UNKNOWN_TOOL",
        id,
        `toolName ${Deno.inspect(toolName).slice(0, 80)}`,
      );
    }),
    { numRuns: RUNS },
  );
});

Deno.test("hostile: any input value is READY exactly when it is a plain JSON object within limits", async () => {
  const objects = fc.oneof(
    fc.object({
      maxDepth: 3,
      withNullPrototype: true,
      withBoxedValues: true,
      withSparseArray: true,
    }),
    fc.dictionary(
      fc.constantFrom("__proto__", "constructor", "prototype", "toJSON", "valueOf"),
      fc.jsonValue(),
      { minKeys: 1 },
    ),
    fc.anything({
      maxDepth: 3,
      withBigInt: true,
      withDate: true,
      withMap: true,
      withTypedArray: true,
    }),
  );
  await fc.assert(
    fc.asyncProperty(objects, async (input) => {
      const id = `call_${callSeq++}`;
      await invokeCase({ toolCallId: id, input }, expectedForValue(input), id, `input value`);
    }),
    { numRuns: RUNS },
  );
});

Deno.test("hostile: any input text is READY exactly when it parses to a plain JSON object within limits", async () => {
  const texts = fc.oneof(
    fc.string({ unit: "binary", maxLength: 60 }),
    fc.json({ maxDepth: 4 }),
    fc.json({ maxDepth: 2 }).map((json) => json.slice(0, Math.max(0, json.length - 1))),
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify({ __proto__: value, a: value })),
    fc.jsonValue({ maxDepth: 3 }).map((value) => `{"__proto__":${JSON.stringify(value)}}`),
  );
  await fc.assert(
    fc.asyncProperty(texts, async (input) => {
      const id = `call_${callSeq++}`;
      await invokeCase({ toolCallId: id, input }, expectedForText(input), id, `input text`);
    }),
    { numRuns: RUNS },
  );
});

Deno.test("hostile: unsafe run IDs never reach the store from startRun, inspect or endRun", async () => {
  await fc.assert(
    fc.asyncProperty(hostileValue, hostileString, async (runId, toolCallId) => {
      f.cases++;
      const { boundary } = system();
      const safeRun = typeof runId === "string" && RUN_ID.test(runId);
      const generated = runId === undefined || runId === null; // documented: a UUID is generated
      let code: string | null = null;
      try {
        await answered(f, "startRun", boundary.startRun({ runId: runId as string, ttlMs: 1_000 }));
      } catch (error) {
        check(f, error instanceof BoundaryError, () => `startRun threw ${error}`);
        code = (error as BoundaryError).code;
      }
      checkEqual(
        f,
        code,
        safeRun || generated ? null : "INVALID_RUN_ID",
        `startRun ${Deno.inspect(runId)}`,
      );
      const record = await answered(f, "inspect", boundary.inspect(runId as string, toolCallId));
      checkEqual(f, record, null, "inspect of a never-called ID");
      try {
        await answered(f, "endRun", boundary.endRun(runId as string));
        check(f, safeRun, "endRun accepted an unsafe run ID");
      } catch (error) {
        check(f, error instanceof BoundaryError, () => `endRun threw ${error}`);
        checkEqual(f, (error as BoundaryError).code, "INVALID_RUN_ID", "endRun code");
      }
      checkPrototypes(f, "run IDs");
    }),
    { numRuns: RUNS },
  );
});

Deno.test("hostile: named cases from the issue get READY or the right safe code", async () => {
  const deepText = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
  const deepArrayText = (n: number) => '{"a":' + "[".repeat(n) + "]".repeat(n) + "}";
  let deepValue: unknown = {};
  for (let i = 0; i < 10_000; i++) deepValue = { d: deepValue };
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const nullProto = Object.assign(Object.create(null), { q: "x" });
  const protoOwn = JSON.parse('{"__proto__":{"polluted":1},"q":"x"}');
  const cases: [string, Record<string, unknown>, ErrorCode | "READY"][] = [
    ["Unicode tool call ID", { toolCallId: "call_日本" }, "INVALID_TOOL_CALL_ID"],
    ["emoji tool call ID", { toolCallId: "call_\u{1F600}" }, "INVALID_TOOL_CALL_ID"],
    ["NUL in tool call ID", { toolCallId: "call\u0000x" }, "INVALID_TOOL_CALL_ID"],
    ["newline in tool call ID", { toolCallId: "call_1\n" }, "INVALID_TOOL_CALL_ID"],
    ["DEL in tool call ID", { toolCallId: "call\u007f" }, "INVALID_TOOL_CALL_ID"],
    ["braces in tool call ID", { toolCallId: "{run-hostile}" }, "INVALID_TOOL_CALL_ID"],
    ["colon in tool call ID", { toolCallId: "functions.search:0" }, "READY"],
    ["slash in tool call ID", { toolCallId: "call/../x" }, "INVALID_TOOL_CALL_ID"],
    ["10,000-character tool call ID", { toolCallId: "c".repeat(10_000) }, "INVALID_TOOL_CALL_ID"],
    ["256-character tool call ID", { toolCallId: "c".repeat(256) }, "READY"],
    ["number as tool call ID", { toolCallId: 123 }, "INVALID_TOOL_CALL_ID"],
    ["lone surrogate tool call ID", { toolCallId: "call_\ud800" }, "INVALID_TOOL_CALL_ID"],
    ["number as run ID", { runId: 42 }, "RUN_MISMATCH"],
    ["colon in run ID", { runId: "run-hostile:x" }, "RUN_MISMATCH"],
    ["number as tool name", { toolName: 1 }, "UNKNOWN_TOOL"],
    ["__proto__ as tool name", { toolName: "__proto__" }, "UNKNOWN_TOOL"],
    ["constructor as tool name", { toolName: "constructor" }, "UNKNOWN_TOOL"],
    ["__proto__ key (JSON text)", { input: '{"__proto__":{"polluted":1}}' }, "READY"],
    ["__proto__ own key (value)", { input: protoOwn }, "READY"],
    ["__proto__ key through a loose schema", { toolName: "loose", input: protoOwn }, "READY"],
    ["__proto__ key through a record schema", { toolName: "record", input: protoOwn }, "READY"],
    [
      "constructor.prototype keys",
      { input: '{"constructor":{"prototype":{"polluted":1}}}' },
      "READY",
    ],
    ["null-prototype object", { input: nullProto }, "READY"],
    ["10,000 levels of nesting (value)", { input: deepValue }, "INVALID_INPUT"],
    ["10,000 levels of nesting (text)", { input: deepText(10_000) }, "INVALID_INPUT"],
    ["10,000 nested arrays (text)", { input: deepArrayText(10_000) }, "INVALID_INPUT"],
    ["100,000 nested arrays (text)", { input: deepArrayText(100_000) }, "INVALID_INPUT"],
    ["1,000,000 nested arrays (text)", { input: deepArrayText(1_000_000) }, "REQUEST_TOO_LARGE"],
    ["16 levels of nesting (at the limit)", { input: deepText(15) }, "READY"],
    ["cycle", { input: cyclic }, "INVALID_INPUT"],
    ["huge number 1e308", { input: { n: 1e308 } }, "READY"],
    ["number beyond double range (text)", { input: '{"n":1e400}' }, "INVALID_INPUT"],
    ["30-digit integer (text)", { input: '{"n":123456789012345678901234567890}' }, "READY"],
    ["BigInt", { input: { n: 10n ** 30n } }, "INVALID_INPUT"],
    ["NaN", { input: { n: Number.NaN } }, "INVALID_INPUT"],
    ["lone surrogate in a value", { input: { s: "\ud800x\udfff" } }, "READY"],
    ["lone surrogate escape (text)", { input: '{"s":"\\ud800"}' }, "READY"],
    ["lone surrogate in a key", { input: { ["\udc00"]: 1 } }, "READY"],
    ["invalid JSON text", { input: '{"q":' }, "INVALID_INPUT"],
    ["JSON text with trailing garbage", { input: '{"q":1} x' }, "INVALID_INPUT"],
    ["JSON text of an array", { input: "[{}]" }, "INVALID_INPUT"],
    ["JSON text null", { input: "null" }, "INVALID_INPUT"],
    ["empty text", { input: "" }, "INVALID_INPUT"],
    ["BOM before JSON text", { input: '\ufeff{"q":1}' }, "INVALID_INPUT"],
    ["number as input", { input: 42 }, "INVALID_INPUT"],
    ["undefined input", { input: undefined }, "INVALID_INPUT"],
    [
      "text of 4x the request limit",
      { input: " ".repeat(REQUEST_BYTES * 4 + 1) },
      "REQUEST_TOO_LARGE",
    ],
    [
      "input over the request limit",
      { input: { s: "x".repeat(REQUEST_BYTES) } },
      "REQUEST_TOO_LARGE",
    ],
    [
      "4-byte characters over the limit (UTF-16 length under it)",
      { input: { s: "\u{1F600}".repeat(REQUEST_BYTES / 4) } },
      "REQUEST_TOO_LARGE",
    ],
  ];
  for (const [name, overrides, expected] of cases) {
    const id = typeof overrides.toolCallId === "string" && TOOL_CALL_ID.test(overrides.toolCallId)
      ? overrides.toolCallId
      : `call_${callSeq++}`;
    const envelope = { toolCallId: id, ...overrides };
    const expectedId = expected === "INVALID_TOOL_CALL_ID" ? null : id;
    await invokeCase(envelope, expected, expectedId, name);
  }
  checkEqual(f, (Object.prototype as Record<string, unknown>).polluted, undefined, "pollution");
});

Deno.test("hostile: every case above ran and each held its invariants", () => {
  // Runs after the suite's other tests (declaration order): what they counted is what held.
  assert.ok(f.cases >= RUNS, `only ${f.cases} hostile cases ran`);
  assert.ok(f.invariants > f.cases, `${f.invariants} invariants for ${f.cases} cases`);
  report(f, { runsPerProperty: RUNS });
});
