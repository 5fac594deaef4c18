/**
 * Figure 11: each speed trick of `src/` against its plain twin, side by side in one run, on the
 * work it does within one invoke (see `_plain_twins.ts` for the list; what each buys on a whole
 * invoke is `BENCH_PLAIN=1 deno task bench:memory`).
 *
 * Run: `deno task bench` (or `deno bench --config deno.dev.json -A bench/tricks_bench.ts`).
 *
 * @module
 */
import { PendingDigest, requestDigestNow } from "../src/core/digest.ts";
import { type JsonValue, snapshotJson, snapshotParsed } from "../src/core/json.ts";
import { sha256Base64url } from "../src/core/ledger.ts";
import { sha256Short } from "../src/core/sha256.ts";
import { utf8ByteLength } from "../src/core/utf8.ts";
import { IdTable } from "../src/stores/id_table.ts";
import { benchOptions, FIGURE3_INPUT, logRaw } from "./_common.ts";

let sink = 0;
const encoder = new TextEncoder();

// MemoryStore's tables: each call sets a new tool call ID, reads it back twice and later drops
// it, 100 calls per run; the IDs are new strings, as parsed from a request.
const IDS_PER_RUN = 100;
let idSeq = 0;
function idTableRun(table: Map<string, number> | IdTable<number>): void {
  const ids: string[] = [];
  for (let i = 0; i < IDS_PER_RUN; i++) ids.push(`call_${idSeq++}`);
  for (const id of ids) {
    table.set(id, idSeq);
    sink += table.get(id)! + (table.has(id) ? 1 : 0);
  }
  for (const id of ids) table.delete(id);
}
Deno.bench({
  ...benchOptions,
  name: `Map: set, get, has, delete of ${IDS_PER_RUN} new IDs`,
  group: "id table",
  baseline: true,
  fn: () => idTableRun(new Map()),
});
Deno.bench({
  ...benchOptions,
  name: `IdTable: set, get, has, delete of ${IDS_PER_RUN} new IDs`,
  group: "id table",
  fn: () => idTableRun(new IdTable()),
});

// The canonical request text of figure 3's call, and one just under the short path's bound.
const REQUEST = `{"input":${FIGURE3_INPUT},"toolName":"search_logs"}`;
const LONG_REQUEST = `{"input":{"q":"${"x".repeat(470)}"},"toolName":"t"}`;
for (const text of [REQUEST, LONG_REQUEST]) {
  const label = `${encoder.encode(text).length} B`;
  Deno.bench({
    ...benchOptions,
    name: `sha256Base64url (WebCrypto), ${label}`,
    group: `sha256 ${label}`,
    baseline: true,
    async fn() {
      sink += (await sha256Base64url(text)).length;
    },
  });
  Deno.bench({
    ...benchOptions,
    name: `sha256Short (JS), ${label}`,
    group: `sha256 ${label}`,
    fn() {
      sink += sha256Short(text)!.length;
    },
  });
}

// What begin does for the digest: hash now, or keep a PendingDigest that is never read.
const input = JSON.parse(FIGURE3_INPUT) as JsonValue;
Deno.bench({
  ...benchOptions,
  name: "requestDigestNow (SHA-256 in JS at begin)",
  group: "request digest at begin",
  baseline: true,
  fn() {
    sink += (requestDigestNow("search_logs", input) as string).length;
  },
});
Deno.bench({
  ...benchOptions,
  name: "PendingDigest.of (hashed only if read)",
  group: "request digest at begin",
  fn() {
    sink += PendingDigest.of("search_logs", FIGURE3_INPUT, FIGURE3_INPUT.length) === null ? 0 : 1;
  },
});

// The texts an invoke counts: the request, and a 1 KiB raw response.
for (const text of [FIGURE3_INPUT, JSON.stringify(logRaw(1024))]) {
  const label = `${encoder.encode(text).length} B`;
  Deno.bench({
    ...benchOptions,
    name: `TextEncoder.encode(s).length, ${label}`,
    group: `utf8 ${label}`,
    baseline: true,
    fn() {
      sink += encoder.encode(text).length;
    },
  });
  Deno.bench({
    ...benchOptions,
    name: `utf8ByteLength(s), ${label}`,
    group: `utf8 ${label}`,
    fn() {
      sink += utf8ByteLength(text);
    },
  });
}

// The boundary's own parse of the arguments text: copied and checked, or checked in place.
Deno.bench({
  ...benchOptions,
  name: "JSON.parse + snapshotJson (a copy)",
  group: "parsed input",
  baseline: true,
  fn() {
    const snapshot = snapshotJson(JSON.parse(FIGURE3_INPUT), 64);
    sink += "json" in snapshot ? snapshot.json.length : 0;
  },
});
Deno.bench({
  ...benchOptions,
  name: "JSON.parse + snapshotParsed (no copy)",
  group: "parsed input",
  fn() {
    const snapshot = snapshotParsed(JSON.parse(FIGURE3_INPUT), 64);
    sink += "json" in snapshot ? snapshot.json.length : 0;
  },
});

globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
