/**
 * `IdTable`: a map from ID strings to values, for `MemoryStore`'s tables keyed by tool call ID.
 *
 * A speed trick; its plain twin is a `Map`. A `Map` keyed by a string it has not seen before
 * hashes that string through V8's string table: the first lookup of each new tool call ID inserts
 * it there (and the entry is deleted again once the ID is collected). This table hashes an ID
 * itself (FNV-1a over its UTF-16 code units, a small integer that a `Map` holds without touching
 * the string table) and compares the strings on a match. IDs whose hashes collide go together
 * into a `Map` keyed by the string, so that IDs chosen to collide cost what a `Map` costs, never a
 * longer search.
 *
 * It keeps the subset of the `Map` interface the store uses, in insertion order, and answers as a
 * `Map` does for any sequence of operations (`tests/stores/id_table_test.ts`, property-based,
 * colliding keys included).
 *
 * Measured gain, side by side in one process (BENCHMARKS.md, figure 11): a MemoryStore invoke
 * (1 KiB raw) on a copy of `src/` with a `Map` here is 1.026x as slow (median of 5 runs of
 * `BENCH_PLAIN=1 deno task bench:memory`; 1.013x to 1.063x): this table saves about 2.5% of the
 * invoke, 0.25 us of 9.7. On its own work (100 new IDs set, read twice and deleted, in
 * `deno bench --config deno.dev.json -A bench/tricks_bench.ts`) it is 1.4x to 2.9x as fast.
 *
 * @module
 */

/** One key and its value. */
interface Entry<V> {
  readonly key: string;
  value: V;
  /** Position in the insertion order; -1 once deleted. */
  at: number;
}

/**
 * A key's hash: FNV-1a (32 bits) folded to 30 bits, an integer V8 keeps unboxed.
 *
 * @param key Any string.
 * @returns An integer from 0 to 2^30 - 1.
 */
export function hashOf(key: string): number {
  // One operation of the store asks for the same key's hash a few times.
  if (key === lastKey) return lastHash;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  lastKey = key;
  return lastHash = (hash ^ (hash >>> 30)) & 0x3fffffff;
}

/** The last key hashed, and its hash. */
let lastKey: string | undefined;
let lastHash = 0;

/**
 * A string-keyed map that never hashes its keys through the string table (see the module).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { IdTable } from "./id_table.ts";
 * const table = new IdTable<number>([["call_1", 1]]);
 * table.set("call_2", 2);
 * assert.equal(table.get("call_2"), 2);
 * assert.equal(table.delete("call_1"), true);
 * assert.deepEqual([...table], [["call_2", 2]]);
 * ```
 */
export class IdTable<V> {
  /** By hash: the one entry with it, or every entry with it by key (a collision). */
  readonly #byHash = new Map<number, Entry<V> | Map<string, Entry<V>>>();
  /** Insertion order; deleted entries leave a hole until the order is compacted. */
  #order: (Entry<V> | undefined)[] = [];
  #size = 0;

  /**
   * Creates a table.
   *
   * @param entries Keys and values to start with, in order.
   */
  constructor(entries: Iterable<readonly [string, V]> = []) {
    for (const [key, value] of entries) this.set(key, value);
  }

  /** How many keys the table holds. */
  get size(): number {
    return this.#size;
  }

  #entry(key: string): Entry<V> | undefined {
    const found = this.#byHash.get(hashOf(key));
    if (found === undefined) return undefined;
    if (found instanceof Map) return found.get(key);
    return found.key === key ? found : undefined;
  }

  /** The value of `key`, or `undefined`. */
  get(key: string): V | undefined {
    return this.#entry(key)?.value;
  }

  /** Whether the table holds `key`. */
  has(key: string): boolean {
    return this.#entry(key) !== undefined;
  }

  /** Sets the value of `key`; a new key goes last in the order. */
  set(key: string, value: V): this {
    const hash = hashOf(key);
    const found = this.#byHash.get(hash);
    if (found !== undefined && !(found instanceof Map) && found.key === key) {
      found.value = value;
      return this;
    }
    const same = found instanceof Map ? found.get(key) : undefined;
    if (same !== undefined) {
      same.value = value;
      return this;
    }
    const entry: Entry<V> = { key, value, at: this.#order.length };
    this.#order.push(entry);
    this.#size++;
    if (found === undefined) this.#byHash.set(hash, entry);
    else if (found instanceof Map) found.set(key, entry);
    else this.#byHash.set(hash, new Map([[found.key, found], [key, entry]]));
    return this;
  }

  /** Removes `key`; returns whether it was there. */
  delete(key: string): boolean {
    const hash = hashOf(key);
    const found = this.#byHash.get(hash);
    let entry: Entry<V> | undefined;
    if (found instanceof Map) {
      entry = found.get(key);
      if (entry === undefined) return false;
      found.delete(key);
      if (found.size === 0) this.#byHash.delete(hash);
    } else {
      if (found === undefined || found.key !== key) return false;
      entry = found;
      this.#byHash.delete(hash);
    }
    this.#order[entry.at] = undefined;
    entry.at = -1;
    this.#size--;
    // Compacted once holes are most of it: each delete costs O(1) amortized.
    if (this.#size < this.#order.length >> 1) this.#compact();
    return true;
  }

  /** Removes every key. */
  clear(): void {
    this.#byHash.clear();
    this.#order = [];
    this.#size = 0;
  }

  #compact(): void {
    const order: Entry<V>[] = [];
    for (const entry of this.#order) {
      if (entry === undefined) continue;
      entry.at = order.length;
      order.push(entry);
    }
    this.#order = order;
  }

  /** The keys, in insertion order. */
  *keys(): IterableIterator<string> {
    for (const entry of this.#live()) yield entry.key;
  }

  /** The values, in insertion order. */
  *values(): IterableIterator<V> {
    for (const entry of this.#live()) yield entry.value;
  }

  /** `[key, value]` pairs, in insertion order. */
  *entries(): IterableIterator<[string, V]> {
    for (const entry of this.#live()) yield [entry.key, entry.value];
  }

  /** `[key, value]` pairs, in insertion order. */
  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /**
   * The live entries, in order. An entry deleted while iterating is skipped; one added may not
   * be seen (the store adds none while it iterates).
   */
  *#live(): IterableIterator<Entry<V>> {
    const order = this.#order;
    for (let i = 0; i < order.length; i++) {
      const entry = order[i];
      if (entry !== undefined && entry.at !== -1) yield entry;
    }
  }
}
