/**
 * Figure 6: `utf8ByteLength` against `new TextEncoder().encode(s).length` on ASCII, CJK and
 * emoji-heavy strings from 1 KiB to 1 MiB (UTF-8 bytes).
 *
 * Run: `deno task bench` (or `deno bench --config deno.dev.json -A bench/utf8_bench.ts`).
 */
import { utf8ByteLength } from "../src/core/utf8.ts";
import { benchOptions, textOfBytes } from "./_common.ts";

const KINDS = {
  ascii: '{"ts":"2025-01-01T12:00:00Z","level":"warn","line":"upstream timed out after 30s"},',
  cjk: "上游请求超时三十秒后重试日志服务错误",
  emoji: "ok 😀 🚀 fail 🔥 ",
} as const;
const SIZES = [["1 KiB", 1024], ["64 KiB", 65_536], ["1 MiB", 1_048_576]] as const;

const encoder = new TextEncoder();
let sink = 0;

for (const [kind, unit] of Object.entries(KINDS)) {
  for (const [label, bytes] of SIZES) {
    // Decoded from bytes, so the string is flat, like the output of JSON.stringify.
    const text = new TextDecoder().decode(encoder.encode(textOfBytes(unit, bytes)));
    if (utf8ByteLength(text) !== encoder.encode(text).length) {
      throw new Error(`utf8ByteLength disagrees with TextEncoder on ${kind} ${label}`);
    }
    const group = `utf8 ${kind} ${label}`;
    Deno.bench({
      ...benchOptions,
      name: `TextEncoder.encode(s).length, ${kind} ${label}`,
      group,
      baseline: true,
      fn() {
        sink += encoder.encode(text).length;
      },
    });
    Deno.bench({
      ...benchOptions,
      name: `utf8ByteLength(s), ${kind} ${label}`,
      group,
      fn() {
        sink += utf8ByteLength(text);
      },
    });
  }
}

globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
