/**
 * `mcpTools` in front of real upstream MCP servers from npm, through the official SDK client:
 * the filesystem server over stdio on a temporary folder, and the everything server over
 * Streamable HTTP. Trusted and untrusted servers, `readOnly` overrides both ways, writable tools
 * that never reach the server, upstream errors kept as the record's raw, the boundary's tool call
 * ID in `_meta`, duplicates refused, structured content, timeouts.
 */
import assert from "node:assert/strict";
import {
  type BoundaryResult,
  ERROR_MESSAGES,
  type RunContext,
  ToolBoundary,
} from "@tool-boundary/core";
import { MemoryStore } from "@tool-boundary/core/memory";
import { MAX_TIMER_MS } from "@tool-boundary/core/harness";
import { MAX_TIMEOUT_MS, type McpClient, type McpProjectContext, mcpTools } from "../mod.ts";
import {
  everythingServer,
  filesystemServer,
  type Sdk,
  SDKS,
  type Upstream,
} from "../../../tests/support/mcp_upstreams.ts";

const META = "io.tool-boundary/toolCallId";

/** A boundary over the gateway's tools, one run, and a call function for it. */
async function gateway(tools: Awaited<ReturnType<typeof mcpTools>>) {
  const boundary = new ToolBoundary({ store: new MemoryStore(), tools });
  const run: RunContext = await boundary.startRun({ ttlMs: 120_000 });
  const call = (toolCallId: string, toolName: string, input: Record<string, unknown>) =>
    boundary.invoke(run, { toolCallId, runId: run.runId, toolName, input });
  return { boundary, run, call };
}

const code = (result: BoundaryResult) => result.status === "ERROR" ? result.code : result.status;

/** Every file of a folder with its text, to tell that nothing was written. */
async function contents(folder: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for await (const entry of Deno.readDir(folder)) {
    files[entry.name] = entry.isFile ? await Deno.readTextFile(`${folder}/${entry.name}`) : "dir";
  }
  return files;
}

async function withFolder(
  sdk: Sdk,
  fn: (folder: string, upstream: Upstream) => Promise<void>,
) {
  const folder = await Deno.realPath(await Deno.makeTempDir({ prefix: "tb-mcp-fs-" }));
  await Deno.writeTextFile(`${folder}/notes.txt`, "disk full at 12:01\n");
  const upstream = await filesystemServer(folder, sdk);
  try {
    await fn(folder, upstream);
  } finally {
    await upstream.close();
    await Deno.remove(folder, { recursive: true });
  }
}

