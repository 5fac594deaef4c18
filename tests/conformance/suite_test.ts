/**
 * The conformance suite itself: which cases each entry registers for the capabilities a store
 * offers, how they are named, and that a store of the required core alone passes its cases and
 * meets clear refusals for the rest.
 */
import assert from "node:assert/strict";
import { generateLedgerKeys, ToolBoundary } from "../../src/mod.ts";
import { MemoryStore } from "../../src/memory/mod.ts";
import { capabilitiesOf, type Store, type StoreCapability } from "../../src/store/mod.ts";
import {
  boundaryConformance,
  type ConformanceOptions,
  storeConformance,
  type StoreUnderTest,
} from "../../src/testing/mod.ts";
import { createFakeToolkit } from "../../src/testing/fakes.ts";
import { coreOnly } from "../support/stores.ts";

type Register = (options: ConformanceOptions) => Promise<string[]>;

/** A store under test on a clock of its own, which the cases move instead of waiting. */
function onFakeClock(make: (clock: () => number) => Store): StoreUnderTest {
  let now = Date.UTC(2026, 0, 1);
  const clock = () => now;
  return { store: make(clock), clock, advance: (ms) => void (now += ms) };
}

async function collect(register: Register, extra: Partial<ConformanceOptions> = {}) {
  const registered: [string, () => Promise<void>][] = [];
  const names = await register({
    name: "Probe",
    createStore: () => onFakeClock((clock) => new MemoryStore({ clock })),
    test: (name, fn) => registered.push([name, fn]),
    ...extra,
  });
  return { names, registered };
}

/** A MemoryStore with one capability's methods hidden. */
function without(capability: StoreCapability, clock?: () => number): MemoryStore {
  const store = new MemoryStore(clock === undefined ? {} : { clock });
  const hidden = {
    CallIndex: ["lookupCall", "listCalls"],
    RunIndex: ["listRuns"],
    RunSeal: ["sealRun", "exportRun"],
  };
  for (const method of hidden[capability]) {
    Object.defineProperty(store, method, { value: undefined });
  }
  return store;
}

/** Runs every registered case; the names of those that failed. */
async function failing(registered: [string, () => Promise<void>][]): Promise<string[]> {
  const failed: string[] = [];
  for (const [name, fn] of registered) await fn().catch(() => failed.push(name));
  return failed;
}

Deno.test("storeConformance() runs the core, every capability a MemoryStore offers, and the boundary cases unless boundary is false", async () => {
  const all = await collect(storeConformance);
  const contract = await collect(storeConformance, { boundary: false });
  const boundary = await collect(boundaryConformance);
  assert.deepEqual(all.names, [...contract.names, ...boundary.names]);
  assert.deepEqual(all.registered.map(([name]) => name), all.names);
  assert.ok(contract.names.length >= 40, `contract cases: ${contract.names.length}`);
  assert.ok(boundary.names.length >= 30, `boundary cases: ${boundary.names.length}`);
  assert.equal(new Set(all.names).size, all.names.length, "names are unique");
  for (const name of all.names) assert.ok(name.startsWith("Probe: "), name);
  // Every capability offered: its cases, and no refusal case.
  for (const method of ["lookupCall()", "listCalls()", "listRuns()", "sealRun()", "exportRun()"]) {
    assert.ok(contract.names.some((name) => name.includes(method)), method);
  }
  assert.equal(contract.names.some((name) => name.includes("a boundary refuses")), false);
  assert.ok(boundary.names.some((name) => name.includes("recall()")));
  // The contract cases never go through a boundary.
  for (const name of contract.names) assert.doesNotMatch(name, /invoke\(\)|boundar/);
});

Deno.test("conformance case names state behaviour, not specification headings", async () => {
  for (const name of (await collect(storeConformance)).names) {
    assert.doesNotMatch(name, /Requirement:|Scenario:|SHALL/, name);
  }
});

Deno.test("a registered conformance case runs on a fresh store and closes it; finding the capabilities makes one store and closes it", async () => {
  let created = 0;
  let closed = 0;
  const { registered } = await collect(storeConformance, {
    boundary: false,
    createStore: () => {
      created++;
      return { store: new MemoryStore(), close: () => void closed++ };
    },
  });
  assert.deepEqual([created, closed], [1, 1], "the store the capabilities were read from");
  for (const [, fn] of registered.slice(0, 3)) await fn();
  assert.deepEqual([created, closed], [4, 4]);
});

