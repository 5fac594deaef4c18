/**
 * `endRun`: the run ended in the store (no call may begin after it), then its READY records
 * read back and projected into bounded observed facts; with a ledger key, the run sealed too.
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import { isSafeRunId } from "../ids.ts";
import { MIN_FACT_BYTES } from "../limits.ts";
import { canonicalJson, type JsonValue } from "../json.ts";
import {
  type LedgerSigner,
  MAX_TIMESTAMP_BYTES,
  receiptMessage,
  recordHash,
  sha256Base64url,
  sha256Bytes,
  stampedText,
  toBase64url,
} from "../ledger.ts";
import { rowsToFacts } from "../progress.ts";
import { emit, type Setup } from "../setup.ts";
import type { FactRow, SealState } from "../store.ts";
import { utf8ByteLength } from "../utf8.ts";
import type { ReceiptCall, RunContext, RunEnd, RunReceipt } from "../types.ts";
import { archiveRun } from "./archive_run.ts";
import { toCanonicalRecord } from "./inspect.ts";
import { parseSeal, type Seal } from "./seal.ts";
import { storeCall } from "./store_call.ts";

/** IDs per page at most, so no one answer grows with an uncapped factCount. */
const MAX_PAGE = 1_000;

/**
 * Ends a run and reports its facts, within `limits.factCount` and `limits.factBytes`, and how
 * many READY records the caps left out. Ending twice gives the same facts while the records live.
 * With a ledger key the first end seals the run (one more store call): every later end returns
 * the sealed facts and receipt, without reading the records again. With an `archive` too, every
 * end that answers the sealed run writes its bundle there (the export read once more), after the
 * seal is kept.
 *
 * @returns The facts, the number omitted and (with a ledger key) the receipt.
 * @throws {BoundaryError} RUN_NOT_FOUND, INVALID_RUN_ID, STORE_UNAVAILABLE, (with a `timestamp`)
 *   TIMESTAMP_UNAVAILABLE: the run is ended but not sealed, and a later end seals it, or (with an
 *   `archive`) ARCHIVE_UNAVAILABLE: the run is sealed, and a later end writes it again.
 */
