/**
 * The ledger as a Durable Object namespace that Workers reach by RPC, one object per run:
 * {@linkcode ledgerObject} makes the object's class, {@linkcode boundaryStore} the `Store` that
 * routes each call to its run's object.
 *
 * @module
 */
import type { Store } from "./core.ts";
import { DurableObjectStore, type SweepReport } from "./store.ts";
import type { DurableObjectContext } from "./types.ts";

/** The `Store` methods a ledger object serves over RPC: all but `listRuns`. */
export type LedgerMethods = Pick<
  Required<Store>,
  | "startRun"
  | "getRun"
  | "begin"
  | "complete"
  | "get"
  | "endRun"
  | "readFacts"
  | "lookupCall"
  | "listCalls"
  | "sealRun"
  | "exportRun"
>;

/** An instance of the class {@linkcode ledgerObject} makes: the store's methods, and its alarm. */
export interface LedgerObjectInstance extends LedgerMethods {
  /** Deletes what expired and asks for the next alarm (`DurableObjectStore.sweep`). */
  alarm(): Promise<SweepReport>;
}

/** The class {@linkcode ledgerObject} makes: construct it as the runtime does, `(ctx, env)`. */
export type LedgerObjectClass = new (
  ctx: DurableObjectContext,
  env: unknown,
) => LedgerObjectInstance;

/**
 * The `DurableObject` base class of `cloudflare:workers` (any class constructed as
 * `(ctx, env)`).
 */
export type DurableObjectBase = abstract new (...args: never[]) => object;

/** Options of {@linkcode ledgerObject}. */
export interface LedgerObjectOptions {
  /** The tables' prefix (`DurableObjectStoreOptions.prefix`). @default "tb_" */
  prefix?: string;
  /** The least time between two sweeps (`DurableObjectStoreOptions.sweepEveryMs`). @default 60000 */
  sweepEveryMs?: number;
}

/**
 * Makes the Durable Object class of a ledger namespace: each object keeps one run (its name is
 * the run ID) in a {@linkcode DurableObjectStore} and serves the store's methods over Workers
 * RPC; its `alarm()` sweeps what expired. Pass it `DurableObject` from `cloudflare:workers`
 * (RPC methods need that base class), export the class from the Worker, and bind it as a
 * SQLite-backed class (`new_sqlite_classes`).
 *
 * @param base `DurableObject` from `cloudflare:workers`.
 * @param options The tables' prefix and the sweep spacing.
 * @returns The class to export (`export class LedgerObject extends ledgerObject(DurableObject) {}`).
 *
 * @example
 * ```ts ignore
 * // worker.ts
 * import { DurableObject } from "cloudflare:workers";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { boundaryStore, ledgerObject } from "@tool-boundary/cloudflare";
 *
 * export class LedgerObject extends ledgerObject(DurableObject) {}
 *
 * export default {
 *   async fetch(request: Request, env: { LEDGER: DurableObjectNamespace }) {
 *     const boundary = new ToolBoundary({ store: boundaryStore(env.LEDGER), tools });
 *     // ...
 *   },
 * };
 * ```
 */
export function ledgerObject(
  base: DurableObjectBase,
  options: LedgerObjectOptions = {},
): LedgerObjectClass {
  const Base = base as unknown as new (ctx: DurableObjectContext, env: unknown) => object;
  return class LedgerObject extends Base implements LedgerObjectInstance {
    readonly #store: DurableObjectStore;

    constructor(ctx: DurableObjectContext, env: unknown) {
      super(ctx, env);
      this.#store = new DurableObjectStore(ctx, options);
    }

    startRun(...args: Parameters<Store["startRun"]>): ReturnType<Store["startRun"]> {
      return this.#store.startRun(...args);
    }

    getRun(...args: Parameters<Store["getRun"]>): ReturnType<Store["getRun"]> {
      return this.#store.getRun(...args);
    }

    begin(...args: Parameters<Store["begin"]>): ReturnType<Store["begin"]> {
      return this.#store.begin(...args);
    }

    complete(...args: Parameters<Store["complete"]>): ReturnType<Store["complete"]> {
      return this.#store.complete(...args);
    }

    get(...args: Parameters<Store["get"]>): ReturnType<Store["get"]> {
      return this.#store.get(...args);
    }

    endRun(...args: Parameters<Store["endRun"]>): ReturnType<Store["endRun"]> {
      return this.#store.endRun(...args);
    }

    readFacts(...args: Parameters<Store["readFacts"]>): ReturnType<Store["readFacts"]> {
      return this.#store.readFacts(...args);
    }

    lookupCall(...args: Parameters<Store["lookupCall"]>): ReturnType<Store["lookupCall"]> {
      return this.#store.lookupCall(...args);
    }

    listCalls(...args: Parameters<Store["listCalls"]>): ReturnType<Store["listCalls"]> {
      return this.#store.listCalls(...args);
    }

    sealRun(
      ...args: Parameters<Required<Store>["sealRun"]>
    ): ReturnType<Required<Store>["sealRun"]> {
      return this.#store.sealRun(...args);
    }

    exportRun(
      ...args: Parameters<Required<Store>["exportRun"]>
    ): ReturnType<Required<Store>["exportRun"]> {
      return this.#store.exportRun(...args);
    }

    alarm(): Promise<SweepReport> {
      return this.#store.sweep();
    }
  };
}

