/**
 * What every conformance case is handed: how a store factory, its clock and the suite's options
 * reach a case, and how cases are registered.
 *
 * @module
 */
import { ToolBoundary } from "../../core/boundary.ts";
import { requireCapability, type StoreCapability } from "../../core/capabilities.ts";
import type { CallIndex, RunIndex, RunSeal, Store } from "../../core/store.ts";
import type { Limits } from "../../core/limits.ts";
import type { BoundaryResult, RunContext } from "../../core/types.ts";
import { createFakeToolkit, type FakeToolkit } from "../fakes.ts";

/** A store prepared for one test case. */
export interface StoreUnderTest {
  /** The store. */
  store: Store;
  /** The clock the store's expiry follows, when it is a fake one. @default Date.now */
  clock?: () => number;
  /** Moves that clock forward; stores on real time leave it out and the suite waits instead. */
  advance?: (ms: number) => void | Promise<void>;
  /** Releases what the store holds (connections, servers). */
  close?: () => void | Promise<void>;
}

/** Registers one test; `Deno.test`-compatible. */
export type TestRegistrar = (name: string, fn: () => Promise<void>) => void;

/** Options of {@linkcode storeConformance} and {@linkcode boundaryConformance}. */
export interface ConformanceOptions {
  /** Prefix of every test name, e.g. the store's class name. */
  name: string;
  /** Makes a fresh store (or a fresh view of a shared one) for each test. */
  createStore: () => StoreUnderTest | Promise<StoreUnderTest>;
  /** Registers each test. @default Deno.test, when present */
  test?: TestRegistrar;
  /** Record TTL used by the expiry tests, in ms; real-time stores wait about 1.5x of it. @default 400 */
  ttlMs?: number;
  /**
   * Whether {@linkcode storeConformance} also runs the cases that go through a `ToolBoundary`;
   * `false` runs the `Store` contract alone. {@linkcode boundaryConformance} ignores it.
   * @default true
   */
  boundary?: boolean;
  /**
   * The optional capabilities the store offers (`"CallIndex"`, `"RunIndex"`, `"RunSeal"`): their
   * cases run, and for each one left out a case checks that the boundary refuses it with a
   * TypeError naming it. A case checks that the store offers exactly these. Absent: those
   * `capabilitiesOf` finds on the first store the factory makes (made and closed before any case
   * is registered).
   */
  capabilities?: readonly StoreCapability[];
}

/** What a `Store` contract case gets: the store and its clock. */
export interface StoreContext<S extends Store = Store> {
  /** The store under test, fresh for this case. */
  store: S;
  /** The clock the store's expiry follows. */
  clock: () => number;
  /** Moves that clock forward (or waits, for a store on real time). */
  advance: (ms: number) => Promise<void>;
  /** A record TTL short enough to wait out. */
  ttlMs: number;
}

/** What a case that goes through a `ToolBoundary` gets, on top of the store. */
export interface BoundaryContext<S extends Store = Store> extends StoreContext<S> {
  /** A boundary on the store with the fake tools and the suite's small limits. */
  boundary: ToolBoundary;
  /** The fake tools and their call counters. */
  kit: FakeToolkit;
  /** Starts a run on `boundary` (10 minutes, 50 calls unless told). */
  run: (budget?: { calls: number; perTool?: Record<string, number> }) => Promise<RunContext>;
  /** Invokes a tool of `kit` in `run` (input `{ query: "disk" }` unless told). */
  call: (
    run: RunContext,
    toolCallId: string,
    toolName: string,
    input?: unknown,
  ) => Promise<BoundaryResult>;
}

/** Where a capability file registers its cases: a name that states behaviour and a body. */
export interface Suite<C> {
  /** Registers one case; it gets a fresh store and context when it runs. */
  test(name: string, fn: (ctx: C) => Promise<void>): void;
}

/** The store of a case of each capability, typed with it. */
interface CapabilityStores {
  CallIndex: Store & CallIndex;
  RunIndex: Store & RunIndex;
  RunSeal: Store & RunSeal;
}

/**
 * The suite a capability's cases register into: each case gets its store typed with the
 * capability (checked when the case runs, so a case never calls a method that is not there).
 */
export function capabilitySuite<K extends StoreCapability, C extends StoreContext>(
  suite: Suite<C>,
  capability: K,
): Suite<C & { store: CapabilityStores[K] }> {
  return {
    test(name, fn) {
      suite.test(name, (ctx) => {
        const store = requireCapability(
          ctx.store,
          capability as "CallIndex",
          `run the ${capability} cases`,
        );
        return fn({ ...ctx, store } as C & { store: CapabilityStores[K] });
      });
    },
  };
}

