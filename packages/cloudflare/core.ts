/**
 * What the package takes from the core, in one place: the `Store` contract's types and the
 * helpers every store uses, so that this store accepts the same values and writes the same
 * records as `MemoryStore` and `UpstashStore`.
 *
 * @module
 */
export type {
  CallSummary,
  ListRunsRequest,
  RunsPage,
  RunState,
  RunSummary,
  Store,
} from "@tool-boundary/core";
export type {
  BeginRefusal,
  BeginRequest,
  CallLookup,
  CompleteRefusal,
  CompleteRequest,
  EndRunRefusal,
  EndRunReply,
  EndRunRequest,
  FactRow,
  ReadFactsReply,
  ReadFactsRequest,
  RunExport,
  SealRunRequest,
  SealState,
  StartRunRefusal,
  StartRunRequest,
  StoredRecord,
  StoreRefusal,
} from "@tool-boundary/core/store";
export {
  checkBeginRequest,
  checkCompleteRequest,
  checkEndRunRequest,
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