/** A Durable Object namespace binding (`env.LEDGER`) of a class {@linkcode ledgerObject} made. */
export interface LedgerNamespace {
  /** The ID of the object of a name. */
  idFromName(name: string): unknown;
  /** The stub of the object of an ID. */
  get(id: unknown): unknown;
}

/**
 * A `Store` over a ledger namespace: each method goes, by Workers RPC, to the object of its run
 * (`idFromName(runId)`), which answers it in one transaction. Every capability of
 * `DurableObjectStore` is there but `listRuns`: no object holds more than its own run (see
 * docs/cloudflare.md for why there is no directory object).
 *
 * A request is copied once (its own properties, each read once) before it is routed and sent,
 * so the run it is routed by is the run it names; a request that cannot be copied or sent (a
 * getter that throws, a value Workers RPC cannot carry) is a rejection, as every store's is.
 *
 * @param namespace The binding of the class {@linkcode ledgerObject} made.
 * @returns The store, for `new ToolBoundary({ store })`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { boundaryStore } from "@tool-boundary/cloudflare";
 *
 * // In a Worker, pass env.LEDGER; here, a namespace that answers one method, to show the routing.
 * const asked: string[] = [];
 * const store = boundaryStore({
 *   idFromName: (name) => `id:${name}`,
 *   get: (id) => ({ getRun: (runId: string) => (asked.push(`${id} ${runId}`), null) }),
 * });
 * assert.equal(await store.getRun("run-1"), null);
 * assert.deepEqual(asked, ["id:run-1 run-1"]);
 * assert.equal("listRuns" in store, false);
 * // A request that cannot be read is a rejection, never a throw.
 * const hostile = { get runId(): string { throw new Error("no"); } };
 * await assert.rejects(store.endRun(hostile as never), /no/);
 * ```
 */
export function boundaryStore(namespace: LedgerNamespace): Store {
  const objectOf = (runId: unknown): LedgerMethods =>
    namespace.get(namespace.idFromName(typeof runId === "string" ? runId : "")) as LedgerMethods;
  /** Copies a request once and sends it to its run's object; a throw is a rejection. */
  const send = <T extends { runId: string }, R>(
    request: T,
    call: (object: LedgerMethods, sent: T) => Promise<R>,
  ): Promise<R> => {
    try {
      const sent = { ...request };
      return Promise.resolve(call(objectOf(sent.runId), sent));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  /** Sends a read by run ID to its run's object; a throw is a rejection. */
  const read = <R>(runId: string, call: (object: LedgerMethods) => Promise<R>): Promise<R> => {
    try {
      return Promise.resolve(call(objectOf(runId)));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    startRun: (request) => send(request, (object, sent) => object.startRun(sent)),
    getRun: (runId) => read(runId, (object) => object.getRun(runId)),
    begin: (request) => send(request, (object, sent) => object.begin(sent)),
    complete: (request) => send(request, (object, sent) => object.complete(sent)),
    get: (runId, toolCallId) => read(runId, (object) => object.get(runId, toolCallId)),
    endRun: (request) => send(request, (object, sent) => object.endRun(sent)),
    readFacts: (request) => send(request, (object, sent) => object.readFacts(sent)),
    lookupCall: (runId, toolCallId, startedAt) =>
      read(runId, (object) => object.lookupCall(runId, toolCallId, startedAt)),
    listCalls: (runId) => read(runId, (object) => object.listCalls(runId)),
    sealRun: (request) => send(request, (object, sent) => object.sealRun(sent)),
    exportRun: (runId) => read(runId, (object) => object.exportRun(runId)),
  };
}
