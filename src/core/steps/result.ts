/**
 * Step 8 of `invoke`: what the agent gets, the bounded result exactly as recorded or a safe
 * error code.
 *
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import type { BoundaryResult } from "../types.ts";
import { type Call, errorResult } from "./call.ts";

/**
 * The agent's result: READY with the recorded projection only when the record became READY,
 * else the code and its fixed message.
 *
 * @param code What `complete` returned.
 */
export function result(call: Call, code: ErrorCode | null): BoundaryResult {
  const { toolCallId, projection } = call;
  if (code !== null || projection === null) {
    return errorResult(toolCallId, code ?? "ILLEGAL_TRANSITION");
  }
  const { evidence, scope, content } = projection;
  return { status: "READY", toolCallId, evidence, scope, content };
}
