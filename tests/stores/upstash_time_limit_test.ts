import assert from "node:assert/strict";
import { TimeLimit } from "../../src/upstash/time_limit.ts";

const never = () => new Promise<never>(() => {});

Deno.test("TimeLimit passes each call's value or error through, and leaves no timer behind", async () => {
  const limit = new TimeLimit(60_000);
  assert.equal(await limit.within(Promise.resolve("a")), "a");
  await assert.rejects(limit.within(Promise.reject(new Error("boom"))), /boom/);
  const many = await Promise.all(
    Array.from({ length: 50 }, (_, i) => limit.within(Promise.resolve(i))),
  );
  assert.deepEqual(many, Array.from({ length: 50 }, (_, i) => i));
  // The test's sanitizer fails it if a timer was left running.
});

Deno.test("TimeLimit fails a call that never answers, while the calls around it answer", async () => {
  const limit = new TimeLimit(30);
  let late: (error: unknown) => void = () => {};
  const lateFailure = new Promise<never>((_, reject) => (late = reject));
  const results = await Promise.allSettled([
    limit.within(Promise.resolve(1)),
    limit.within(never()),
    limit.within(lateFailure),
    limit.within(new Promise((resolve) => setTimeout(() => resolve(2), 1))),
  ]);
  assert.equal(results[0].status === "fulfilled" && results[0].value, 1);
  for (const timedOut of [results[1], results[2]]) {
    assert.equal(timedOut.status, "rejected");
    assert.equal((timedOut as PromiseRejectedResult).reason.name, "TimeoutError");
  }
  assert.equal(results[3].status === "fulfilled" && results[3].value, 2);
  late(new Error("after the timeout: dropped, never unhandled"));
  // Calls made after the others timed out get their own full limit.
  assert.equal(await limit.within(Promise.resolve(3)), 3);
  await assert.rejects(limit.within(never()), { name: "TimeoutError" });
});

Deno.test("TimeLimit fails calls made one after another at their own deadlines", async () => {
  const limit = new TimeLimit(20);
  const first = limit.within(never());
  await new Promise((resolve) => setTimeout(resolve, 5));
  const second = limit.within(never());
  const third = limit.within(Promise.resolve("kept"));
  const order: string[] = [];
  await Promise.all([
    first.catch((error) => order.push(`first ${error.name}`)),
    second.catch((error) => order.push(`second ${error.name}`)),
    third.then((value) => order.push(`third ${value}`)),
  ]);
  assert.deepEqual(order, ["third kept", "first TimeoutError", "second TimeoutError"]);
});
