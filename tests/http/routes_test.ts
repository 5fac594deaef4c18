import assert from "node:assert/strict";
import * as v from "valibot";
import { generateLedgerKeys, ToolBoundary } from "../../src/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { runInspector } from "../../src/inspector/mod.ts";
import { mcpRoute } from "../../src/mcp/mod.ts";
import { buildOpenApi } from "../../src/hono/openapi.ts";
import { pathGuards, ROUTES } from "../../src/hono/routes.ts";
import { schemaOf } from "../../src/hono/responses.ts";
import { DEMO_TOOLS } from "../../edge/demo/tools.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

// With a ledger key, so that GET /v1/ledger-key answers 200 like every public route.
const { privateKey } = await generateLedgerKeys();

/** The app with every route of the table: the MCP route needs a secret and `mcpRoute()`. */
function app() {
  return createApp({
    boundary: new ToolBoundary({ tools: DEMO_TOOLS, ledgerKey: privateKey }),
    agentToken: AGENT,
    harnessToken: HARNESS,
    secret: "server-secret-0123456789abcdef-0123",
    mcp: mcpRoute(),
  });
}

/** A route's path with safe values for its parameters. */
const concrete = (path: string) => path.replace(":runId", "run-x").replace(":toolCallId", "call_x");

function request(method: string, path: string, token: string | null): Request {
  const headers = new Headers({ "content-type": "application/json" });
  if (token !== null) headers.set("authorization", `Bearer ${token}`);
  return new Request(`http://localhost${path}`, {
    method,
    headers,
    ...(method === "POST" ? { body: "{}" } : {}),
  });
}

Deno.test("every route of the table answers only the tokens its access allows", async () => {
  const served = app();
  const seen: string[] = [];
  for (const route of ROUTES) {
    const method = route.method.toUpperCase();
    const path = concrete(route.path);
    const status = async (token: string | null) =>
      (await served.request(request(method, path, token))).status;
    const [none, agent, harness] = [await status(null), await status(AGENT), await status(HARNESS)];
    seen.push(`${route.access} ${method} ${route.path}`);
    if (route.access === "public") {
      assert.deepEqual([none, agent, harness], [200, 200, 200], route.path);
    } else {
      assert.equal(none, 401, route.path);
      assert.equal(agent === 403, route.access === "harness", `${route.path}: ${agent}`);
      assert.notEqual(harness, 401, route.path);
      assert.notEqual(harness, 403, route.path);
    }
  }
  assert.equal(seen.length, 16);
});

Deno.test("every path parameter of the table is refused with its own code when unsafe", async () => {
  const served = app();
  let checked = 0;
  for (const route of ROUTES) {
    for (
      const [param, code] of [["runId", "INVALID_RUN_ID"], ["toolCallId", "INVALID_TOOL_CALL_ID"]]
    ) {
      if (!route.path.includes(`:${param}`)) continue;
      const path = concrete(route.path.replace(`:${param}`, "a%20b"));
      const res = await served.request(request(route.method.toUpperCase(), path, HARNESS));
      assert.equal(res.status, 400, `${route.path} ${param}`);
      assert.equal((await res.json()).code, code);
      checked++;
    }
  }
  assert.equal(checked, 10);
});

Deno.test("every method a path of the table does not serve is 405 with Allow naming those it does", async () => {
  const served = app();
  const allowed = new Map<string, string[]>();
  for (const route of ROUTES) {
    const methods = allowed.get(route.path) ?? [];
    methods.push(route.method.toUpperCase(), ...(route.method === "get" ? ["HEAD"] : []));
    allowed.set(route.path, methods);
  }
  let refused = 0;
  for (const [path, methods] of allowed) {
    for (const method of METHODS.filter((method) => !methods.includes(method))) {
      const res = await served.request(request(method, concrete(path), null));
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), methods.join(", "));
      assert.equal(res.headers.get("cache-control"), "no-store");
      const body = await res.text(); // HEAD: none
      assert.deepEqual(
        method === "HEAD" ? body : JSON.parse(body),
        method === "HEAD" ? "" : {
          status: "ERROR",
          code: "METHOD_NOT_ALLOWED",
          message: "This method is not allowed on this route.",
        },
      );
      refused++;
    }
  }
  // /v1/runs serves POST, GET and HEAD.
  assert.equal(refused, 5 * 6 + 9 * 5 + 4);
});

