import assert from "node:assert/strict";
import { InFlightCalls } from "../../src/mcp/in_flight.ts";

Deno.test("InFlightCalls: one id held by calls of several sessions and runs", () => {
  const calls = new InFlightCalls();
  const a = calls.add("run-1", "session-a", 1)!;
  const b = calls.add("run-1", "session-b", 1)!;
  const c = calls.add("run-2", "session-a", 1)!;
  const s = calls.add("run-1", "session-a", "1")!;
  assert.ok(a && b && c && s);
  assert.equal(calls.size, 4);
  assert.equal(calls.add("run-1", "session-b", 1), undefined); // held already
  assert.equal(calls.add("run-1", "session-a", 1), undefined);
  assert.equal(calls.cancel("run-1", "session-c", 1), false);
  assert.equal(calls.cancel("run-1", "session-b", 1), true);
  assert.deepEqual([a.aborted, b.aborted, c.aborted, s.aborted], [false, true, false, false]);
  calls.remove("run-1", "session-b", 1);
  calls.remove("run-1", "session-b", 1); // a second remove changes nothing
  calls.remove("run-1", "session-c", 1); // never held
  assert.equal(calls.size, 3);
  calls.remove("run-1", "session-a", 1);
  calls.remove("run-2", "session-a", 1);
  assert.equal(calls.cancel("run-2", "session-a", 1), false);
  assert.equal(calls.size, 1);
  // The id is free again, for any session.
  const again = calls.add("run-3", "session-d", 1)!;
  assert.equal(calls.cancel("run-3", "session-d", 1), true);
  assert.equal(again.aborted, true);
  assert.equal(calls.cancel("run-1", "session-a", "1"), true);
  assert.equal(s.aborted, true);
  calls.remove("run-3", "session-d", 1);
  calls.remove("run-1", "session-a", "1");
  assert.equal(calls.size, 0);
});

Deno.test("InFlightCalls: a single holder is only removed by its own session", () => {
  const calls = new InFlightCalls(2);
  const a = calls.add("run-1", "session-a", 7)!;
  calls.remove("run-1", "session-b", 7);
  calls.remove("run-2", "session-a", 7);
  assert.equal(calls.size, 1);
  assert.equal(calls.cancel("run-1", "session-a", 7), true);
  assert.equal(a.aborted, true);
  assert.ok(calls.add("run-1", "session-b", 7));
  assert.equal(calls.add("run-1", "session-c", 7), undefined); // full: runs, not cancellable
  assert.equal(calls.size, 2);
});
