/**
 * What every operation of a `ToolBoundary` reads: its setup, checked once when the boundary is
 * created and fixed from then on (but for the runs it has ended), and the one way events reach
 * the observer.
 *
 * @module
 */
// The one arrow from the core to a store: `store` is optional and defaults to a MemoryStore
// (API.md), which needs nothing but the core.
import { MemoryStore } from "../memory/store.ts";
import {
  checkCost,
  checkTtlMs,
  DEFAULT_AUTHORIZE_TIMEOUT_MS,
  DEFAULT_BUDGET,
  DEFAULT_LIMITS,
  DEFAULT_RECORD_TTL_MS,
  DEFAULT_RUN_TTL_MS,
  DEFAULT_STORE_RETRY_MS,
  type Limits,
  MAX_TIMER_MS,
} from "./limits.ts";
import type { AuthorizeRequest, BoundaryEvent, ToolBoundaryOptions } from "./options.ts";
import type { Store } from "./store.ts";
import { checkStore, requireCapability } from "./capabilities.ts";
import { type AnyToolDefinition, isToolName } from "./tool.ts";
import type { JsonObject } from "./json.ts";
import type { RunBudget, RunContext } from "./types.ts";
import { checkLedgerKey, importSigner, type LedgerSigner } from "./ledger.ts";
import type { RunArchive } from "./archive.ts";

/** What the operations read of their boundary: fixed at construction, but for `ended`. */
export interface Setup {
  readonly store: Store;
  readonly limits: Readonly<Limits>;
  readonly tools: ReadonlyMap<string, AnyToolDefinition>;
  /**
   * The `cost` of each tool that has one, read once and (a number) checked here: what preflight
   * prices a call with, whatever the tool object says later.
   */
  readonly costs: ReadonlyMap<string, number | ((input: JsonObject) => unknown)>;
  readonly recordTtlMs: number;
  /** Run length when `startRun` gets neither `deadline` nor `ttlMs`. */
  readonly runTtlMs: number;
  /** Budget when `startRun` gets none. */
  readonly defaultBudget: RunBudget;
  /** What a used key with the same request gets: DUPLICATE_TOOL_CALL, or its recorded result. */
  readonly onDuplicate: "refuse" | "replay";
  readonly authorize:
    | ((run: RunContext, call: AuthorizeRequest) => boolean | Promise<boolean>)
    | undefined;
  readonly authorizeTimeoutMs: number;
  /** How long a complete or start the store failed is tried again (`storeRetryMs`). */
  readonly storeRetryMs: number;
  readonly observe: ((event: BoundaryEvent) => void) | undefined;
  readonly clock: () => number;
  /** Runs this boundary has ended: their calls are refused before the store is asked. */
  readonly ended: WeakSet<RunContext>;
  /** The ledger key, when the boundary has one. */
  readonly ledger: Ledger | undefined;
  /** Stamps a sealed receipt's digest (RFC 3161), when the boundary has a `timestamp`. */
  readonly timestamp: ((digest: Uint8Array) => Promise<Uint8Array>) | undefined;
  /** Where each sealed run's bundle is written, when the boundary has an `archive`. */
  readonly archive: ArchiveCalls | undefined;
}

/**
 * The archive's methods, read once when the boundary is created (a getter is not asked again)
 * and called on the archive. What they answer is the archive's: the caller checks it.
 */
export interface ArchiveCalls {
  put(runId: string, bundleJson: string): unknown;
  get: ((runId: string) => unknown) | undefined;
}

/**
 * The ledger key, imported once in the background: `ready` settles when WebCrypto imported it
 * and a probe signed with `d` verified with `x` (a TypeError naming `ledgerKey` when not), and
 * `signer` is set as soon as it did, so that a call needs no await to know the key is good.
 */
export interface Ledger {
  readonly ready: Promise<LedgerSigner>;
  signer: LedgerSigner | undefined;
}

/**
 * Checks the options of a boundary and fills in the defaults.
 *
 * @param options As `new ToolBoundary` got them.
 * @returns The setup every operation reads.
 * @throws {TypeError} When `tools` is missing, has duplicates or a name that is empty or holds a
 *   lone surrogate, `store` is not a store (a required method missing, or a capability only in
 *   part), `onDuplicate` is neither "refuse" nor "replay", or `ledgerKey` is not an Ed25519
 *   private JWK (or `keyId` not a key ID) or comes with a store that has no `RunSeal`,
 *   `timestamp` is not a function or comes without a `ledgerKey`, or `archive` has no `put`
 *   function (or a `get` that is not one) or comes without a `ledgerKey`.
 * @throws {RangeError} When a tool's `cost` is neither a function nor an integer from 0 to
 *   `MAX_COST`, a limit is not a positive integer, a TTL is not an integer from 1 to
 *   `MAX_TTL_MS`, or `storeRetryMs` not an integer from 0 to `MAX_TIMER_MS`.
 */
