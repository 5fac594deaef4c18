/**
 * Through the boundary: one canonical record per call, keyed by the framework's exact tool call
 * ID, holding the complete request, raw response and agent result.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../core/boundary.ts";
import type { StoredRecord } from "../../core/store.ts";
import { CANARY_SECRET } from "../fakes.ts";
import { type BoundaryContext, type Suite, uniqueId } from "./context.ts";
import { assertError, assertSafe, endRunIndex, executed } from "./helpers.ts";

/** Registers the record cases that go through a `ToolBoundary`. */
export function boundaryRecordCases(suite: Suite<BoundaryContext>): void {
  suite.test(
    "a READY call keeps the complete request, raw response, agent result and metadata in one record",
    async (ctx) => {
      const run = await ctx.run();
      const input = { query: "disk ✓ 日本", limit: 3, nested: { flag: true, none: null } };
      const result = await ctx.call(run, "call_full", ctx.kit.names.success, input);
      assert.equal(result.status, "READY");
      assertSafe(result);
      const record = await ctx.boundary.inspect(run.runId, "call_full");
      assert.ok(record);
      assert.equal(record.runId, run.runId);
      assert.equal(record.toolCallId, "call_full");
      assert.equal(record.toolName, ctx.kit.names.success);
      assert.equal(record.status, "READY");
      assert.equal(record.evidence, "EVIDENCE_FOUND");
      assert.deepEqual(record.request, input);
      assert.deepEqual(record.raw, {
        query: input.query,
        hits: ["line 1: match", "line 2: match"],
        credential: CANARY_SECRET,
      });
      assert.deepEqual(record.agentResult, {
        evidence: "EVIDENCE_FOUND",
        scope: `fake index, query "${input.query}"`,
        content: ["line 1: match", "line 2: match"],
      });
      assert.equal(record.errorCode, null);
      assert.ok(record.createdAt <= record.updatedAt);
      assert.ok(record.expiresAt > record.createdAt);
    },
  );

  suite.test(
    "while the tool runs its record is PROJECTING with the exact ID and request and no result",
    async (ctx) => {
      const run = await ctx.run();
      let during: StoredRecord | null = null;
      const store = ctx.store;
      const probe = new ToolBoundary({
        store,
        clock: ctx.clock,
        tools: [{
          name: "probe",
          readOnly: true,
          execute: async () => {
            during = await store.get(run.runId, "toolu_01ProbeXyz");
            return { ok: true };
          },
          project: () => ({ evidence: "NO_EVIDENCE", scope: "probe", content: null }),
        }],
      });
      const result = await probe.invoke(run, {
        toolCallId: "toolu_01ProbeXyz",
        runId: run.runId,
        toolName: "probe",
        input: '{"query": "a", "n": 1}',
      });
      assert.equal(result.status, "READY");
      const seen = during as StoredRecord | null;
      assert.ok(seen, "the record exists while the tool runs");
      assert.equal(seen.status, "PROJECTING");
      assert.equal(seen.toolCallId, "toolu_01ProbeXyz");
      assert.equal(seen.requestJson, '{"query":"a","n":1}');
      assert.equal(seen.agentResultJson, null);
      assert.equal(seen.rawJson, null);
      assert.equal(seen.evidence, null);
    },
  );

  suite.test(
    "invoke() returns only the bounded agent result, which the record holds beside the raw response",
    async (ctx) => {
      const run = await ctx.run();
      const result = await ctx.call(run, "call_ok", ctx.kit.names.success);
      assert.deepEqual(result, {
        status: "READY",
        toolCallId: "call_ok",
        evidence: "EVIDENCE_FOUND",
        scope: 'fake index, query "disk"',
        content: ["line 1: match", "line 2: match"],
      });
      const stored = await ctx.store.get(run.runId, "call_ok");
      assert.ok(stored);
      assert.equal(stored.status, "READY");
      assert.ok(stored.rawJson?.includes(CANARY_SECRET), "raw data stays in the record");
      assert.deepEqual(JSON.parse(stored.agentResultJson ?? "null"), {
        evidence: "EVIDENCE_FOUND",
        scope: 'fake index, query "disk"',
        content: ["line 1: match", "line 2: match"],
      });
    },
  );

  suite.test(
    "framework tool call IDs are kept exactly in the result, the record and the progress index; unsafe ones are refused and never echoed",
    async (ctx) => {
      const run = await ctx.run();
      const ids = [
        "call_Xy12AbCdEf34",
        "toolu_01A09q90qw90lq917835lq9",
        "fc_67d9a0c1b2e3f4a5",
        "3f2b8c1e-9d4a-4b7e-8f6a-2c5d9e1b7a40",
        "functions.search_logs:0",
        "123",
        "007",
        "1e3",
        "true",
        "null",
      ];
      for (const id of ids) {
        const result = await ctx.call(run, id, ctx.kit.names.noEvidence);
        assert.equal(result.status, "READY", id);
        assert.equal(result.toolCallId, id);
        const stored = await ctx.store.get(run.runId, id);
        assert.equal(stored?.toolCallId, id);
        assert.equal(stored?.runId, run.runId);
      }
      const unsafe = [
        " call_1",
        "call_1 ",
        "call_1\n",
        "call\u0000",
        "a{b}",
        "a/b",
        'a"b',
        "x".repeat(257),
      ];
      for (const id of unsafe) {
        const result = await ctx.call(run, id, ctx.kit.names.noEvidence);
        assertError(result, "INVALID_TOOL_CALL_ID", JSON.stringify(id));
        assert.equal(result.toolCallId, null, "an unsafe ID is never echoed or replaced");
      }
      for (const id of [42, null, undefined, { id: "call_1" }]) {
        const result = await ctx.call(run, id as unknown as string, ctx.kit.names.noEvidence);
        assertError(result, "INVALID_TOOL_CALL_ID");
      }
      assert.equal(executed(ctx, ctx.kit.names.noEvidence), ids.length);
      const { toolCallIds } = await endRunIndex(ctx, run.runId);
      assert.deepEqual(toolCallIds, ids);
    },
  );

  suite.test(
    "invoke() refuses a second call with a used key (DUPLICATE_TOOL_CALL for the same request, TOOL_CALL_CONFLICT for another): the tool does not run, the first record and the budget stay",
    async (ctx) => {
      const run = await ctx.run();
      const first = await ctx.call(run, "call_same", ctx.kit.names.success);
      assert.equal(first.status, "READY");
      const before = await ctx.store.get(run.runId, "call_same");
      assertError(await ctx.call(run, "call_same", ctx.kit.names.success), "DUPLICATE_TOOL_CALL");
      const second = await ctx.call(run, "call_same", ctx.kit.names.noEvidence, { query: "other" });
      assertError(second, "TOOL_CALL_CONFLICT");
      assertSafe(second);
      assert.equal(executed(ctx, ctx.kit.names.success), 1, "the first tool ran once");
      assert.equal(executed(ctx, ctx.kit.names.noEvidence), 0, "the second tool is not executed");
      assert.deepEqual(
        await ctx.store.get(run.runId, "call_same"),
        before,
        "first record untouched",
      );
      const used = await ctx.store.getRun(run.runId);
      assert.equal(used?.used.calls, 1, "a refused duplicate uses no budget");
    },
  );

  suite.test(
    "a used key with another tool and the same input is TOOL_CALL_CONFLICT in refuse and replay mode, also once the record expired: the tool does not run, the first record stays",
    async (ctx) => {
      const { names } = ctx.kit;
      for (const onDuplicate of ["refuse", "replay"] as const) {
        const boundary = new ToolBoundary({
          store: ctx.store,
          tools: ctx.kit.tools,
          clock: ctx.clock,
          recordTtlMs: ctx.ttlMs,
          onDuplicate,
        });
        const run = await boundary.startRun({ runId: uniqueId("run") });
        const call = {
          toolCallId: "call_k",
          runId: run.runId,
          toolName: names.success,
          input: { query: "disk" },
        };
        assert.equal((await boundary.invoke(run, call)).status, "READY");
        const record = await ctx.store.get(run.runId, "call_k");
        const otherTool = { ...call, toolName: names.noEvidence };
        assertError(await boundary.invoke(run, otherTool), "TOOL_CALL_CONFLICT", "call_k");
        assert.deepEqual(await ctx.store.get(run.runId, "call_k"), record, onDuplicate);
        await ctx.advance(Math.ceil(ctx.ttlMs * 1.3));
        assert.equal(await ctx.store.get(run.runId, "call_k"), null, "the record expired");
        // The key stays begun with its request's digest, which names its tool.
        assertError(await boundary.invoke(run, otherTool), "TOOL_CALL_CONFLICT", "call_k");
        assert.equal((await ctx.store.getRun(run.runId))?.used.calls, 1, onDuplicate);
      }
      assert.equal(executed(ctx, names.success), 2, "the first tool ran once per run");
      assert.equal(executed(ctx, names.noEvidence), 0, "the other tool never ran");
    },
  );

  suite.test(
    "the exact framework ID is the key: no case folding, and the fact carries it",
    async (ctx) => {
      const run = await ctx.run();
      const id = "call_AbC-123_xYz.9:0";
      const result = await ctx.call(run, id, ctx.kit.names.success);
      assert.equal(result.toolCallId, id);
      const stored = await ctx.store.get(run.runId, id);
      assert.equal(stored?.toolCallId, id);
      assert.equal(await ctx.store.get(run.runId, id.toLowerCase()), null, "no case folding");
      const facts = await ctx.boundary.endRun(run);
      assert.equal(facts[0]?.toolCallId, id);
    },
  );
}
