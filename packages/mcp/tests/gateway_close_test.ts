/**
 * `connectGateway(...).close()` lets go of every connection to an HTTP upstream, the SDK's
 * event streams included: an upstream that keeps its GET stream open sees the client go, and its
 * graceful shutdown ends.
 */
import assert from "node:assert/strict";
import { Server } from "@modelcontextprotocol/sdk/server";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ToolBoundary } from "@tool-boundary/core";
import { connectGateway } from "../gateway.ts";

/** A stateless upstream that serves GET event streams, counting those still open. */
function upstream() {
  let open = 0;
  let opened = 0;
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const server = new Server({ name: "notes", version: "1.0.0" }, {
      capabilities: { tools: {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{
        name: "read_note",
        inputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
      }],
    }));
    server.setRequestHandler(CallToolRequestSchema, () => ({
      content: [{ type: "text", text: "buy milk" }],
    }));
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    const response = await transport.handleRequest(req);
    if (req.method !== "GET" || response.body === null) return response;
    // The stream as the server sends it, with a count of the ones the client still holds.
    const reader = response.body.getReader();
    open++;
    opened++;
    let counted = true;
    const done = () => {
      if (counted) open--;
      counted = false;
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done: ended, value } = await reader.read();
        if (ended) {
          done();
          controller.close();
        } else controller.enqueue(value);
      },
      cancel(reason) {
        done();
        return reader.cancel(reason);
      },
    });
    return new Response(body, response);
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    open: () => open,
    opened: () => opened,
    shutdown: () => http.shutdown(),
  };
}

/** Resolves true when `promise` settles within `ms`, false otherwise. */
async function within(ms: number, promise: Promise<unknown>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits up to `ms` for `test` to hold. */
async function until(ms: number, test: () => boolean): Promise<boolean> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

const ROUNDS = 5;

/** A gateway in front of `url`: two calls through a boundary, then close(). */
async function useGateway(url: string, perRequest: boolean): Promise<void> {
  const gateway = await connectGateway([{ url, trusted: true }], { perRequest, log: () => {} });
  try {
    const boundary = new ToolBoundary({ tools: gateway.tools });
    const run = await boundary.startRun({ ttlMs: 60_000 });
    for (const toolCallId of ["c1", "c2"]) {
      const result = await boundary.invoke(run, {
        toolCallId,
        runId: run.runId,
        toolName: "read_note",
        input: {},
      });
      assert.deepEqual(result.status === "READY" && result.content, ["buy milk"]);
    }
  } finally {
    await gateway.close();
  }
}

for (const perRequest of [false, true]) {
  Deno.test(`connectGateway${perRequest ? " (perRequest)" : ""}: close() ends the upstream's event streams`, async () => {
    const server = upstream();
    let stopped = false;
    try {
      // Five gateways one after another: the runtime's miss (see eventStreams) is a race.
      for (let round = 0; round < ROUNDS; round++) await useGateway(server.url, perRequest);
      // The client did open event streams: one per connection.
      assert.ok(server.opened() >= ROUNDS, `${server.opened()} GET streams opened`);
      assert.ok(await until(5_000, () => server.open() === 0), `${server.open()} still open`);
      stopped = await within(5_000, server.shutdown());
      assert.ok(stopped, "the upstream's graceful shutdown did not end");
    } finally {
      // Never leave the listener behind, even when the test failed above.
      if (!stopped) await within(100, server.shutdown());
    }
  });
}