Deno.test("a store of the required core alone passes the core cases, and a boundary refuses recall, listCalls, listRuns, exportRun and a ledgerKey with a TypeError naming the capability", async () => {
  assert.deepEqual(capabilitiesOf(coreOnly()), []);
  const { names, registered } = await collect(storeConformance, {
    createStore: () => onFakeClock((clock) => coreOnly(new MemoryStore({ clock }))),
  });
  const refusals = names.filter((name) => name.includes("a boundary refuses"));
  assert.deepEqual(refusals, [
    "Probe: without CallIndex, a boundary refuses recall() and listCalls() with a TypeError naming it",
    "Probe: without RunIndex, a boundary refuses listRuns() with a TypeError naming it",
    "Probe: without RunSeal, a boundary refuses exportRun() and a ledgerKey with a TypeError naming it",
  ]);
  const cases = names.filter((name) => !refusals.includes(name));
  for (const method of ["lookupCall()", "listCalls()", "listRuns()", "sealRun()", "recall()"]) {
    assert.equal(cases.some((name) => name.includes(method)), false, method);
  }
  const full = await collect(storeConformance);
  assert.equal(names.length, full.names.length - 23 + 3, "the capability cases are left out");
  assert.deepEqual(await failing(registered), []);

  // The refusals themselves, as a harness meets them.
  const boundary = new ToolBoundary({ store: coreOnly(), tools: createFakeToolkit().tools });
  const run = await boundary.startRun();
  const envelope = {
    toolCallId: "call_1",
    runId: run.runId,
    toolName: "fake_success",
    input: { query: "disk" },
  };
  assert.equal((await boundary.invoke(run, envelope)).status, "READY");
  const refused = (message: string) => ({ name: "TypeError", message });
  await assert.rejects(
    boundary.recall(run, envelope),
    refused("Cannot recall a call: the store has no CallIndex (lookupCall, listCalls)"),
  );
  await assert.rejects(
    boundary.listCalls(run.runId),
    refused("Cannot list calls: the store has no CallIndex (lookupCall, listCalls)"),
  );
  await assert.rejects(
    boundary.listRuns({ limit: 1 }),
    refused("Cannot list runs: the store has no RunIndex (listRuns)"),
  );
  await assert.rejects(
    boundary.exportRun(run.runId),
    refused("Cannot export a run: the store has no RunSeal (sealRun, exportRun)"),
  );
  const { privateKey } = await generateLedgerKeys();
  assert.throws(
    () => new ToolBoundary({ store: coreOnly(), tools: [], ledgerKey: privateKey }),
    refused(
      "Cannot create ToolBoundary with a ledgerKey: the store has no RunSeal (sealRun, exportRun)",
    ),
  );
  assert.equal((await boundary.endRun(run)).length, 1, "the run ends, its fact read");
});

Deno.test("each capability a store lacks gets its refusal case in place of its cases, and passes", async () => {
  for (const capability of ["CallIndex", "RunIndex", "RunSeal"] as const) {
    const { names, registered } = await collect(storeConformance, {
      createStore: () => onFakeClock((clock) => without(capability, clock)),
    });
    const refusals = names.filter((name) => name.includes("a boundary refuses"));
    assert.equal(refusals.length, 1, capability);
    assert.ok(refusals[0]!.includes(`without ${capability}`), refusals[0]);
    assert.deepEqual(await failing(registered), [], capability);
  }
});

Deno.test("declared capabilities are registered at once and checked: a declaration the store does not keep fails", async () => {
  const declared: string[] = [];
  const pending = storeConformance({
    name: "Probe",
    boundary: false,
    capabilities: ["RunSeal", "CallIndex"],
    createStore: () => ({ store: new MemoryStore() }),
    test: (name) => declared.push(name),
  });
  // Registered before the promise settles: no store was made to find them.
  assert.equal(
    declared[0],
    "Probe: the store offers exactly the capabilities declared: CallIndex, RunSeal",
  );
  assert.ok(declared.some((name) => name.includes("without RunIndex")));
  await pending;

  // Declared, kept: every case passes.
  const kept = await collect(storeConformance, {
    capabilities: ["CallIndex", "RunSeal"],
    createStore: () => onFakeClock((clock) => without("RunIndex", clock)),
  });
  assert.deepEqual(await failing(kept.registered), []);

  // Declared, not kept: the declaration case and the capability's cases fail.
  const broken = await collect(storeConformance, {
    boundary: false,
    capabilities: ["CallIndex", "RunIndex", "RunSeal"],
    createStore: () => onFakeClock((clock) => without("RunIndex", clock)),
  });
  const failed = await failing(broken.registered);
  assert.ok(failed[0]?.includes("offers exactly the capabilities declared"), failed[0]);
  assert.equal(failed.length, 1 + 6, failed.join("\n"));
  assert.ok(failed.slice(1).every((name) => name.includes("listRuns()")));

  // A name that is no capability, or one given twice.
  for (const capabilities of [["listRuns"], ["CallIndex", "CallIndex"]]) {
    await assert.rejects(
      collect(storeConformance, { capabilities: capabilities as StoreCapability[] }),
      TypeError,
    );
  }
});

Deno.test("a store with a capability in part is refused: by the suite, by capabilitiesOf and by a boundary", async () => {
  const store = new MemoryStore();
  Object.defineProperty(store, "listCalls", { value: undefined });
  const message = "The store has an incomplete CallIndex: it lacks listCalls()";
  assert.throws(() => capabilitiesOf(store), { name: "TypeError", message });
  await assert.rejects(collect(storeConformance, { createStore: () => ({ store }) }), {
    name: "TypeError",
    message,
  });
  assert.throws(() => new ToolBoundary({ store, tools: [] }), {
    name: "TypeError",
    message:
      "Cannot create ToolBoundary: the store has an incomplete CallIndex: it lacks listCalls()",
  });
  assert.throws(
    () =>
      new ToolBoundary({
        store: { ...coreOnly(), getRun: undefined } as unknown as Store,
        tools: [],
      }),
    { name: "TypeError", message: "Cannot create ToolBoundary: store lacks getRun()" },
  );
});