for (const sdk of SDKS) {
  Deno.test(`${sdk} client, filesystem over stdio, trusted: reads run, writes never reach the server`, async () => {
    await withFolder(sdk, async (folder, upstream) => {
      const client: McpClient = upstream.client; // either SDK's Client fits as it is
      const tools = await mcpTools(client, { trusted: true });
      const { boundary, run, call } = await gateway(tools);
      const { tools: listed } = await upstream.client.listTools();

      // Read-only exactly where the trusted server says readOnlyHint: true.
      assert.deepEqual(
        tools.map((tool) => [tool.name, tool.readOnly]),
        listed.map((tool) => [tool.name, tool.annotations?.readOnlyHint === true]),
      );
      assert.ok(tools.some((tool) => tool.readOnly) && tools.some((tool) => !tool.readOnly));
      // The model sees the server's own argument schemas.
      const described = boundary.describeTools();
      for (const tool of listed) {
        const { $schema: _, ...schema } = tool.inputSchema as Record<string, unknown>;
        assert.deepEqual(described.find((d) => d.name === tool.name)?.inputSchema, schema);
      }

      const before = await contents(folder);
      const read = await call("call_read", "read_text_file", { path: `${folder}/notes.txt` });
      // read_text_file declares an outputSchema: the projector got its structuredContent.
      assert.deepEqual(read, {
        status: "READY",
        toolCallId: "call_read",
        evidence: "EVIDENCE_FOUND",
        scope: 'tool "read_text_file" of MCP server "secure-filesystem-server"',
        content: { content: "disk full at 12:01\n" },
      });
      const record = await boundary.inspect(run.runId, "call_read");
      assert.equal(record?.status, "READY");
      assert.deepEqual((record?.raw as { structuredContent: unknown }).structuredContent, {
        content: "disk full at 12:01\n",
      });

      for (
        const [id, name, input] of [
          ["call_write", "write_file", { path: `${folder}/notes.txt`, content: "wiped" }],
          ["call_mkdir", "create_directory", { path: `${folder}/new` }],
          ["call_move", "move_file", { source: `${folder}/notes.txt`, destination: `${folder}/x` }],
        ] as const
      ) {
        assert.equal(code(await call(id, name, input)), "NOT_READ_ONLY");
        assert.equal(await boundary.inspect(run.runId, id), null, "refused before any record");
      }
      assert.deepEqual(await contents(folder), before, "the folder is unchanged");
      assert.deepEqual(upstream.calls().map((sent) => sent.params.name), ["read_text_file"]);

      // Outside its folder the server answers isError: kept as the raw, the agent gets the code.
      const denied = await call("call_denied", "read_text_file", { path: "/etc/hostname" });
      assert.deepEqual(denied, {
        status: "ERROR",
        toolCallId: "call_denied",
        code: "EXECUTION_FAILED",
        message: ERROR_MESSAGES.EXECUTION_FAILED,
      });
      const failed = await boundary.inspect(run.runId, "call_denied");
      assert.equal(failed?.status, "ERROR");
      assert.doesNotMatch(JSON.stringify(failed?.agentResult), /access denied/i);
      const raw = failed?.raw as { isError: boolean; content: { text: string }[] };
      assert.equal(raw.isError, true);
      assert.match(raw.content[0]!.text, /access denied/i);

      // A retried call ID is refused by the boundary and never sent again.
      const retried = await call("call_read", "read_text_file", { path: `${folder}/notes.txt` });
      assert.equal(code(retried), "DUPLICATE_TOOL_CALL");
      // Each call that went upstream carried the boundary's tool call ID, and only those two went.
      assert.deepEqual(
        upstream.calls().map((sent) => (sent.params._meta as Record<string, unknown>)[META]),
        ["call_read", "call_denied"],
      );
    });
  });

  Deno.test(`${sdk} client, filesystem, untrusted: nothing runs unless readOnly names it`, async () => {
    await withFolder(sdk, async (folder, upstream) => {
      const untrusted = await gateway(await mcpTools(upstream.client));
      const path = `${folder}/notes.txt`;
      assert.equal(code(await untrusted.call("u1", "read_text_file", { path })), "NOT_READ_ONLY");
      assert.equal(
        code(await untrusted.call("u2", "list_directory", { path: folder })),
        "NOT_READ_ONLY",
      );
      assert.deepEqual(upstream.calls(), []);

      // readOnly: true lets one tool run on an untrusted server; the rest stay refused.
      const named = await gateway(
        await mcpTools(upstream.client, { readOnly: { read_text_file: true } }),
      );
      assert.equal(code(await named.call("n1", "read_text_file", { path })), "READY");
      assert.equal(
        code(await named.call("n2", "list_directory", { path: folder })),
        "NOT_READ_ONLY",
      );

      // readOnly: false refuses a tool even of a trusted server that calls it read-only.
      const vetoed = await gateway(
        await mcpTools(upstream.client, { trusted: true, readOnly: { read_text_file: false } }),
      );
      assert.equal(code(await vetoed.call("v1", "read_text_file", { path })), "NOT_READ_ONLY");
      assert.equal(code(await vetoed.call("v2", "list_directory", { path: folder })), "READY");
      assert.deepEqual(upstream.calls().map((sent) => sent.params.name), [
        "read_text_file",
        "list_directory",
      ]);

      // A name the server does not list is a mistake, not a silent no-op.
      await assert.rejects(
        mcpTools(upstream.client, { readOnly: { read_txt_file: true } }),
        /readOnly names "read_txt_file", not a listed tool/,
      );
      await assert.rejects(
        mcpTools(upstream.client, { readOnly: { read_text_file: "yes" as unknown as boolean } }),
        /must be a boolean/,
      );
    });
  });

  Deno.test(`${sdk} client, everything over Streamable HTTP: projection, errors, _meta, timeouts`, async () => {
    const upstream = await everythingServer(sdk);
    try {
      const tools = await mcpTools(upstream.client, {
        trusted: true,
        // get-env says readOnlyHint but returns the server's environment: not for the model.
        readOnly: { "get-env": false, "trigger-long-running-operation": true },
        project: {
          "get-sum": (raw) => ({
            evidence: "EVIDENCE_FOUND",
            scope: "get-sum",
            content: (raw.content as { text: string }[])[0]!.text,
          }),
        },
        prefix: "everything_",
        timeoutMs: 1_000,
      });
      const byName = new Map(tools.map((tool) => [tool.name, tool.readOnly]));
      assert.equal(byName.get("everything_echo"), true);
      assert.equal(byName.get("everything_get-env"), false);
      assert.equal(byName.get("everything_gzip-file-as-resource"), false); // readOnlyHint: false
      assert.equal(byName.get("everything_toggle-simulated-logging"), false); // no hint at all
      const { boundary, run, call } = await gateway(tools);

      const echoed = await call("e1", "everything_echo", { message: "hi" });
      assert.deepEqual(echoed.status === "READY" && echoed.content, ["Echo: hi"]);
      assert.equal(
        echoed.status === "READY" && echoed.scope,
        'tool "echo" of MCP server "mcp-servers/everything"',
      );

      const summed = await call("e2", "everything_get-sum", { a: 2, b: 3 });
      assert.equal(summed.status === "READY" && summed.content, "The sum of 2 and 3 is 5.");

      const weather = await call("e3", "everything_get-structured-content", {
        location: "Chicago",
      });
      assert.deepEqual(weather.status === "READY" && weather.content, {
        temperature: 36,
        conditions: "Light rain / drizzle",
        humidity: 82,
      });

      // The image's bytes stay in the record; the model gets what it is.
      const image = await call("e4", "everything_get-tiny-image", {});
      assert.ok(image.status === "READY");
      assert.ok(JSON.stringify(image.content).includes('{"type":"image","mimeType":"image/png"}'));
      assert.ok(!JSON.stringify(image.content).includes("iVBOR"));
      const imageRaw = (await boundary.inspect(run.runId, "e4"))?.raw as {
        content: { type: string; data?: string }[];
      };
      assert.match(imageRaw.content.find((item) => item.type === "image")!.data!, /^iVBOR/);

      // Arguments that do not match the listed inputSchema are refused before the server.
      const bad = await call("e5", "everything_get-sum", { a: "two", b: 3 });
      assert.deepEqual(bad, {
        status: "ERROR",
        toolCallId: "e5",
        code: "INVALID_INPUT",
        message: ERROR_MESSAGES.INVALID_INPUT,
        issues: [{ path: "a", expected: "number" }],
      });
      assert.equal(await boundary.inspect(run.runId, "e5"), null, "refused before any record");

      assert.equal(code(await call("e6", "everything_get-env", {})), "NOT_READ_ONLY");
      assert.equal(
        code(await call("e1", "everything_echo", { message: "hi" })),
        "DUPLICATE_TOOL_CALL",
      );

      // Past timeoutMs the boundary stops the call; the client cancels it upstream.
      const slow = await call("e7", "everything_trigger-long-running-operation", {
        duration: 10,
        steps: 2,
      });
      assert.equal(code(slow), "TOOL_TIMEOUT");
      const cancelled = upstream.sent.find((sent) => sent.method === "notifications/cancelled");
      assert.ok(cancelled !== undefined, "the upstream request was cancelled");

      assert.deepEqual(
        upstream.calls().map((sent) => [sent.params.name, (sent.params._meta as never)[META]]),
        [
          ["echo", "e1"],
          ["get-sum", "e2"],
          ["get-structured-content", "e3"],
          ["get-tiny-image", "e4"],
          ["trigger-long-running-operation", "e7"],
        ],
      );
    } finally {
      await upstream.close();
    }
  });

  Deno.test(`${sdk} client: arguments that do not match the inputSchema never reach the server`, async () => {
    await withFolder(sdk, async (folder, upstream) => {
      const { boundary, run, call } = await gateway(
        await mcpTools(upstream.client, { trusted: true }),
      );
      const refusals: [string, Record<string, unknown>, unknown][] = [
        ["b1", { path: 42 }, [{ path: "path", expected: "string" }]],
        ["b2", {}, [{ path: "path", expected: "required" }]],
        ["b3", { path: `${folder}/notes.txt`, head: "secret-ten" }, [
          { path: "head", expected: "number" },
        ]],
      ];
      for (const [id, input, issues] of refusals) {
        const result = await call(id, "read_text_file", input);
        assert.deepEqual(result, {
          status: "ERROR",
          toolCallId: id,
          code: "INVALID_INPUT",
          message: ERROR_MESSAGES.INVALID_INPUT,
          issues,
        });
        assert.ok(!JSON.stringify(result).includes("secret-ten"), "issues carry no values");
        assert.equal(await boundary.inspect(run.runId, id), null, "refused before any record");
      }
      // The server was asked nothing, and is asked once the arguments match.
      assert.deepEqual(upstream.calls(), []);
      const read = await call("b4", "read_text_file", { path: `${folder}/notes.txt`, head: 1 });
      assert.equal(code(read), "READY");
      assert.deepEqual(upstream.calls().map((sent) => sent.params.arguments), [
        { path: `${folder}/notes.txt`, head: 1 },
      ]);
    });
  });

  Deno.test(`${sdk} client: the projector gets the whole CallToolResult and what was checked`, async () => {
    const upstream = await everythingServer(sdk);
    try {
      const seen: [unknown, Pick<McpProjectContext, "outputSchema" | "structuredChecked">][] = [];
      const tools = await mcpTools(upstream.client, {
        trusted: true,
        project: (raw, ctx) => {
          seen.push([raw, {
            outputSchema: ctx.outputSchema,
            structuredChecked: ctx.structuredChecked,
          }]);
          return { evidence: "EVIDENCE_FOUND", scope: ctx.tool.name, content: null };
        },
      });
      const { boundary, run, call } = await gateway(tools);
      assert.equal(
        code(await call("p1", "get-structured-content", { location: "Chicago" })),
        "READY",
      );
      assert.equal(code(await call("p2", "echo", { message: "hi" })), "READY");
      const [[structured, structuredCtx], [echoed, echoCtx]] = seen as [
        [Record<string, unknown>, unknown],
        [Record<string, unknown>, unknown],
      ];
      // The projector's raw is the record's raw: content list and structured content together.
      assert.deepEqual(structured, (await boundary.inspect(run.runId, "p1"))?.raw);
      assert.deepEqual(structured.structuredContent, {
        temperature: 36,
        conditions: "Light rain / drizzle",
        humidity: 82,
      });
      assert.ok(Array.isArray(structured.content) && structured.content.length > 0);
      assert.deepEqual(structuredCtx, { outputSchema: true, structuredChecked: true });
      assert.deepEqual(echoed, (await boundary.inspect(run.runId, "p2"))?.raw);
      assert.deepEqual(echoed.content, [{ type: "text", text: "Echo: hi" }]);
      assert.deepEqual(echoCtx, { outputSchema: false, structuredChecked: false });
    } finally {
      await upstream.close();
    }
  });

  Deno.test(`${sdk} client: the longest timeoutMs still lets a call run`, async () => {
    const upstream = await everythingServer(sdk);
    try {
      // The client waits 1,000 ms longer than the boundary: exactly a timer's limit here.
      assert.equal(MAX_TIMEOUT_MS + 1_000, MAX_TIMER_MS);
      const tools = await mcpTools(upstream.client, { trusted: true, timeoutMs: MAX_TIMEOUT_MS });
      const { call } = await gateway(tools);
      const echoed = await call("t1", "echo", { message: "still here" });
      assert.deepEqual(echoed.status === "READY" && echoed.content, ["Echo: still here"]);
      // One more and the client's timer would fire at once: refused before anything is asked.
      const before = upstream.sent.length;
      await assert.rejects(
        mcpTools(upstream.client, { timeoutMs: MAX_TIMEOUT_MS + 1 }),
        /timeoutMs must be an integer from 1 to 2147482647/,
      );
      assert.equal(upstream.sent.length, before, "tools/list was not asked");
    } finally {
      await upstream.close();
    }
  });
}