export async function endRun(setup: Setup, run: RunContext | string): Promise<RunEnd> {
  const runId = typeof run === "string" ? run : run?.runId;
  if (!isSafeRunId(runId)) throw new BoundaryError("INVALID_RUN_ID");
  const signer = setup.ledger === undefined ? undefined : await setup.ledger.ready;
  const { factCount, factBytes } = setup.limits;
  const pageOf = (from: number, rows: number) => ({
    from,
    limit: Math.max(1, Math.min(factCount - rows, MAX_PAGE)),
  });
  const ended = await storeCall(() =>
    setup.store.endRun({
      runId,
      now: setup.clock(),
      page: pageOf(0, 0),
      ...(signer ? { seal: true } : {}),
    })
  );
  if (!ended.ok) throw new BoundaryError(ended.code);
  // This boundary refuses the run's later calls before it asks the store.
  if (typeof run !== "string") setup.ended.add(run);
  const sealed = signer === undefined ? null : sealState(ended.seal);
  let report: RunEnd;
  if (sealed?.sealJson != null) {
    report = reportOf(parseSeal(sealed.sealJson));
  } else {
    // Page by page, only while the caps can take another fact: the READY calls past the last
    // record read are counted by the store, never read.
    const rows: FactRow[] = [];
    let bytes = 0;
    let capped = 0;
    let page = ended;
    let from = 0;
    const readRows = async (ids: readonly string[], maxFacts: number, maxBytes: number) => {
      if (ids.length === 0) return 0;
      const read = await storeCall(() =>
        setup.store.readFacts({
          runId,
          identities: ids.map((toolCallId) => ({ runId, toolCallId })),
          maxFacts,
          maxBytes,
        })
      );
      for (const row of read.rows) {
        rows.push(row);
        bytes += utf8ByteLength(row.agentResultJson);
      }
      capped += read.omitted;
      return unreadOf(read.unread, ids.length);
    };
    for (;;) {
      const ids = page.toolCallIds;
      const unread = await readRows(
        ids,
        Math.max(0, factCount - rows.length),
        Math.max(0, factBytes - bytes),
      );
      if (unread > 0) {
        // The caps took all they could within this page: the calls not read are counted.
        const rest = ids.slice(ids.length - unread);
        if (page.page === undefined) {
          // A store without pages answered the whole index: only the records tell READY from
          // ERROR. Read past the caps, they are counted in `omitted`.
          await readRows(rest, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
          break;
        }
        // From the first one not read on, by the store's index (`limit: 0` only counts).
        const counted = await storeCall(() =>
          setup.store.endRun({
            runId,
            now: setup.clock(),
            page: { from: from + ids.length - unread, limit: 0 },
          })
        );
        if (!counted.ok) throw new BoundaryError(counted.code);
        // IDs in that answer are candidates the index cannot tell (entries written before the
        // marks): read past the caps as well.
        await readRows(counted.toolCallIds, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
        capped += counted.page?.left ?? 0;
        break;
      }
      const next = page.page?.next ?? null;
      if (next === null) break;
      if (rows.length >= factCount || factBytes - bytes < MIN_FACT_BYTES) {
        capped += page.page!.left;
        break;
      }
      const more = await storeCall(() =>
        setup.store.endRun({ runId, now: setup.clock(), page: pageOf(next, rows.length) })
      );
      if (!more.ok) throw new BoundaryError(more.code);
      page = more;
      from = next;
    }
    const { facts, omitted } = rowsToFacts(runId, rows, {
      maxFacts: factCount,
      maxBytes: factBytes,
    });
    report = { facts, omitted: omitted + capped };
    if (sealed !== null) {
      const completed = sealed.completed ?? ended.toolCallIds;
      const instance = { runId, startedAt: ended.run.startedAt };
      const seal = await sealOf(setup, signer!, instance, sealed, completed, report);
      const kept = await storeCall(() =>
        setup.store.sealRun!({ runId, sealJson: JSON.stringify(seal) })
      );
      if (!kept.ok) throw new BoundaryError(kept.code);
      // Another end may have sealed the run first: its seal is the run's.
      report = reportOf(parseSeal(kept.sealJson));
    }
  }
  // The seal is kept (and stamped): what the archive gets is what any later end answers.
  if (setup.archive !== undefined && report.receipt !== undefined) {
    await archiveRun(setup, setup.archive, runId, report.receipt);
  }
  emit(setup, { type: "run.ended", runId, facts: report.facts.length, omitted: report.omitted });
  return report;
}

/** A store's `unread`: absent as 0, else an integer up to the identities it was given. */
function unreadOf(unread: unknown, given: number): number {
  if (unread === undefined) return 0;
  if (
    typeof unread === "number" && Number.isSafeInteger(unread) && unread >= 0 && unread <= given
  ) {
    return unread;
  }
  throw new BoundaryError("STORE_UNAVAILABLE", {
    cause: new TypeError("The store answered readFacts with an unread count it cannot have"),
  });
}

function sealState(seal: SealState | undefined): SealState {
  if (seal === undefined || !Array.isArray(seal.calls)) {
    throw new BoundaryError("STORE_UNAVAILABLE", {
      cause: new TypeError("The store answered endRun without the seal it was asked for"),
    });
  }
  return seal;
}

/**
 * The seal of the run instance: every begun call, each completed one with the hash of its
 * record. A call completed with a proof has the proof's hash (kept by the store from the
 * complete); one completed without (by a boundary without a key, or written past the boundary)
 * has its record read and hashed now, so that the seal pins it too: UNSIGNED, and never a
 * verdict of `ok` (its hash `null` only when the record is already gone or unreadable).
 */
async function sealOf(
  setup: Setup,
  signer: LedgerSigner,
  instance: { runId: string; startedAt: number },
  state: SealState,
  completedIds: readonly string[],
  report: RunEnd,
): Promise<Seal> {
  const { runId, startedAt } = instance;
  const completed = new Set(completedIds);
  const unsignedIds = state.calls
    .filter(({ toolCallId, hash }) => hash === null && completed.has(toolCallId))
    .map(({ toolCallId }) => toolCallId);
  // Only a run with such calls reads records here: a signed run costs no read.
  const unsignedHashes = new Map(
    await Promise.all(
      unsignedIds.map(async (id) => [id, await hashOfStored(setup, runId, id)] as const),
    ),
  );
  const calls: ReceiptCall[] = state.calls.map(({ toolCallId, hash }) =>
    !completed.has(toolCallId)
      ? { toolCallId, hash: null, state: "INCOMPLETE" }
      : hash === null
      ? { toolCallId, hash: unsignedHashes.get(toolCallId) ?? null, state: "UNSIGNED" }
      : { toolCallId, hash }
  );
  const factsHash = await sha256Base64url(canonicalJson(report.facts as unknown as JsonValue));
  const unsigned = { runId, startedAt, calls, factsHash, keyId: signer.keyId };
  const sig = await signer.sign(receiptMessage(unsigned));
  const receipt: RunReceipt = { ...unsigned, sig };
  if (setup.timestamp !== undefined) {
    receipt.timestamp = await timestampOf(setup.timestamp, receipt);
  }
  return { receipt, facts: report.facts, omitted: report.omitted };
}

/**
 * The RFC 3161 token of a signed receipt, base64url: the Time Stamping Authority is asked once,
 * for the SHA-256 of {@linkcode stampedText}. A seal the TSA did not stamp is never kept: any
 * failure is TIMESTAMP_UNAVAILABLE, and the run stays unsealed for a later `endRun` to seal.
 */
async function timestampOf(
  timestamp: (digest: Uint8Array) => Promise<Uint8Array>,
  receipt: RunReceipt,
): Promise<string> {
  const digest = await sha256Bytes(stampedText(receipt));
  let token: unknown;
  try {
    token = await timestamp(digest);
  } catch (error) {
    throw new BoundaryError("TIMESTAMP_UNAVAILABLE", { cause: error });
  }
  if (!(token instanceof Uint8Array) || token.length === 0 || token.length > MAX_TIMESTAMP_BYTES) {
    throw new BoundaryError("TIMESTAMP_UNAVAILABLE", {
      cause: new TypeError("timestamp answered no token: expected 1 byte to 64 KiB of DER"),
    });
  }
  return toBase64url(token);
}

/** The hash of a record as the store holds it now; `null` when it is gone or cannot be read. */
async function hashOfStored(
  setup: Setup,
  runId: string,
  toolCallId: string,
): Promise<string | null> {
  const stored = await storeCall(() => setup.store.get(runId, toolCallId));
  if (stored === null) return null;
  try {
    return await recordHash(toCanonicalRecord(stored));
  } catch {
    // Not data (its JSON text does not parse): nothing to pin, and never a verdict of ok.
    return null;
  }
}

function reportOf(seal: Seal): RunEnd {
  return { facts: seal.facts, omitted: seal.omitted, receipt: seal.receipt };
}
