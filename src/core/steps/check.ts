/**
 * Step 5 of `invoke`: the raw response can be recorded. Plain JSON data within `rawBytes` and,
 * with the request, within `recordBytes`; otherwise the projector is not called.
 *
 * @module
 */
import type { JsonSnapshot, JsonValue } from "../json.ts";
import { utf8ByteBound, utf8ByteLength } from "../utf8.ts";
import type { Call } from "./call.ts";

/**
 * Checks the raw response read by `execute`. Refused data is SERIALIZATION_FAILED, too much is
 * RESULT_TOO_LARGE, and neither is recorded. A `toolError` always fails here, with
 * EXECUTION_FAILED, keeping its raw response when that passed both checks.
 *
 * @returns `true` when the projector may be called.
 */
export function check(
  call: Call,
  raw: JsonSnapshot,
): raw is { json: string; value: JsonValue } {
  const limits = call.setup.limits;
  const failed = call.toolFailed;
  if ("problem" in raw) {
    const code = failed
      ? "EXECUTION_FAILED"
      : raw.problem === "TOO_LARGE"
      ? "RESULT_TOO_LARGE"
      : "SERIALIZATION_FAILED";
    call.fail(code, null, raw.error);
    return false;
  }
  // Everything in the record but the agent result. The raw response's bytes are counted only
  // when their bound may not keep a limit, so every decision is the one exact bytes give.
  const fixed = call.fixedRecordBytes();
  let rawBytes = utf8ByteBound(raw.json);
  let exact = false;
  if (rawBytes > limits.rawBytes || fixed + rawBytes > limits.recordBytes) {
    rawBytes = utf8ByteLength(raw.json);
    exact = true;
  }
  if (rawBytes > limits.rawBytes || fixed + rawBytes > limits.recordBytes) {
    call.fail(failed ? "EXECUTION_FAILED" : "RESULT_TOO_LARGE", null);
    return false;
  }
  if (failed) {
    call.fail("EXECUTION_FAILED", raw.json);
    return false;
  }
  call.rawBytes = rawBytes;
  call.rawBytesExact = exact;
  return true;
}
