import assert from "node:assert/strict";
import fc from "fast-check";
import { entryBound, entryBytes, packBySize } from "../../src/upstash/batch.ts";

/** The packing by exact sizes alone, as the batcher packed before it had bounds. */
function packExactly(sizes: readonly number[], max: number): number[][] {
  const groups: number[][] = [];
  let group: number[] = [];
  let bytes = 0;
  for (const size of sizes) {
    if (size > max) {
      groups.push([size]);
      continue;
    }
    if (group.length > 0 && bytes + size > max) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(size);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

Deno.test("packBySize() with any upper bound gives the groups of exact sizes", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 300 })), {
        maxLength: 40,
      }),
      fc.integer({ min: 1, max: 200 }),
      (items, max) => {
        const slack = new Map(items.map(([size, extra], i) => [i, size + extra]));
        const indexed = items.map(([size], i) => ({ i, size }));
        const groups = packBySize(indexed, max, (item) => item.size, (item) => slack.get(item.i)!);
        assert.deepEqual(
          groups.map((group) => group.map((item) => item.size)),
          packExactly(items.map(([size]) => size), max),
        );
        // Every item once, in order within its group (an item alone may come before the group
        // that was open when it came).
        assert.deepEqual(
          groups.flat().map((item) => item.i).sort((a, b) => a - b),
          indexed.map((item) => item.i),
        );
        for (const group of groups) {
          assert.deepEqual(
            group.map((item) => item.i),
            group.map((item) => item.i).sort((a, b) => a - b),
          );
        }
      },
    ),
    { numRuns: 3_000 },
  );
});

Deno.test("packBySize() asks an item's exact size only when its group's bound may not fit", () => {
  const asked: number[] = [];
  const groups = packBySize([1, 2, 3], 100, (n) => (asked.push(n), n), (n) => n * 6);
  assert.deepEqual(groups, [[1, 2, 3]]);
  assert.deepEqual(asked, []);
});

Deno.test("entryBound() is at least entryBytes() for any keys and arguments", () => {
  const text = fc.oneof(
    fc.string({ unit: "binary", maxLength: 20 }),
    fc.array(
      fc.constantFrom("\u0000", "\u001f", '"', "\\", "\ud800", "\udfff", "😀", "é", "日", "a"),
      {
        maxLength: 30,
      },
    ).map((units) => units.join("")),
  );
  fc.assert(
    fc.property(
      fc.array(text, { maxLength: 4 }),
      fc.array(text, { maxLength: 16 }),
      (keys, args) => {
        const sha = "a".repeat(40);
        assert.ok(entryBound(sha, keys, args) >= entryBytes(sha, keys, args));
      },
    ),
    { numRuns: 3_000 },
  );
});
