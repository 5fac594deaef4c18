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
import type * as Contract from "@tool-boundary/core/store";

/**
 * `CallSummary` of `@tool-boundary/core`.
 * @internal
 */
export type CallSummary = Root.CallSummary;
/**
 * `ListRunsRequest` of `@tool-boundary/core`.
 * @internal
 */
export type ListRunsRequest = Root.ListRunsRequest;
/**
 * `RunsPage` of `@tool-boundary/core`.
 * @internal
 */
export type RunsPage = Root.RunsPage;
/**
 * `RunState` of `@tool-boundary/core`.
 * @internal
 */
export type RunState = Root.RunState;
/**
 * `RunSummary` of `@tool-boundary/core`.
 * @internal
 */
export type RunSummary = Root.RunSummary;
/**
 * `Store` of `@tool-boundary/core`.
 * @internal
 */
export type Store = Root.Store;
/**
 * `RunArchive` of `@tool-boundary/core`.
 * @internal
 */
export type RunArchive = Root.RunArchive;
/**
 * `BeginRefusal` of `@tool-boundary/core/store`.
 * @internal
 */
export type BeginRefusal = Contract.BeginRefusal;
/**
 * `BeginReply` of `@tool-boundary/core/store`.
 * @internal
 */
export type BeginReply = Contract.BeginReply;
/**
 * `BegunRun` of `@tool-boundary/core/store`.
 * @internal
 */
export type BegunRun = Contract.BegunRun;
/**
 * `BeginRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type BeginRequest = Contract.BeginRequest;
/**
 * `CallLookup` of `@tool-boundary/core/store`.
 * @internal
 */
export type CallLookup = Contract.CallLookup;
/**
 * `CompleteRefusal` of `@tool-boundary/core/store`.
 * @internal
 */
export type CompleteRefusal = Contract.CompleteRefusal;
/**
 * `CompleteRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type CompleteRequest = Contract.CompleteRequest;
/**
 * `EndRunRefusal` of `@tool-boundary/core/store`.
 * @internal
 */
export type EndRunRefusal = Contract.EndRunRefusal;
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
 * `FactRow` of `@tool-boundary/core/store`.
 * @internal
 */
export type FactRow = Contract.FactRow;
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
 * `RunExport` of `@tool-boundary/core/store`.
 * @internal
 */
export type RunExport = Contract.RunExport;
/**
 * `SealRunRequest` of `@tool-boundary/core/store`.
 * @internal
 */
export type SealRunRequest = Contract.SealRunRequest;
/**
 * `SealState` of `@tool-boundary/core/store`.
 * @internal
 */
export type SealState = Contract.SealState;
/**
 * `StartRunRefusal` of `@tool-boundary/core/store`.
 * @internal
 */
export type StartRunRefusal = Contract.StartRunRefusal;
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
 * `StoreRefusal` of `@tool-boundary/core/store`.
 * @internal
 */
export type StoreRefusal<C extends Root.ErrorCode = Root.ErrorCode> = Contract.StoreRefusal<C>;

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
