import assert from "node:assert/strict";
import { MemoryStore } from "../../src/memory/mod.ts";
import { storeConformance } from "../../src/testing/mod.ts";

/** A store that has forgotten every run: most contract cases fail on it. */
class ForgetfulStore extends MemoryStore {
  override getRun() {
    return Promise.resolve(null);
  }
}

Deno.test("a failing conformance case names the file and line of the case itself", async () => {
  const cases = new Map<string, () => Promise<void>>();
  await storeConformance({
    name: "Forgetful",
    createStore: () => ({ store: new ForgetfulStore() }),
    boundary: false,
    test: (name, fn) => cases.set(name, fn),
  });
  const failing = [...cases].find(([name]) => name.includes("startRun() refuses an existing"));
  assert.ok(failing, "the startRun case is registered");
  const error = await failing[1]().then(() => null, (caught: unknown) => caught);
  assert.ok(error instanceof Error, "the case fails on a store that forgets runs");
  assert.match(error.message, /\(conformance case at .*store_runs\.ts:\d+:\d+\)/);
  assert.match(String(error.stack), /conformance case at .*store_runs\.ts:\d+:\d+/);
});
