/**
 * What the store offers, checked: that it offers exactly the capabilities declared to the suite,
 * and, for each capability it lacks, that a boundary on it refuses what needs the capability
 * with a TypeError naming it (never `x is not a function`), while the calls themselves still
 * run.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import {
  capabilitiesOf,
  STORE_CAPABILITIES,
  type StoreCapability,
} from "../../core/capabilities.ts";
import { generateLedgerKeys } from "../../core/ledger.ts";
import { type StoreContext, type Suite, SUITE_LIMITS, uniqueId } from "./context.ts";
import { createFakeToolkit } from "../fakes.ts";

/** Every capability, in the order `capabilitiesOf` answers. */
export const ALL_CAPABILITIES = Object.keys(STORE_CAPABILITIES) as StoreCapability[];

/**
 * The capabilities as declared, checked and in `capabilitiesOf`'s order.
 *
 * @throws {TypeError} For a name that is no capability, or one given twice.
 */
export function declaredCapabilities(declared: readonly unknown[]): StoreCapability[] {
  if (!Array.isArray(declared)) {
    throw new TypeError("Cannot register conformance tests: capabilities must be an array");
  }
  for (const [i, name] of declared.entries()) {
    if (!ALL_CAPABILITIES.includes(name as StoreCapability) || declared.indexOf(name) !== i) {
      throw new TypeError(
        `Cannot register conformance tests: capabilities holds ${
          JSON.stringify(name)
        }, expected each of ${ALL_CAPABILITIES.join(", ")} at most once`,
      );
    }
  }
  return ALL_CAPABILITIES.filter((capability) => declared.includes(capability));
}

/** Registers the case that the store offers exactly the declared capabilities. */
export function declaredCapabilitiesCase(
  suite: Suite<StoreContext>,
  declared: readonly StoreCapability[],
): void {
  const list = declared.length === 0 ? "none" : declared.join(", ");
  suite.test(`the store offers exactly the capabilities declared: ${list}`, (ctx) => {
    assert.deepEqual(capabilitiesOf(ctx.store), declared);
    return Promise.resolve();
  });
}

/** A TypeError whose message names the capability, as `requireCapability` makes it. */
function refusal(capability: StoreCapability): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof TypeError, `a TypeError, got ${String(error)}`);
    assert.match(error.message, new RegExp(`the store has no ${capability} \\(`));
    assert.doesNotMatch(error.message, /is not a function/);
    return true;
  };
}

/** What refuses each capability: the boundary's methods that need it. */
const REFUSALS: Record<
  StoreCapability,
  (boundary: ToolBoundary, ctx: StoreContext) => Promise<void>
> = {
  CallIndex: async (boundary) => {
    const run = await boundary.startRun({ runId: uniqueId("run") });
    const envelope = {
      toolCallId: "call_1",
      runId: run.runId,
      toolName: "fake_success",
      input: { query: "disk" },
    };
    assert.equal((await boundary.invoke(run, envelope)).status, "READY", "a call still runs");
    await assert.rejects(boundary.recall(run, envelope), refusal("CallIndex"));
    await assert.rejects(boundary.listCalls(run.runId), refusal("CallIndex"));
  },
  RunIndex: async (boundary) => {
    await assert.rejects(boundary.listRuns({ limit: 1 }), refusal("RunIndex"));
  },
  RunSeal: async (boundary, ctx) => {
    const run = await boundary.startRun({ runId: uniqueId("run") });
    assert.deepEqual(await boundary.endRun(run), [], "a run still ends, unsealed");
    await assert.rejects(boundary.exportRun(run.runId), refusal("RunSeal"));
    const { privateKey } = await generateLedgerKeys();
    assert.throws(
      () => new ToolBoundary({ store: ctx.store, tools: [], ledgerKey: privateKey }),
      refusal("RunSeal"),
    );
  },
};

/** What each refusal case says it checks. */
const REFUSED: Record<StoreCapability, string> = {
  CallIndex: "recall() and listCalls()",
  RunIndex: "listRuns()",
  RunSeal: "exportRun() and a ledgerKey",
};

/**
 * Registers, for a capability the store lacks, the case that a boundary on it refuses what
 * needs the capability with a TypeError that names it.
 */
export function absentCapabilityCase(
  suite: Suite<StoreContext>,
  capability: StoreCapability,
): void {
  suite.test(
    `without ${capability}, a boundary refuses ${REFUSED[capability]} with a TypeError naming it`,
    async (ctx) => {
      assert.equal(capabilitiesOf(ctx.store).includes(capability), false);
      const boundary = new ToolBoundary({
        store: ctx.store,
        tools: createFakeToolkit().tools,
        limits: SUITE_LIMITS,
        clock: ctx.clock,
      });
      await REFUSALS[capability](boundary, ctx);
    },
  );
}
