import assert from "node:assert/strict";
import fc from "fast-check";
import { hashOf, IdTable } from "../../src/memory/id_table.ts";

/** Pairs of distinct keys with the same hash, found by search: the table's collision path. */
function collidingKeys(pairs: number): string[] {
  const seen = new Map<number, string>();
  const keys: string[] = [];
  for (let i = 0; keys.length < pairs * 2; i++) {
    const key = `call_${i}`;
    const hash = hashOf(key);
    const before = seen.get(hash);
    if (before === undefined) seen.set(hash, key);
    else keys.push(before, key);
  }
  return keys;
}

const COLLIDING = collidingKeys(3);

Deno.test("hashOf() gives the same 30-bit integer for equal strings", () => {
  assert.equal(hashOf("call_1"), hashOf(["call", "1"].join("_")));
  for (const key of ["", "a", "\ud800", "😀", "x".repeat(300), ...COLLIDING]) {
    const hash = hashOf(key);
    assert.ok(Number.isInteger(hash) && hash >= 0 && hash < 2 ** 30);
  }
  assert.equal(hashOf(COLLIDING[0]!), hashOf(COLLIDING[1]!));
  assert.notEqual(COLLIDING[0], COLLIDING[1]);
});

Deno.test("IdTable behaves as a Map for any sequence of sets, deletes and reads, colliding keys too", () => {
  const key = fc.oneof(
    fc.constantFrom(...COLLIDING),
    fc.string({ maxLength: 4 }),
    fc.string({ unit: "binary", maxLength: 3 }),
  );
  const op = fc.oneof(
    { arbitrary: fc.tuple(fc.constant("set" as const), key, fc.integer()), weight: 10 },
    { arbitrary: fc.tuple(fc.constant("delete" as const), key, fc.constant(0)), weight: 6 },
    {
      arbitrary: fc.tuple(fc.constant("clear" as const), fc.constant(""), fc.constant(0)),
      weight: 1,
    },
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 80 }), fc.array(key, { maxLength: 10 }), (ops, reads) => {
      const table = new IdTable<number>();
      const map = new Map<string, number>();
      for (const [name, k, value] of ops) {
        if (name === "set") {
          assert.equal(table.set(k, value), table);
          map.set(k, value);
        } else if (name === "delete") {
          assert.equal(table.delete(k), map.delete(k));
        } else {
          table.clear();
          map.clear();
        }
        assert.equal(table.size, map.size);
      }
      for (const k of [...reads, ...COLLIDING]) {
        assert.equal(table.get(k), map.get(k));
        assert.equal(table.has(k), map.has(k));
      }
      assert.deepEqual([...table], [...map]);
      assert.deepEqual([...table.keys()], [...map.keys()]);
      assert.deepEqual([...table.values()], [...map.values()]);
      assert.deepEqual([...table.entries()], [...map.entries()]);
      assert.deepEqual([...new IdTable(map)], [...map]);
    }),
    { numRuns: 2_000 },
  );
});

Deno.test("IdTable keeps insertion order across many deletes (compaction) and skips keys deleted while iterating", () => {
  const table = new IdTable<number>();
  for (let i = 0; i < 1_000; i++) table.set(`k${i}`, i);
  for (let i = 0; i < 1_000; i += 3) table.delete(`k${i}`);
  for (let i = 1; i < 1_000; i += 3) table.delete(`k${i}`);
  table.set("k1", -1);
  const expected = [];
  for (let i = 2; i < 1_000; i += 3) expected.push(`k${i}`);
  expected.push("k1");
  assert.deepEqual([...table.keys()], expected);
  const seen: string[] = [];
  for (const key of table.keys()) {
    seen.push(key);
    if (key === "k2") table.delete("k5");
  }
  assert.equal(seen.includes("k5"), false);
  assert.equal(seen.length, expected.length - 1);
});