/** Record TTL of the suite's boundary: long enough that no boundary case sees an expiry. */
export const BOUNDARY_RECORD_TTL_MS = 60_000;

/** Small limits so the size cases stay fast on remote stores. */
export const SUITE_LIMITS: Partial<Limits> = {
  requestBytes: 1024,
  rawBytes: 64 * 1024,
  recordBytes: 96 * 1024,
  agentResultBytes: 2048,
};

/**
 * Makes the suite a capability file registers into: each case is registered as
 * `"<options.name>: <case name>"`, gets a fresh store from the factory, and the store is closed
 * after it.
 *
 * @param options The suite's options.
 * @param names Collects the registered test names.
 * @param makeContext Builds the case's context from the store under test.
 */
export function createSuite<C>(
  options: ConformanceOptions,
  names: string[],
  makeContext: (sut: StoreUnderTest, ttlMs: number) => C,
): Suite<C> {
  const register = options.test ?? defaultRegistrar();
  const ttlMs = options.ttlMs ?? 400;
  return {
    test(caseName, fn) {
      const name = `${options.name}: ${caseName}`;
      const defined = caseLocation();
      names.push(name);
      register(name, async () => {
        const sut = await options.createStore();
        try {
          await fn(makeContext(sut, ttlMs));
        } catch (error) {
          throw located(error, defined);
        } finally {
          await sut.close?.();
        }
      });
    },
  };
}

/**
 * Where a case was registered: the first stack frame outside this file. The test runner names
 * the line that registered the test, which for every case is this file's; the case's own line
 * is what a reader of a failure needs.
 */
function caseLocation(): string | null {
  const frames = new Error().stack?.split("\n").slice(1) ?? [];
  const own = frames[0]?.match(/\((.*?):\d+:\d+\)$|at (.*?):\d+:\d+$/);
  const file = own?.[1] ?? own?.[2];
  const frame = frames.find((line) => file === undefined || !line.includes(file));
  return frame?.trim().replace(/^at /, "") ?? null;
}

/** The failure of a case, with the case's location first in its stack and in its message. */
function located(error: unknown, defined: string | null): unknown {
  if (defined === null || !(error instanceof Error)) return error;
  try {
    error.message = `${error.message}\n    (conformance case at ${defined})`;
    if (typeof error.stack === "string") {
      const [head, ...frames] = error.stack.split("\n    at ");
      error.stack = [`${head}\n    (conformance case at ${defined})`, ...frames].join("\n    at ");
    }
  } catch {
    // A frozen error is reported as it is.
  }
  return error;
}

/** The context of a `Store` contract case. */
export function storeContext(sut: StoreUnderTest, ttlMs: number): StoreContext {
  const advance = async (ms: number) => {
    if (sut.advance) await sut.advance(ms);
    else await new Promise((resolve) => setTimeout(resolve, ms));
  };
  return { store: sut.store, clock: sut.clock ?? Date.now, advance, ttlMs };
}

/** The context of a case that goes through a `ToolBoundary`. */
export function boundaryContext(sut: StoreUnderTest, ttlMs: number): BoundaryContext {
  const base = storeContext(sut, ttlMs);
  const kit = createFakeToolkit();
  const boundary = new ToolBoundary({
    store: base.store,
    tools: kit.tools,
    limits: SUITE_LIMITS,
    recordTtlMs: BOUNDARY_RECORD_TTL_MS,
    clock: base.clock,
  });
  return {
    ...base,
    boundary,
    kit,
    run: (budget = { calls: 50 }) =>
      boundary.startRun({ runId: uniqueId("run"), ttlMs: 600_000, budget }),
    call: (run, toolCallId, toolName, input = { query: "disk" }) =>
      boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input }),
  };
}

/** An ID no other case uses, so cases may share one store. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID()}`;
}

function defaultRegistrar(): TestRegistrar {
  const deno =
    (globalThis as { Deno?: { test?: (t: { name: string; fn: () => Promise<void> }) => void } })
      .Deno;
  if (typeof deno?.test !== "function") {
    throw new TypeError("Cannot register conformance tests: pass options.test outside Deno");
  }
  return (name, fn) => deno.test!({ name, fn });
}
