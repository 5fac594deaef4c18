/**
 * What the package takes from the core, in one place: the `Store` contract's types and the
 * helpers every store uses, so that this store accepts the same values and writes the same
 * records as `MemoryStore` and `UpstashStore`.
 *
 * `deno doc --lint` counts a type of another package as private (denoland/deno#27364): each type
 * is named here by an alias marked internal, as the other packages do.
 *
 * @module
 */
import type * as Root from "@tool-boundary/core";
import type * as Harness from "@tool-boundary/core/harness";
import type * as Contract from "@tool-boundary/core/store";

/**
 * `CallSummary` of `@tool-boundary/core/harness`.
 * @internal
 */
export type CallSummary = Harness.CallSummary;
/**
 * `ListRunsRequest` of `@tool-boundary/core/harness`.
 * @internal
 */
export type ListRunsRequest = Harness.ListRunsRequest;
/**
 * `RunsPage` of `@tool-boundary/core/harness`.
 * @internal
 */
export type RunsPage = Harness.RunsPage;
/**
 * `RunState` of `@tool-boundary/core/harness`.
 * @internal
 */
export type RunState = Harness.RunState;
/**
 * `RunCost` of `@tool-boundary/core/harness`.
 * @internal
 */
export type RunCost = Harness.RunCost;
/**
 * `RunSummary` of `@tool-boundary/core/harness`.
 * @internal
 */
export type RunSummary = Harness.RunSummary;
/**
 * `RunArchive` of `@tool-boundary/core/harness`.
 * @internal
 */
export type RunArchive = Harness.RunArchive;
/**
 * `Store` of `@tool-boundary/core/store`.
 * @internal
 */
export type Store = Contract.Store;
/**
 * `CallIndex` of `@tool-boundary/core/store`.
 * @internal
 */
export type CallIndex = Contract.CallIndex;
/**
 * `RunIndex` of `@tool-boundary/core/store`.
 * @internal
 */
export type RunIndex = Contract.RunIndex;
/**
 * `RunSeal` of `@tool-boundary/core/store`.
 * @internal
 */
export type RunSeal = Contract.RunSeal;
/**
 * `BeginReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type BeginReply = Contract.BeginReply;
/**
 * `BeginRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type BeginRequest = Contract.BeginRequest;
/**
 * `CompleteReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type CompleteReply = Contract.CompleteReply;
/**
 * `CompleteRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type CompleteRequest = Contract.CompleteRequest;
/**
 * `EndRunReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type EndRunReply = Contract.EndRunReply;
/**
 * `EndRunRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type EndRunRequest = Contract.EndRunRequest;
/**
 * `ExportRunReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type ExportRunReply = Contract.ExportRunReply;
/**
 * `FactRow` of `@tool-boundary/core/store`.
 * @internal
 */
export type FactRow = Contract.FactRow;
/**
 * `ListCallsReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type ListCallsReply = Contract.ListCallsReply;
/**
 * `LookupCallReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type LookupCallReply = Contract.LookupCallReply;
/**
 * `ReadFactsReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type ReadFactsReply = Contract.ReadFactsReply;
/**
 * `ReadFactsRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type ReadFactsRequest = Contract.ReadFactsRequest;
/**
 * `SealRunReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type SealRunReply = Contract.SealRunReply;
/**
 * `SealRunRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type SealRunRequest = Contract.SealRunRequest;
/**
 * `StartRunReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type StartRunReply = Contract.StartRunReply;
/**
 * `StartRunRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type StartRunRequest = Contract.StartRunRequest;
/**
 * `StoredRecord` of `@tool-boundary/core/store`.
 * @internal
 */
export type StoredRecord = Contract.StoredRecord;
/**
 * The run a begin answers with its record (`BeginReply` of `@tool-boundary/core/store`).
 * @internal
 */
export type BegunRun = Extract<Contract.BeginReply, { ok: true }>["run"];
/**
 * What `endRun` answers with `seal: true` (`EndRunReply` of `@tool-boundary/core/store`).
 * @internal
 */
export type SealState = NonNullable<Extract<Contract.EndRunReply, { ok: true }>["seal"]>;
/**
 * A refusal of a store: nothing was written.
 * @internal
 */
export type StoreRefusal<C extends Root.ErrorCode = Root.ErrorCode> = { ok: false; code: C };

export {
  checkBeginRequest,
  checkCompleteRequest,
  checkEndRunRequest,
  checkEpochMs,
  checkListRunsRequest,
  checkReadFactsRequest,
  checkStartRunRequest,
  completeTransition,
  factRowOf,
  fitsCostBudget,
  isSafeRunId,
  isSafeToolCallId,
  MIN_FACT_BYTES,
  ownBudget,
  projectingRecord,
  runsCursor,
  setOwnBudget,
  summarizeCall,
  utf8ByteLength,
} from "@tool-boundary/core/store";