export function createSetup(options: ToolBoundaryOptions): Setup {
  if (!options || !Array.isArray(options.tools)) {
    throw new TypeError("Cannot create ToolBoundary: options.tools must be an array");
  }
  const tools = new Map<string, AnyToolDefinition>();
  const costs = new Map<string, number | ((input: JsonObject) => unknown)>();
  for (const tool of options.tools) {
    // A tool not made by defineTool could still carry a name the wire would change.
    if (!isToolName(tool?.name)) {
      throw new TypeError(
        "Cannot create ToolBoundary: a tool name must be a non-empty string of well-formed Unicode",
      );
    }
    if (tools.has(tool.name)) {
      throw new TypeError(`Cannot create ToolBoundary: duplicate tool name "${tool.name}"`);
    }
    const cost: unknown = tool.cost;
    if (typeof cost === "function") costs.set(tool.name, cost as (input: JsonObject) => unknown);
    else if (cost !== undefined) {
      costs.set(tool.name, checkCost(`cost of tool "${tool.name}"`, cost));
    }
    tools.set(tool.name, tool);
  }
  const store = options.store ?? new MemoryStore();
  checkStore(store, "create ToolBoundary");
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  for (const [name, value] of Object.entries(limits)) positive(`limits.${name}`, value);
  const runTtlMs = checkTtlMs("runTtlMs", options.runTtlMs ?? DEFAULT_RUN_TTL_MS);
  const clock = options.clock;
  const onDuplicate = options.onDuplicate ?? "refuse";
  let ledger: Ledger | undefined;
  if (options.ledgerKey !== undefined) {
    const checked = checkLedgerKey(options.ledgerKey, options.keyId);
    requireCapability(store, "RunSeal", "create ToolBoundary with a ledgerKey");
    const ready = importSigner(checked);
    const imported: Ledger = { ready, signer: undefined };
    // Awaited by each operation that needs the key; never an unhandled rejection meanwhile.
    ready.then((signer) => (imported.signer = signer), () => {});
    ledger = imported;
  } else if (options.keyId !== undefined) {
    throw new TypeError("Cannot create ToolBoundary: keyId needs a ledgerKey");
  }
  const timestamp = options.timestamp;
  if (timestamp !== undefined) {
    if (typeof timestamp !== "function") {
      throw new TypeError("Cannot create ToolBoundary: timestamp must be a function");
    }
    // Only a seal is stamped, and only a boundary with a key seals.
    if (ledger === undefined) {
      throw new TypeError("Cannot create ToolBoundary: timestamp needs a ledgerKey");
    }
  }
  const archive = options.archive === undefined ? undefined : archiveCalls(options.archive);
  // Only a sealed run is archived, and only a boundary with a key seals.
  if (archive !== undefined && ledger === undefined) {
    throw new TypeError("Cannot create ToolBoundary: archive needs a ledgerKey");
  }
  if (onDuplicate !== "refuse" && onDuplicate !== "replay") {
    throw new TypeError('Cannot create ToolBoundary: onDuplicate must be "refuse" or "replay"');
  }
  return {
    store,
    limits: Object.freeze(limits),
    tools,
    costs,
    recordTtlMs: checkTtlMs("recordTtlMs", options.recordTtlMs ?? DEFAULT_RECORD_TTL_MS),
    runTtlMs,
    defaultBudget: options.defaultBudget ?? DEFAULT_BUDGET,
    onDuplicate,
    authorize: options.authorize,
    authorizeTimeoutMs: positive(
      "authorizeTimeoutMs",
      options.authorizeTimeoutMs ?? DEFAULT_AUTHORIZE_TIMEOUT_MS,
    ),
    storeRetryMs: retryWindow(options.storeRetryMs ?? DEFAULT_STORE_RETRY_MS),
    observe: options.observe,
    // Whole milliseconds, as every store keeps them (a fractional clock would not cross to Redis).
    clock: clock === undefined ? Date.now : () => Math.floor(clock()),
    ended: new WeakSet<RunContext>(),
    ledger,
    timestamp,
    archive,
  };
}

/** The `archive` option's `put` and `get`, each read once. */
function archiveCalls(archive: RunArchive): ArchiveCalls {
  let put: unknown;
  let get: unknown;
  try {
    put = archive.put;
    get = archive.get;
  } catch (error) {
    throw new TypeError("Cannot create ToolBoundary: archive must be an object with put()", {
      cause: error,
    });
  }
  if (typeof put !== "function" || (get !== undefined && typeof get !== "function")) {
    throw new TypeError(
      "Cannot create ToolBoundary: archive must have a put() function, and get() if any",
    );
  }
  return {
    put: (runId, bundleJson) => Reflect.apply(put as () => unknown, archive, [runId, bundleJson]),
    get: get === undefined
      ? undefined
      : (runId) => Reflect.apply(get as () => unknown, archive, [runId]),
  };
}

/**
 * Waits for the ledger key's import, only while it has not settled: once the key proved good
 * this is no await at all.
 *
 * @returns `undefined` when the boundary has no key or the key is good.
 * @throws {TypeError} When the key is not a key pair WebCrypto accepts (naming `ledgerKey`).
 */
export function ledgerChecked(setup: Setup): Promise<LedgerSigner> | undefined {
  const ledger = setup.ledger;
  return ledger === undefined || ledger.signer !== undefined ? undefined : ledger.ready;
}

/** Gives an event to the observer, whose errors never change an outcome. */
export function emit(setup: Setup, event: BoundaryEvent): void {
  if (setup.observe === undefined) return;
  try {
    setup.observe(event);
  } catch {
    // An observer must never change an outcome.
  }
}

/** `storeRetryMs`: an integer from 0 to {@linkcode MAX_TIMER_MS} (a pause is one timer). */
function retryWindow(value: unknown): number {
  if (
    typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > MAX_TIMER_MS
  ) {
    throw new RangeError(`Invalid storeRetryMs: expected an integer from 0 to ${MAX_TIMER_MS}`);
  }
  return value;
}

function positive(name: string, value: unknown, min = 1): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`Invalid ${name}: expected an integer of at least ${min}`);
  }
  return value;
}
