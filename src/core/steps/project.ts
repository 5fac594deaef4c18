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
import type { RunContext } from "../types.ts";
import { utf8ByteLength } from "../utf8.ts";
import { type Call, isThenable, STOPPED } from "./call.ts";

/**
 * Projects the raw response (the copy that is recorded) and checks the projection: exactly
 * `{ evidence, scope, content }` (INVALID_PROJECTION), within `agentResultBytes` and, with the
 * record, `recordBytes` (RESULT_TOO_LARGE); a throw or rejection is PROJECTION_FAILED. Decides
 * the call's outcome: READY with the agent's copy, or ERROR keeping the raw response.
 */
export async function project(call: Call, raw: { json: string; value: JsonValue }): Promise<void> {
  const limits = call.setup.limits;
  const rawJson = raw.json;
  let projected: unknown;
  try {
    projected = call.tool.project(
      raw.value,
      new RecordedContext(call.run, call.toolCallId, call.requestJson),
    );
  } catch (error) {
    call.fail("PROJECTION_FAILED", rawJson, error);
    return;
  }
  const { agentResultBytes } = limits;
  let checked = snapshotProjection(projected, CONTENT_DEPTH, agentResultBytes);
  if ("problem" in checked) {
    let thenable = false;
    try {
      thenable = isThenable(projected);
    } catch (error) {
      call.fail("INVALID_PROJECTION", rawJson, error);
      return;
    }
    if (thenable) {
      try {
        const projecting = Promise.resolve(projected);
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
      checked = snapshotProjection(projected, CONTENT_DEPTH, agentResultBytes);
    }
  }
  if ("problem" in checked) {
    const code = checked.problem === "TOO_LARGE" ? "RESULT_TOO_LARGE" : "INVALID_PROJECTION";
    call.fail(code, rawJson, checked.error);
    return;
  }
  const agentResultJson = checked.json;
  const agentBytes = utf8ByteLength(agentResultJson);
  if (agentBytes > agentResultBytes || call.recordBytes + agentBytes > limits.recordBytes) {
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
  readonly run: RunContext;
  readonly toolCallId: string;
  readonly #requestJson: string;
  #input: JsonObject | undefined;

  constructor(run: RunContext, toolCallId: string, requestJson: string) {
    this.run = run;
    this.toolCallId = toolCallId;
    this.#requestJson = requestJson;
  }

  get input(): JsonObject {
    return this.#input ??= JSON.parse(this.#requestJson) as JsonObject;
  }
}
