/**
 * The caller's signal (`invoke(run, envelope, { signal })`), `toolError(raw)` and
 * `describeTools()`, on MemoryStore and on UpstashStore (real redis-server behind the
 * Upstash-compatible endpoint).
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  type BoundaryEvent,
  type BoundaryResult,
  defineTool,
  ERROR_MESSAGES,
  type ErrorCode,
  type RunContext,
  ToolBoundary,
  type ToolBoundaryOptions,
  ToolError,
  toolError,
} from "../../src/mod.ts";
import type { Store } from "../../src/store/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import { STORES, uniqueId } from "../support/stores.ts";

/** What the tools saw and did, and what each test tells them to do. */
interface Probe {
  executed: number;
  projected: number;
  /** The executor's signal, from its last call. */
  signal: AbortSignal | null;
  /** Called inside `execute` (before it returns), and inside `project`. */
  duringExecute: (() => void) | null;
  duringProject: (() => void) | null;
  /** What `fails` hands to toolError. */
  failure: unknown;
}

function tools(probe: Probe) {
  const started = (signal: AbortSignal) => {
    probe.executed++;
    probe.signal = signal;
    probe.duringExecute?.();
  };
  return [
    // Waits until its signal fires, then rejects with the signal's reason.
    defineTool({
      name: "waits",
      readOnly: true,
      execute: (_input, { signal }) => {
        started(signal);
        return new Promise<{ hits: string[] }>((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        });
      },
      project: (raw) => {
        probe.projected++;
        return { evidence: "EVIDENCE_FOUND", scope: "waits", content: raw.hits };
      },
    }),
    // Answers at once; its projector waits for a promise that never settles.
    defineTool({
      name: "slow_projector",
      readOnly: true,
      execute: (_input, { signal }) => {
        started(signal);
        return { hits: ["a"], secret: CANARY_SECRET };
      },
      project: (raw) => {
        probe.projected++;
        probe.duringProject?.();
        return new Promise<never>(() => {
          void raw;
        });
      },
    }),
    // Answers at once, or (input.async) with a promise.
    defineTool({
      name: "quick",
      readOnly: true,
      input: v.object({ async: v.optional(v.boolean()) }),
      execute: (input, { signal }) => {
        started(signal);
        const raw = { hits: ["a"] };
        return input.async === true ? Promise.resolve(raw) : raw;
      },
      project: (raw) => {
        probe.projected++;
        return { evidence: "EVIDENCE_FOUND", scope: "quick", content: raw.hits };
      },
    }),
    // Gives up after 20 ms; ignores its signal.
    defineTool({
      name: "times_out",
      readOnly: true,
      timeoutMs: 20,
      execute: (_input, { signal }) => {
        started(signal);
        return new Promise<never>(() => {});
      },
      project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
    }),
    // Fails with toolError(probe.failure), at once or (input.async) through a promise.
    defineTool({
      name: "fails",
      readOnly: true,
      input: v.object({ async: v.optional(v.boolean()) }),
      execute: async (input, { signal }) => {
        started(signal);
        if (input.async === true) await Promise.resolve();
        return toolError(probe.failure);
      },
      project: () => {
        probe.projected++;
        return { evidence: "NO_EVIDENCE", scope: "never", content: null };
      },
    }),
    // Returns probe.failure as it is: a look-alike of a toolError result must not count as one.
    defineTool({
      name: "returns_as_is",
      readOnly: true,
      execute: (_input, { signal }) => {
        started(signal);
        return probe.failure;
      },
      project: () => {
        probe.projected++;
        return { evidence: "NO_EVIDENCE", scope: "a plain raw response", content: null };
      },
    }),
    defineTool({
      name: "writes",
      description: "Changes something: listed, never run.",
      readOnly: false,
      execute: (_input, { signal }) => {
        started(signal);
        return {};
      },
      project: () => ({ evidence: "NO_EVIDENCE", scope: "never", content: null }),
    }),
  ];
}

