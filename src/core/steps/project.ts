/**
 * Step 6 of `invoke`: the projector turns the recorded raw response into the bounded agent
 * result, under the same stop as the executor, and that result is read once and checked.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "../json.ts";
import { CONTENT_DEPTH } from "../limits.ts";
import { snapshotProjection } from "../progress.ts";
import type { ProjectContext } from "../tool.ts";
import type { RunInstance } from "../types.ts";
import { utf8ByteBound, utf8ByteLength } from "../utf8.ts";
import { type Call, isThenable, STOPPED } from "./call.ts";

/**
 * Projects the raw response (the copy that is recorded) and checks the projection: exactly
 * `{ evidence, scope, content }` (INVALID_PROJECTION), within `agentResultBytes` and, with the
 * record, `recordBytes` (RESULT_TOO_LARGE); a throw or rejection is PROJECTION_FAILED. Decides
 * the call's outcome: READY with the agent's copy, or ERROR keeping the raw response.
 *
 * @returns A promise only when the projector returned one.
 */
export function project(
  call: Call,
  raw: { json: string; value: JsonValue },
): Promise<void> | undefined {
  const rawJson = raw.json;
  let projected: unknown;
  try {
    projected = call.tool.project(
      raw.value,
      new RecordedContext(call.run!, call.toolCallId, call.requestJson),
    );
  } catch (error) {
    call.fail("PROJECTION_FAILED", rawJson, error);
    return;
  }
  const checked = snapshotProjection(projected, CONTENT_DEPTH, call.setup.limits.agentResultBytes);
  if ("problem" in checked) {
    let thenable = false;
    try {
      thenable = isThenable(projected);
    } catch (error) {
      call.fail("INVALID_PROJECTION", rawJson, error);
      return;
    }
    if (thenable) return settle(call, projected as PromiseLike<unknown>, rawJson);
  }
  decide(call, checked, rawJson);
}

/** Awaits the projector's promise until the stage is stopped, and reads its value once. */
async function settle(call: Call, pending: PromiseLike<unknown>, rawJson: string): Promise<void> {
  let projected: unknown;
  try {
    const projecting = Promise.resolve(pending);
    projecting.catch(() => {});
    projected = await Promise.race([projecting, call.stopped()]);
  } catch (error) {
    call.fail("PROJECTION_FAILED", rawJson, error);
    return;
  }
  if (projected === STOPPED) {
    call.fail(call.stopCode!, rawJson);
    return;
  }
  const { agentResultBytes } = call.setup.limits;
  decide(call, snapshotProjection(projected, CONTENT_DEPTH, agentResultBytes), rawJson);
}

/** READY with the checked projection, or the ERROR that keeps the raw response. */
function decide(
  call: Call,
  checked: ReturnType<typeof snapshotProjection>,
  rawJson: string,
): void {
  if ("problem" in checked) {
    const code = checked.problem === "TOO_LARGE" ? "RESULT_TOO_LARGE" : "INVALID_PROJECTION";
    call.fail(code, rawJson, checked.error);
    return;
  }
  const limits = call.setup.limits;
  const agentResultJson = checked.json;
  // Bounds first, as in check: counted only when a bound may not keep a limit.
  const fixed = call.fixedRecordBytes();
  let agentBytes = utf8ByteBound(agentResultJson);
  if (
    agentBytes > limits.agentResultBytes ||
    fixed + call.rawBytes + agentBytes > limits.recordBytes
  ) {
    agentBytes = utf8ByteLength(agentResultJson);
    if (!call.rawBytesExact) call.rawBytes = utf8ByteLength(rawJson);
    call.rawBytesExact = true;
  }
  if (
    agentBytes > limits.agentResultBytes ||
    fixed + call.rawBytes + agentBytes > limits.recordBytes
  ) {
    call.fail("RESULT_TOO_LARGE", rawJson);
    return;
  }
  // The projection is the boundary's own copy, exactly JSON.parse of the stored text: the
  // projector never held it, so the agent sees exactly the recorded result.
  call.projection = checked.projection;
  call.outcome = {
    status: "READY",
    evidence: checked.projection.evidence,
    rawJson,
    agentResultJson,
  };
}

/**
 * What a projector gets besides the raw response. `input` is the recorded request, parsed when
 * first asked for (the tool may have changed its own copy); a class, as an object literal with
 * a getter costs far more to create.
 */
class RecordedContext implements ProjectContext {
  readonly run: RunInstance;
  readonly toolCallId: string;
  readonly #requestJson: string;
  #input: JsonObject | undefined;

  constructor(run: RunInstance, toolCallId: string, requestJson: string) {
    this.run = run;
    this.toolCallId = toolCallId;
    this.#requestJson = requestJson;
  }

  get input(): JsonObject {
    return this.#input ??= JSON.parse(this.#requestJson) as JsonObject;
  }
}
