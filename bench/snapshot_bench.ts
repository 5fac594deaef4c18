/**
 * What reading a raw response once costs: `snapshotJson` (one walk into a plain copy, then
 * `JSON.stringify` of the copy) against the path it replaced, the strict check followed by
 * `JSON.stringify` of the tool's own object (which read every property twice and let a hidden
 * `toJSON` run). Raw payloads of 1 KiB and 64 KiB, as in figure 3.
 *
 * Run: `deno task bench` (or `deno bench --config deno.dev.json -A bench/snapshot_bench.ts`).
 */
import { snapshotJson } from "../src/core/json.ts";
import { benchOptions, logRaw } from "./_common.ts";

/** The check of the replaced path, as it was: a for-in walk reading each value with a get. */
function checkedBefore(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object": {
      if (value === null) return true;
      if (depth < 1) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!(i in value) || !checkedBefore(value[i], depth - 1)) return false;
        }
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!checkedBefore((value as Record<string, unknown>)[key], depth - 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

const RAW_DEPTH = 512;
let sink = 0;

for (const [label, bytes] of [["1 KiB", 1024], ["64 KiB", 65_536]] as const) {
  const raw = logRaw(bytes);
  const group = `snapshot ${label}`;
  Deno.bench({
    ...benchOptions,
    name: `before: strict check + JSON.stringify of the tool's object, ${label}`,
    group,
    baseline: true,
    fn() {
      if (checkedBefore(raw, RAW_DEPTH)) sink += JSON.stringify(raw).length;
    },
  });
  Deno.bench({
    ...benchOptions,
    name: `snapshotJson: one read into a copy + JSON.stringify of the copy, ${label}`,
    group,
    fn() {
      const snapshot = snapshotJson(raw, RAW_DEPTH, 1_048_576);
      if ("json" in snapshot) sink += snapshot.json.length;
    },
  });
}

globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
