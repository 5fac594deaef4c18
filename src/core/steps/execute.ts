/**
 * Step 4 of `invoke`: runs the tool, under the tool stage's one stop (its time limit, the run
 * deadline, the caller's signal), and reads what it returned once: plain data, JSON text
 * (`rawJson(text)`), or a `Response`.
 *
 * @module
 */
import { type JsonSnapshot, snapshotJson, snapshotText } from "../json.ts";
import { DEFAULT_TOOL_TIMEOUT_MS } from "../limits.ts";
import {
  BODY_TOO_LARGE,
  isJsonMediaType,
  isRawJson,
  readBodyText,
  type ResponseHead,
  responseHead,
} from "../raw_json.ts";
import { isToolError, type ToolError } from "../tool.ts";
import { utf8ByteBound, utf8ByteLength } from "../utf8.ts";
import { type Call, isThenable, STOPPED } from "./call.ts";

/**
 * Executes the tool with the recorded request, awaits it when it returns a promise, and reads
 * the value once. A thrown or rejected executor is EXECUTION_FAILED, its record keeping what it
 * threw as `failure` (TOOL_TIMEOUT or CANCELLED, with no failure, when the stage was stopped);
 * `toolError(raw)` gives the snapshot of its `raw`, marked for `check` to fail the call with.
 * `rawJson(text)` is parsed once (`snapshotText`); a `Response`'s body is read as text under the
 * same stop, then parsed so, or (not a 2xx of JSON) taken as the tool's failure.
 *
 * @returns The raw response read once (maybe refused: `check` decides), or `null` when the
 *   call's outcome is decided; a promise of either only when the executor returned one or the
 *   body of a `Response` is read.
 */
export function execute(call: Call): JsonSnapshot | null | Promise<JsonSnapshot | null> {
  const signal = call.startTool(call.tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS);
  let raw: unknown;
  try {
    raw = call.tool.execute(call.input, {
      signal,
      run: call.run!,
      toolCallId: call.toolCallId,
      settle: call.cost === undefined ? withoutCost : (spent: number) => call.settle(spent),
    });
  } catch (error) {
    return call.threw(error);
  }
  return readRaw(call, raw, true);
}

/** `ctx.settle` of a tool without a cost: nothing to settle, so a call is a mistake. */
function withoutCost(): never {
  throw new TypeError("Cannot settle: this tool has no cost");
}

/**
 * Reads what the executor returned (or its promise resolved to) once. Plain data is read by the
 * snapshot; only what it refuses is asked whether it is a `Response` or (unless it was awaited
 * already) a promise, its `then` read as `await` would.
 */
function readRaw(
  call: Call,
  raw: unknown,
  mayBePromise: boolean,
): JsonSnapshot | null | Promise<JsonSnapshot | null> {
  if (isToolError(raw)) return failedWith(call, raw);
  const { rawDepth, rawBytes } = call.setup.limits;
  if (isRawJson(raw)) return snapshotRawText(raw.text, rawDepth, rawBytes);
  const snapshot = snapshotJson(raw, rawDepth, rawBytes);
  if (!("problem" in snapshot)) return snapshot;
  let head: ResponseHead | null;
  let thenable = false;
  try {
    head = responseHead(raw);
    if (head === null && mayBePromise) thenable = isThenable(raw);
  } catch (error) {
    // A Proxy's trap threw while the runtime asked it whether it is a Response, or `then`.
    return call.fail("SERIALIZATION_FAILED", null, error);
  }
  if (head !== null) return readResponse(call, head);
  return thenable ? settle(call, raw as PromiseLike<unknown>) : snapshot;
}

/** Awaits the executor's promise until the stage is stopped, and reads its value once. */
async function settle(call: Call, pending: PromiseLike<unknown>): Promise<JsonSnapshot | null> {
  let raw: unknown;
  try {
    const running = Promise.resolve(pending);
    running.catch(() => {}); // a late rejection after a stop is not unhandled
    raw = await Promise.race([running, call.stopped()]);
  } catch (error) {
    // Rejected after a stop: the stop decides, and what the tool threw then is not its failure.
    return call.stopCode === null ? call.threw(error) : call.fail(call.stopCode, null, error);
  }
  if (raw === STOPPED) return call.fail(call.stopCode!, null);
  return await readRaw(call, raw, false);
}

/** The tool failed and said so: its raw response is read once, and the call fails in `check`. */
function failedWith(call: Call, failure: ToolError): JsonSnapshot {
  call.toolFailed = true;
  // A frozen object of the boundary's own: reading `raw` runs no foreign code.
  const { rawDepth, rawBytes } = call.setup.limits;
  const raw = failure.raw;
  return isRawJson(raw)
    ? snapshotRawText(raw.text, rawDepth, rawBytes)
    : snapshotJson(raw, rawDepth, rawBytes);
}

/**
 * JSON text given as the raw response, parsed once: a text of more than `rawBytes` UTF-8 bytes
 * is TOO_LARGE unparsed (counted only when its bound may not keep the limit); `check` then holds
 * the stored text, what was parsed written out again, to the limits.
 */
function snapshotRawText(text: string, rawDepth: number, rawBytes: number): JsonSnapshot {
  if (utf8ByteBound(text) > rawBytes && utf8ByteLength(text) > rawBytes) {
    return { problem: "TOO_LARGE" };
  }
  return snapshotText(text, rawDepth);
}

/**
 * Reads a `Response`'s body under the stage's stop, within `rawBytes`. A 2xx of JSON is its text,
 * parsed once; anything else is the tool's failure, kept
 * as `{ status, contentType, body }`. A body past `rawBytes` is TOO_LARGE, unread past the limit;
 * a stream that fails is the executor's failure, as a throw is.
 */
async function readResponse(call: Call, head: ResponseHead): Promise<JsonSnapshot | null> {
  const { rawDepth, rawBytes } = call.setup.limits;
  const json = head.status >= 200 && head.status <= 299 && isJsonMediaType(head.contentType);
  let cancel: ((reason?: unknown) => void) | undefined;
  let read: string | typeof BODY_TOO_LARGE | typeof STOPPED;
  try {
    const reading = readBodyText(head.body, rawBytes, (cancelRead) => cancel = cancelRead);
    reading.catch(() => {}); // a stream that fails after a stop is not unhandled
    read = await Promise.race([reading, call.stopped()]);
  } catch (error) {
    cancel?.();
    return call.stopCode === null ? call.threw(error) : call.fail(call.stopCode, null, error);
  }
  if (read === STOPPED) {
    cancel?.(call.stopCode);
    return call.fail(call.stopCode!, null);
  }
  if (read === BODY_TOO_LARGE) {
    if (!json) call.toolFailed = true;
    return { problem: "TOO_LARGE" };
  }
  if (json) return snapshotText(read, rawDepth);
  call.toolFailed = true;
  const failure = { status: head.status, contentType: head.contentType, body: read };
  return snapshotJson(failure, rawDepth, rawBytes);
}