function system(store: Store, options: Partial<ToolBoundaryOptions> = {}) {
  const probe: Probe = {
    executed: 0,
    projected: 0,
    signal: null,
    duringExecute: null,
    duringProject: null,
    failure: null,
  };
  const events: BoundaryEvent[] = [];
  const boundary = new ToolBoundary({
    store,
    tools: tools(probe),
    observe: (event) => events.push(event),
    ...options,
  });
  const start = () => boundary.startRun({ runId: uniqueId("run"), budget: { calls: 1_000 } });
  const envelope = (run: RunContext, toolName: string, input: unknown = {}) => ({
    toolCallId: uniqueId("call"),
    runId: run.runId,
    toolName,
    input,
  });
  return { boundary, probe, events, start, envelope };
}

function expectError(result: BoundaryResult, code: ErrorCode, toolCallId: string): void {
  assert.deepEqual(result, { status: "ERROR", toolCallId, code, message: ERROR_MESSAGES[code] });
}

/** A store whose begin aborts `controller` after the store has begun the call. */
function abortingAtBegin(store: Store, controller: AbortController): Store {
  return new Proxy(store, {
    get(target, key) {
      if (key === "begin") {
        return async (request: Parameters<Store["begin"]>[0]) => {
          const begun = await target.begin(request);
          controller.abort(new Error("gave up while the store began the call"));
          return begun;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A signal that counts the abort listeners added to it and still attached. */
function countingSignal() {
  const controller = new AbortController();
  const signal = controller.signal;
  const live = new Set<unknown>();
  const counts = { added: 0, live };
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((type: string, listener: EventListener, options?: unknown) => {
    counts.added++;
    live.add(listener);
    add(type, listener, options as AddEventListenerOptions);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((type: string, listener: EventListener, options?: unknown) => {
    live.delete(listener);
    remove(type, listener, options as EventListenerOptions);
  }) as typeof signal.removeEventListener;
  return { controller, signal, counts };
}

// ---------------------------------------------------------------------------------------------
// The caller's signal

async function alreadyAborted(store: Store) {
  const { boundary, probe, events, start, envelope } = system(store);
  const run = await start();
  const controller = new AbortController();
  controller.abort(new Error("stopped before the call"));
  for (const toolName of ["quick", "waits"]) {
    const call = envelope(run, toolName);
    const result = await boundary.invoke(run, call, { signal: controller.signal });
    expectError(result, "CANCELLED", call.toolCallId);
    assert.equal(await boundary.inspect(run.runId, call.toolCallId), null, "no record");
  }
  assert.equal(probe.executed, 0, "no tool ran");
  assert.equal((await boundary.store.getRun(run.runId))?.used.calls, 0, "no budget used");
  assert.deepEqual(
    events.filter((event) => event.type.startsWith("call.")).map((event) => [
      event.type,
      "code" in event ? event.code : null,
    ]),
    [["call.refused", "CANCELLED"], ["call.refused", "CANCELLED"]],
  );
}

async function abortedWhileAuthorizing(store: Store) {
  const controller = new AbortController();
  let asked = 0;
  const { boundary, probe, start, envelope } = system(store, {
    authorize: () => {
      asked++;
      setTimeout(() => controller.abort(new Error("gave up while authorize ran")), 0);
      return new Promise<boolean>(() => {}); // never answers
    },
  });
  const run = await start();
  const call = envelope(run, "quick");
  const result = await boundary.invoke(run, call, { signal: controller.signal });
  expectError(result, "CANCELLED", call.toolCallId);
  assert.equal(asked, 1);
  assert.equal(probe.executed, 0);
  assert.equal(await boundary.inspect(run.runId, call.toolCallId), null, "no record");
  assert.equal((await boundary.store.getRun(run.runId))?.used.calls, 0, "no budget used");
}

async function abortedWhileBeginning(store: Store) {
  const controller = new AbortController();
  const { boundary, probe, events, start, envelope } = system(
    abortingAtBegin(store, controller),
  );
  const run = await start();
  const call = envelope(run, "quick");
  const result = await boundary.invoke(run, call, { signal: controller.signal });
  expectError(result, "CANCELLED", call.toolCallId);
  assert.equal(probe.executed, 0, "the tool never ran");
  const record = await boundary.inspect(run.runId, call.toolCallId);
  assert.equal(record?.status, "ERROR", "the begun record ended, not left PROJECTING");
  assert.equal(record?.errorCode, "CANCELLED");
  assert.equal(record?.evidence, "ERROR");
  assert.equal("raw" in record!, false);
  assert.equal((await boundary.store.getRun(run.runId))?.used.calls, 1, "the begin counted");
  const finished = events.find((event) => event.type === "call.finished");
  assert.equal(finished?.type === "call.finished" && finished.code, "CANCELLED");
}

async function abortedWhileToolRuns(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const run = await start();
  const controller = new AbortController();
  const reason = new Error("the user pressed stop");
  probe.duringExecute = () => setTimeout(() => controller.abort(reason), 0);
  const call = envelope(run, "waits");
  const result = await boundary.invoke(run, call, { signal: controller.signal });
  expectError(result, "CANCELLED", call.toolCallId);
  assert.equal(probe.executed, 1);
  assert.equal(probe.signal?.aborted, true, "the tool's signal fired");
  assert.equal(probe.signal?.reason, reason, "with the caller's reason");
  assert.equal(probe.projected, 0);
  const record = await boundary.inspect(run.runId, call.toolCallId);
  assert.equal(record?.status, "ERROR");
  assert.equal(record?.errorCode, "CANCELLED");
  assert.equal("raw" in record!, false);
}

async function abortedInsideAsyncTool(store: Store) {
  // The tool's own synchronous part aborts the caller's signal before it returns its promise.
  const { boundary, probe, start, envelope } = system(store);
  const run = await start();
  const controller = new AbortController();
  probe.duringExecute = () => controller.abort("at once");
  const call = envelope(run, "waits");
  const result = await boundary.invoke(run, call, { signal: controller.signal });
  expectError(result, "CANCELLED", call.toolCallId);
  assert.equal(probe.signal?.reason, "at once");
  assert.equal((await boundary.inspect(run.runId, call.toolCallId))?.errorCode, "CANCELLED");
}

async function abortedWhileProjecting(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const run = await start();
  const controller = new AbortController();
  const reason = new Error("stopped during the projector");
  probe.duringProject = () => setTimeout(() => controller.abort(reason), 0);
  const call = envelope(run, "slow_projector");
  const result = await boundary.invoke(run, call, { signal: controller.signal });
  expectError(result, "CANCELLED", call.toolCallId);
  assert.equal(probe.projected, 1);
  assert.equal(probe.signal?.reason, reason, "the tool's signal fired with the caller's reason");
  const record = await boundary.inspect(run.runId, call.toolCallId);
  assert.equal(record?.status, "ERROR");
  assert.equal(record?.errorCode, "CANCELLED");
  assert.deepEqual(record?.raw, { hits: ["a"], secret: CANARY_SECRET }, "the raw response kept");
  assert.equal(record?.agentResult, null);
}

async function timeoutStaysTimeout(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const run = await start();
  const controller = new AbortController();
  const call = envelope(run, "times_out");
  const result = await boundary.invoke(run, call, { signal: controller.signal });
  controller.abort(new Error("too late to matter"));
  expectError(result, "TOOL_TIMEOUT", call.toolCallId);
  assert.equal(probe.signal?.reason instanceof DOMException, true);
  assert.equal((probe.signal?.reason as DOMException).name, "TimeoutError");
  assert.equal((await boundary.inspect(run.runId, call.toolCallId))?.errorCode, "TOOL_TIMEOUT");
}

async function noListenerLeft(store: Store) {
  const { boundary, probe, start, envelope } = system(store, {
    authorize: (_run, call) => call.input.async === true ? Promise.resolve(true) : true,
  });
  const run = await start();
  const { signal, counts } = countingSignal();
  const results: BoundaryResult[] = [];
  for (let i = 0; i < 60; i++) {
    // Half answer at once (nothing to listen for), half through promises.
    const call = envelope(run, "quick", { async: i % 2 === 1 });
    results.push(await boundary.invoke(run, call, { signal }));
  }
  assert.deepEqual(new Set(results.map((result) => result.status)), new Set(["READY"]));
  assert.equal(probe.executed, 60);
  // One listener while the async authorize ran, one while the async tool ran: 2 per async call.
  assert.equal(counts.added, 60);
  assert.equal(counts.live.size, 0, "every listener was removed");
}

// ---------------------------------------------------------------------------------------------
// toolError

async function toolErrorKeepsRaw(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const run = await start();
  probe.failure = { status: 503, body: `upstream down ${CANARY_SECRET}` };
  for (const async of [false, true]) {
    const call = envelope(run, "fails", { async });
    const result = await boundary.invoke(run, call);
    expectError(result, "EXECUTION_FAILED", call.toolCallId);
    const record = await boundary.inspect(run.runId, call.toolCallId);
    assert.equal(record?.status, "ERROR");
    assert.equal(record?.evidence, "ERROR");
    assert.equal(record?.errorCode, "EXECUTION_FAILED");
    assert.deepEqual(record?.raw, probe.failure);
    assert.equal(record?.agentResult, null);
  }
  assert.equal(probe.projected, 0, "the projector never ran");
  const facts = await boundary.endRun(run);
  assert.deepEqual(facts, [], "no fact from a failed call");
}

async function toolErrorWithoutStorableRaw(store: Store) {
  const { boundary, probe, start, envelope } = system(store, {
    limits: { rawBytes: 1_024, recordBytes: 1_400 },
  });
  const run = await start();
  const cases: [string, unknown][] = [
    ["over rawBytes", { body: "x".repeat(1_100) }],
    ["within rawBytes, over recordBytes", { body: "x".repeat(1_000) }],
    ["not JSON data", { at: new Date(0) }],
    [
      "a cycle",
      (() => {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        return cyclic;
      })(),
    ],
    ["undefined", undefined],
  ];
  for (const [label, failure] of cases) {
    probe.failure = failure;
    const call = envelope(run, "fails");
    const result = await boundary.invoke(run, call);
    expectError(result, "EXECUTION_FAILED", call.toolCallId);
    const record = await boundary.inspect(run.runId, call.toolCallId);
    assert.equal(record?.errorCode, "EXECUTION_FAILED", label);
    assert.equal("raw" in record!, false, `${label}: no raw kept`);
  }
  probe.failure = { body: "x".repeat(600) };
  const within = envelope(run, "fails");
  await boundary.invoke(run, within);
  assert.deepEqual((await boundary.inspect(run.runId, within.toolCallId))?.raw, probe.failure);
  assert.equal(probe.projected, 0);
}

async function toolErrorLookAlikes(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const run = await start();
  const expect = async (failure: unknown, code: ErrorCode | "READY") => {
    probe.failure = failure;
    const call = envelope(run, "returns_as_is");
    const result = await boundary.invoke(run, call);
    assert.equal(result.status === "ERROR" ? result.code : result.status, code);
    return boundary.inspect(run.runId, call.toolCallId);
  };
  // A Proxy of a real one, and an object made to look like one, are raw responses, and not
  // plain data: SERIALIZATION_FAILED, never EXECUTION_FAILED with a raw of their choosing.
  await expect(new Proxy(toolError({ body: "kept?" }), {}), "SERIALIZATION_FAILED");
  await expect(
    Object.setPrototypeOf({ raw: { body: "kept?" } }, ToolError.prototype),
    "SERIALIZATION_FAILED",
  );
  // A plain object with a `raw` key is data like any other, and is projected.
  const record = await expect({ raw: { body: "data" } }, "READY");
  assert.deepEqual(record?.raw, { raw: { body: "data" } });
  // toolError nested inside a response is a class instance: not JSON data.
  await expect({ inner: toolError("x") }, "SERIALIZATION_FAILED");
  assert.equal(probe.projected, 1);
}

// ---------------------------------------------------------------------------------------------
// describeTools

async function describesEveryTool(store: Store) {
  const { boundary, probe, start, envelope } = system(store);
  const listed = boundary.describeTools();
  assert.deepEqual(listed.map((tool) => [tool.name, tool.readOnly]), [
    ["waits", true],
    ["slow_projector", true],
    ["quick", true],
    ["times_out", true],
    ["fails", true],
    ["returns_as_is", true],
    ["writes", false],
  ]);
  assert.deepEqual(listed[0], { name: "waits", readOnly: true, inputSchema: { type: "object" } });
  assert.deepEqual(listed[2]?.inputSchema, {
    type: "object",
    properties: { async: { type: "boolean" } },
    required: [],
  });
  assert.deepEqual(listed[6], {
    name: "writes",
    description: "Changes something: listed, never run.",
    readOnly: false,
    inputSchema: { type: "object" },
  });
  // Each call gets its own copy.
  listed[2]!.inputSchema.type = "changed";
  listed.pop();
  assert.equal(boundary.describeTools().length, 7);
  assert.equal(boundary.describeTools()[2]?.inputSchema.type, "object");
  // Listed is not callable: the writable tool is still refused, with no record.
  const run = await start();
  const call = envelope(run, "writes");
  expectError(await boundary.invoke(run, call), "NOT_READ_ONLY", call.toolCallId);
  assert.equal(await boundary.inspect(run.runId, call.toolCallId), null);
  assert.equal(probe.executed, 0);
}

const CASES: [string, (store: Store) => Promise<void>][] = [
  [
    "invoke() with an already aborted signal is CANCELLED: no record, no tool, no budget",
    alreadyAborted,
  ],
  [
    "invoke() aborted while authorize is pending is CANCELLED without a record",
    abortedWhileAuthorizing,
  ],
  [
    "invoke() aborted while the store begins the call ends the record ERROR CANCELLED, tool not run",
    abortedWhileBeginning,
  ],
  [
    "invoke() aborted while the tool runs fires ctx.signal with the caller's reason, record CANCELLED",
    abortedWhileToolRuns,
  ],
  [
    "invoke() aborted by an async tool's own first synchronous part is CANCELLED",
    abortedInsideAsyncTool,
  ],
  [
    "invoke() aborted while the projector runs ends the record CANCELLED and keeps the raw",
    abortedWhileProjecting,
  ],
  [
    "a tool that ran out of time before the caller aborted stays TOOL_TIMEOUT",
    timeoutStaysTimeout,
  ],
  [
    "one signal over many invokes leaves no abort listener behind, and sync steps add none",
    noListenerLeft,
  ],
  [
    "execute returning toolError(raw) ends ERROR EXECUTION_FAILED with that raw, projector not called",
    toolErrorKeepsRaw,
  ],
  [
    "toolError(raw) with raw over the limits or not JSON data is EXECUTION_FAILED with no raw",
    toolErrorWithoutStorableRaw,
  ],
  [
    "only toolError() itself counts: a Proxy or look-alike of one is a raw response",
    toolErrorLookAlikes,
  ],
  [
    "describeTools() lists every tool with its JSON Schema, writable ones too, a fresh copy each time",
    describesEveryTool,
  ],
];

for (const { name, open } of STORES) {
  Deno.test(`${name}: the caller's signal, toolError and describeTools`, async (t) => {
    const { store, close } = await open();
    try {
      for (const [label, fn] of CASES) await t.step(label, () => fn(store));
    } finally {
      await close();
    }
  });
}

Deno.test("invoke() refuses an options.signal that is not an AbortSignal with a TypeError", async () => {
  const boundary = new ToolBoundary({ tools: [] });
  const run = await boundary.startRun();
  const envelope = { toolCallId: "call_1", runId: run.runId, toolName: "none", input: {} };
  for (const signal of [{}, "abort", 1, { aborted: false }]) {
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      boundary.invoke(run, envelope, { signal: signal as any }),
      TypeError,
    );
  }
  // Absent, or undefined: no signal.
  const result = await boundary.invoke(run, envelope, {});
  assert.equal(result.status === "ERROR" && result.code, "UNKNOWN_TOOL");
});

Deno.test("a projector's raw type leaves out ToolError when execute may return one", () => {
  // Type-level: this compiles only if `raw` is `{ hits: string[] }` inside `project`.
  const tool = defineTool({
    name: "typed",
    readOnly: true,
    execute: (input: { fail?: boolean }) =>
      Promise.resolve(input.fail === true ? toolError({ status: 503 }) : { hits: ["a"] }),
    project: (raw) => ({ evidence: "EVIDENCE_FOUND", scope: "typed", content: raw.hits }),
  });
  assert.equal(tool.name, "typed");
  assert.ok(toolError(1) instanceof ToolError);
  assert.ok(Object.isFrozen(toolError({ a: 1 })));
});
