/**
 * The conformance suite itself: which cases each entry registers, and how they are named.
 */
import assert from "node:assert/strict";
import { MemoryStore } from "../../src/memory/mod.ts";
import {
  boundaryConformance,
  type ConformanceOptions,
  storeConformance,
} from "../../src/testing/mod.ts";

function collect(
  register: (options: ConformanceOptions) => string[],
  extra: Partial<ConformanceOptions> = {},
) {
  const registered: [string, () => Promise<void>][] = [];
  const names = register({
    name: "Probe",
    createStore: () => ({ store: new MemoryStore() }),
    test: (name, fn) => registered.push([name, fn]),
    ...extra,
  });
  return { names, registered };
}

Deno.test("storeConformance() runs the Store contract and the boundary cases unless boundary is false", () => {
  const all = collect(storeConformance);
  const contract = collect(storeConformance, { boundary: false });
  const boundary = collect(boundaryConformance);
  assert.deepEqual(all.names, [...contract.names, ...boundary.names]);
  assert.deepEqual(all.registered.map(([name]) => name), all.names);
  assert.ok(contract.names.length >= 20, `contract cases: ${contract.names.length}`);
  assert.ok(boundary.names.length >= 20, `boundary cases: ${boundary.names.length}`);
  assert.equal(new Set(all.names).size, all.names.length, "names are unique");
  for (const name of all.names) assert.ok(name.startsWith("Probe: "), name);
  // The contract cases never go through a boundary.
  for (const name of contract.names) assert.doesNotMatch(name, /invoke\(\)|boundar/);
});

Deno.test("conformance case names state behaviour, not specification headings", () => {
  for (const name of collect(storeConformance).names) {
    assert.doesNotMatch(name, /Requirement:|Scenario:|SHALL/, name);
  }
});

Deno.test("a registered conformance case runs on a fresh store and closes it", async () => {
  let created = 0;
  let closed = 0;
  const { registered } = collect(storeConformance, {
    boundary: false,
    createStore: () => {
      created++;
      return { store: new MemoryStore(), close: () => void closed++ };
    },
  });
  for (const [, fn] of registered.slice(0, 3)) await fn();
  assert.deepEqual([created, closed], [3, 3]);
});

/** A MemoryStore without its listRuns: a store that lacks the capability. */
function withoutListRuns(): MemoryStore {
  const store = new MemoryStore();
  Object.defineProperty(store, "listRuns", { value: undefined });
  return store;
}

Deno.test("a store that declares it lacks listRuns gets one case that checks it has none, and passes", async () => {
  const declared = collect(storeConformance, {
    boundary: false,
    lacks: ["listRuns"],
    createStore: () => ({ store: withoutListRuns() }),
  });
  const listCases = declared.registered.filter(([name]) => name.includes("listRuns()"));
  assert.deepEqual(listCases.map(([name]) => name), [
    "Probe: listRuns() is declared absent, and the store has none",
  ]);
  await listCases[0]![1]();
  // Declared absent on a store that has it: the case fails.
  const wrong = collect(storeConformance, { boundary: false, lacks: ["listRuns"] });
  const [, check] = wrong.registered.find(([name]) => name.includes("declared absent"))!;
  await assert.rejects(check());
});

Deno.test("a store without listRuns that does not declare it fails the listRuns cases", async () => {
  const undeclared = collect(storeConformance, {
    boundary: false,
    createStore: () => ({ store: withoutListRuns() }),
  });
  const listCases = undeclared.registered.filter(([name]) => name.includes("listRuns()"));
  assert.equal(listCases.length, 5);
  for (const [name, fn] of listCases) await assert.rejects(fn(), name);
});
