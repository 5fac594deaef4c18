/**
 * Through the boundary: boundaries with different tools share one store and its rules; a run
 * started by one is resumed by ID in another, or called by reference with nothing read first.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { RunInstance } from "../../core/types.ts";
import type { BoundaryContext, Suite } from "./context.ts";
import { assertError } from "./helpers.ts";

/** Registers the cases of boundaries that share a store. */
export function boundarySharedCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "two boundaries on one store share a run: duplicates, facts and the end bind both",
    async (ctx) => {
      // Two independent boundaries (say, two services with different tools) share the store and
      // its rules without sharing code: one starts the run, the other resumes it by ID.
      const other = new ToolBoundary({
        store: ctx.store,
        clock: ctx.clock,
        tools: [{
          name: "rag_search",
          readOnly: true,
          execute: () => ({ passages: ["p1"] }),
          project: (raw: { passages: string[] }) => ({
            evidence: "EVIDENCE_FOUND",
            scope: "rag index",
            content: raw.passages,
          }),
        }],
      });
      const run = await ctx.run();
      const resumed = await other.getRun(run.runId);
      assert.deepEqual(resumed, run);
      assert.ok(resumed);
      assert.equal((await ctx.call(run, "call_shared", ctx.kit.names.success)).status, "READY");
      const rag = (toolCallId: string) =>
        other.invoke(resumed, { toolCallId, runId: run.runId, toolName: "rag_search", input: {} });
      assertError(
        await rag("call_shared"),
        "TOOL_CALL_CONFLICT",
        "a used key is caught across boundaries",
      );
      assert.equal((await rag("call_rag")).status, "READY");
      const facts = await ctx.boundary.endRun(run);
      assert.deepEqual(facts.map((f) => f.toolCallId), ["call_shared", "call_rag"]);
      assertError(
        await rag("call_after_end"),
        "RUN_INACTIVE",
        "an end seen by one boundary binds the other",
      );
    },
  );

  suite.test(
    "invoke and recall take a run reference; a context or reference of another instance of the run ID is RUN_NOT_FOUND and runs nothing",
    async (ctx) => {
      const seen: RunInstance[] = [];
      const other = new ToolBoundary({
        store: ctx.store,
        clock: ctx.clock,
        tools: [{
          name: "whoami",
          readOnly: true,
          execute: (_input, { run }) => {
            seen.push(run);
            return { runId: run.runId };
          },
          project: (raw: { runId: string }) => ({
            evidence: "EVIDENCE_FOUND",
            scope: "whoami",
            content: raw.runId,
          }),
        }],
      });
      const run = await ctx.run();
      const { runId, startedAt, deadline } = run;
      const envelope = (toolCallId: string) => ({
        toolCallId,
        runId,
        toolName: "whoami",
        input: {},
      });
      // A boundary that never saw the run: by ID, or by its instance. The tool gets the
      // instance the store's begin answered.
      const byId = await other.invoke({ runId }, envelope("call_by_id"));
      assert.equal(byId.status, "READY");
      assert.equal(
        (await other.invoke({ runId, startedAt }, envelope("call_named"))).status,
        "READY",
      );
      assert.deepEqual(seen, [{ runId, deadline, startedAt }, { runId, deadline, startedAt }]);
      // Another instance of the ID: a context kept from it, or a reference naming it.
      const earlier = { ...run, startedAt: startedAt - 1 };
      assertError(await other.invoke(earlier, envelope("call_stale")), "RUN_NOT_FOUND");
      assertError(
        await other.invoke({ runId, startedAt: startedAt + 1 }, envelope("call_later")),
        "RUN_NOT_FOUND",
      );
      assert.equal(seen.length, 2, "no tool ran for another instance");
      for (const id of ["call_stale", "call_later"]) {
        assert.equal(await ctx.boundary.inspect(runId, id), null, id);
      }
      assert.equal((await ctx.store.getRun(runId))?.used.calls, 2);
      // recall alike: by reference it reads the one call, for another instance nothing.
      assert.deepEqual(await other.recall({ runId }, envelope("call_by_id")), {
        ...byId,
        replayed: true,
      });
      assertError(await other.recall(earlier, envelope("call_by_id")), "RUN_NOT_FOUND");
      assertError(
        await other.recall({ runId, startedAt: startedAt + 1 }, envelope("call_by_id")),
        "RUN_NOT_FOUND",
      );
      // Neither a context nor a reference: a programming error.
      await assert.rejects(() => other.invoke({ runId: "bad id" }, envelope("c")), TypeError);
      await assert.rejects(
        () => other.invoke({ runId, startedAt: -1 }, envelope("c")),
        TypeError,
      );
    },
  );
}