Deno.test("a route added to the app after createApp() gets its 405s too", async () => {
  const served = app();
  served.put("/v1/custom", (c) => c.json({ ok: true }));
  const res = await served.request("/v1/custom", { method: "DELETE" });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("allow"), "PUT");
});

Deno.test("pathGuards() refuses a path parameter that has no check", () => {
  assert.deepEqual(pathGuards("/v1/tools"), []);
  assert.equal(pathGuards("/v1/runs/:runId/tool-calls/:toolCallId").length, 1);
  assert.throws(() => pathGuards("/v1/runs/:runId/notes/:noteId"), {
    name: "TypeError",
    message: "Cannot create app: no check for the path parameter :noteId",
  });
});

Deno.test("buildOpenApi() refuses a route whose body schema is no component", () => {
  const info = { title: "t", version: "1" };
  const [startRun] = ROUTES;
  assert.ok(startRun?.body !== undefined);
  assert.equal(Object.keys(buildOpenApi([startRun], info).paths as object).length, 1);
  assert.throws(() => buildOpenApi([{ ...startRun, body: { schema: () => v.object({}) } }], info), {
    name: "TypeError",
    message: "Cannot build OpenAPI: a body schema is no component",
  });
});

Deno.test("schemaOf() types a schema whose output is the type, readonly aside", () => {
  interface Fact {
    readonly id: string;
    kind: "A" | "B";
    note?: string;
  }
  const exact = schemaOf<Fact>()(
    v.object({ id: v.string(), kind: v.picklist(["A", "B"]), note: v.exactOptional(v.string()) }),
  );
  assert.deepEqual(v.parse(exact, { id: "f1", kind: "A" }), { id: "f1", kind: "A" });
  // Each of these differs from Fact in one way; `deno check` fails if any is accepted.
  const kinds = v.picklist(["A", "B"]);
  const note = v.exactOptional(v.string());
  schemaOf<Fact>()(
    // @ts-expect-error: the optional field is missing
    v.object({ id: v.string(), kind: kinds }),
  );
  schemaOf<Fact>()(
    // @ts-expect-error: a member of the union is missing
    v.object({ id: v.string(), kind: v.picklist(["A"]), note }),
  );
  schemaOf<Fact>()(
    // @ts-expect-error: a field has another type
    v.object({ id: v.number(), kind: kinds, note }),
  );
  schemaOf<Fact>()(
    // @ts-expect-error: an optional field is required
    v.object({ id: v.string(), kind: kinds, note: v.string() }),
  );
  schemaOf<Fact>()(
    // @ts-expect-error: a field the type does not have
    v.object({ id: v.string(), kind: kinds, note, extra: v.string() }),
  );
});

Deno.test("GET / lists every route as JSON, and sends a browser to the inspector only when it is served", async () => {
  const tokens = { agentToken: "agent-token-0123456789", harnessToken: "harness-token-0123456789" };
  const plain = createApp({ boundary: new ToolBoundary({ tools: [] }), ...tokens });
  const res = await plain.request("/", { headers: { accept: "text/html,application/json" } });
  assert.equal(res.status, 200);
  const index = await res.json();
  assert.equal(index.openapi, "/openapi.json");
  const listed = index.routes.map((r: { method: string; path: string }) => `${r.method} ${r.path}`);
  assert.ok(listed.includes("GET /"));
  assert.ok(listed.includes("POST /v1/runs/{runId}/tool-calls"));
  const doc = await (await plain.request("/openapi.json")).json();
  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
  assert.deepEqual([...listed].sort(), [...documented].sort());

  const withPage = createApp({
    boundary: new ToolBoundary({ tools: [] }),
    ...tokens,
    inspector: runInspector(),
  });
  const browser = await withPage.request("/", { headers: { accept: "text/html" } });
  assert.equal(browser.status, 302);
  assert.equal(browser.headers.get("location"), "inspect");
  const client = await withPage.request("/", { headers: { accept: "application/json" } });
  assert.equal(client.status, 200);
  assert.deepEqual((await client.json()).routes, index.routes);
});
