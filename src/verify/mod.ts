/**
 * Verifies an exported run (`ToolBoundary.exportRun`) with nothing but the ledger's public key:
 * no store, no network, Web APIs only (WebCrypto; `pkijs` and `asn1js`, pure JavaScript, read
 * RFC 3161 timestamps for `tsaCertificates`), so it runs in Deno, workerd, Bun and browsers. Run
 * as a program it verifies a bundle file:
 * `deno run jsr:@tool-boundary/core/verify bundle.json public.jwk [--tsa cert.pem]` (exit 0 when
 * it verifies, 1 printing the verdict when not).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool, generateLedgerKeys, ToolBoundary } from "@tool-boundary/core";
 * import { verifyRun } from "@tool-boundary/core/verify";
 * const echo = defineTool({
 *   name: "echo",
 *   readOnly: true,
 *   execute: (input) => input,
 *   project: () => ({ evidence: "NO_EVIDENCE", scope: "echo", content: null }),
 * });
 * const keys = await generateLedgerKeys();
 * const boundary = new ToolBoundary({ tools: [echo], ledgerKey: keys.privateKey });
 * const run = await boundary.startRun();
 * for (const id of ["call_1", "call_2"]) {
 *   await boundary.invoke(run, { toolCallId: id, runId: run.runId, toolName: "echo", input: {} });
 * }
 * // Before the end: each record's own signature, and its signed position in the run.
 * const open = await boundary.exportRun(run.runId);
 * assert.deepEqual(await verifyRun(open, keys.publicKey), { ok: true, sealed: false, calls: 2 });
 * assert.deepEqual(await verifyRun({ ...open, records: [open.records[1]] }, keys.publicKey), {
 *   ok: false, toolCallId: null, reason: "MISSING", seq: 1,
 * });
 * await boundary.endRun(run);
 * const bundle = await boundary.exportRun(run.runId);
 * bundle.records.reverse();
 * assert.deepEqual(await verifyRun(bundle, keys.publicKey), {
 *   ok: false, toolCallId: "call_1", reason: "REORDERED",
 * });
 * ```
 *
 * @module
 */
export { verifyRun } from "./verify_run.ts";
export {
  MAX_BUNDLE_LENGTH,
  type RunVerdict,
  type VerifyOptions,
  type VerifyReason,
} from "./verify.ts";

if (import.meta.main) {
  // Only as a program: the entry itself stays free of Deno's file APIs.
  import("./cli.ts").then((cli) => cli.main());
}
