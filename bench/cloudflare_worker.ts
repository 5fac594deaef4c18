/**
 * The Worker of bench/cloudflare.ts, bundled with `deno bundle` (`cloudflare:*` left to workerd).
 * Each request runs `n` sequential calls through a boundary and answers what they cost in
 * requests and SQLite rows; bench/cloudflare.ts times the requests from outside, since time in
 * workerd stands still between I/O.
 *
 * - `/object?store=durable|memory&n=`: in a Durable Object (as in an `Agent`), on a
 *   `DurableObjectStore` in its own storage, or on a `MemoryStore` in its memory (the floor).
 * - `/namespace?n=`: in the Worker, on `boundaryStore(env.LEDGER)`: one RPC per store call.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import { type Store, ToolBoundary } from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import {
  boundaryStore,
  type DurableObjectContext,
  DurableObjectStore,
  type LedgerNamespace,
  ledgerObject,
  type SqlValue,
} from "@tool-boundary/cloudflare";
import { logRaw, searchLogsTool } from "./_common.ts";

interface Env {
  LEDGER: LedgerNamespace;
  BENCH: LedgerNamespace;
}

/** What `n` calls cost. */
export interface Cost {
  /** Calls that ended READY (all of them, or the run failed). */
  ready: number;
  /** Requests to another object or service (Workers RPC), in all. */
  requests: number;
  /** SQLite rows read and written, in all (a SQLite-backed object is billed by them). */
  rowsRead: number;
  rowsWritten: number;
}

/** Runs `n` calls, one after another, in one run of `n` calls of budget. */
async function calls(store: Store, n: number): Promise<number> {
  // Made per request: workerd allows no random values at a module's top level.
  const tool = searchLogsTool(logRaw(1024));
  const boundary = new ToolBoundary({ store, tools: [tool], recordTtlMs: 300_000 });
  const run = await boundary.startRun({ ttlMs: 600_000, budget: { calls: Math.max(n, 1) } });
  let ready = 0;
  for (let i = 0; i < n; i++) {
    const result = await boundary.invoke(run, {
      toolCallId: `call_${i}`,
      runId: run.runId,
      toolName: tool.name,
      input: { query: "timeout" },
    });
    if (result.status === "READY") ready++;
  }
  return ready;
}

/** The object's `ctx`, with each statement's rows read and written added up. */
function counted(ctx: DurableObjectContext, cost: Cost): DurableObjectContext {
  const { storage } = ctx;
  return {
    storage: {
      sql: {
        exec: <T extends Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]) => {
          const cursor = storage.sql.exec<T>(query, ...bindings) as
            & ReturnType<
              typeof storage.sql.exec<T>
            >
            & { rowsRead: number; rowsWritten: number };
          return {
            toArray: () => {
              const rows = cursor.toArray();
              cost.rowsRead += cursor.rowsRead;
              cost.rowsWritten += cursor.rowsWritten;
              return rows;
            },
            get rowsWritten() {
              return cursor.rowsWritten;
            },
          };
        },
      },
      transactionSync: (fn) => storage.transactionSync(fn),
      setAlarm: (at) => storage.setAlarm(at),
    },
  };
}

/** The ledger namespace's class. */
export class LedgerObject extends ledgerObject(DurableObject) {}

/** An object that runs the calls itself, as an `Agent` does. */
export class BenchObject extends DurableObject {
  readonly #ctx: DurableObjectContext;

  constructor(ctx: DurableObjectContext, env: unknown) {
    super(ctx, env);
    this.#ctx = ctx;
  }

  async run(store: string, n: number): Promise<Cost> {
    const cost: Cost = { ready: 0, requests: 0, rowsRead: 0, rowsWritten: 0 };
    const chosen = store === "durable"
      ? new DurableObjectStore(counted(this.#ctx, cost), { prefix: "bench_" })
      : new MemoryStore();
    cost.ready = await calls(chosen, n);
    return cost;
  }

  async alarm(): Promise<void> {
    await new DurableObjectStore(this.#ctx, { prefix: "bench_" }).sweep();
  }
}

/** The namespace with each stub's calls counted: every one is a Workers RPC. */
function countedNamespace(namespace: LedgerNamespace, cost: Cost): LedgerNamespace {
  return {
    idFromName: (name) => namespace.idFromName(name),
    get: (id) => {
      const stub = namespace.get(id) as Record<string, (...args: unknown[]) => unknown>;
      return new Proxy(stub, {
        get: (target, name) => (...args: unknown[]) => {
          cost.requests++;
          return target[name as string]!(...args);
        },
      });
    },
  };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n") ?? "0");
    if (url.pathname === "/object") {
      const object = env.BENCH.get(env.BENCH.idFromName("bench")) as BenchObject;
      return Response.json(await object.run(url.searchParams.get("store") ?? "durable", n));
    }
    if (url.pathname === "/namespace") {
      const cost: Cost = { ready: 0, requests: 0, rowsRead: 0, rowsWritten: 0 };
      cost.ready = await calls(boundaryStore(countedNamespace(env.LEDGER, cost)), n);
      return Response.json(cost);
    }
    return new Response("Not found", { status: 404 });
  },
};
