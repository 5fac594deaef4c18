/**
 * The run inspector as the app serves it: off by default, its page and assets with a strict
 * Content-Security-Policy, nothing in them that loads from elsewhere or writes HTML, its script
 * the source of one function, and the dev server turning it on. The page in a browser:
 * tests/browser/inspector_test.ts.
 */
import assert from "node:assert/strict";
import { ERROR_MESSAGES, ToolBoundary } from "../../src/mod.ts";
import { createApp } from "../../src/hono/mod.ts";
import { INSPECTOR_CSP, type InspectorApp, runInspector } from "../../src/inspector/mod.ts";
import { inspectorMain } from "../../src/inspector/script.ts";
import { INSPECTOR_MAIN_JS } from "../../src/inspector/app_js.ts";
import { APP_JS_PATH, formattedAppJsModule } from "../support/inspector_js.ts";
import { RUN_ID_PATTERN } from "../../src/core/ids.ts";
import { buildEdgeApp } from "../../edge/app.ts";
import { INSPECTOR_AND_MCP } from "../../edge/parts.ts";
import { ROOT, start } from "../runtime/process.ts";
import { bundle } from "../runtime/setup.ts";
import { unresolvedNames } from "../support/browser_script.ts";

const AGENT = "agent-token-0123456789abcdef";
const HARNESS = "harness-token-0123456789abcdef";
const ASSETS = {
  "/inspect": "text/html; charset=utf-8",
  "/inspect/app.js": "text/javascript; charset=utf-8",
  "/inspect/app.css": "text/css; charset=utf-8",
  "/inspect/icon.svg": "image/svg+xml",
} as const;

const app = (inspector?: InspectorApp) =>
  createApp({
    boundary: new ToolBoundary({ tools: [] }),
    agentToken: AGENT,
    harnessToken: HARNESS,
    ...(inspector === undefined ? {} : { inspector }),
  });

async function bodies(): Promise<Record<keyof typeof ASSETS, string>> {
  const served = app(runInspector());
  const out: Record<string, string> = {};
  for (const path of Object.keys(ASSETS)) {
    out[path] = await (await served.request(path)).text();
  }
  return out as Record<keyof typeof ASSETS, string>;
}

Deno.test("createApp serves no inspector unless given one: /inspect is a JSON 404 without it", async () => {
  const served = app();
  for (const path of Object.keys(ASSETS)) {
    const res = await served.request(path);
    assert.equal(res.status, 404, path);
    assert.equal((await res.json()).code, "NOT_FOUND");
  }
});

Deno.test("the JSON API's module graph carries neither the inspector nor the MCP route: a bundle of the hono entry has none of them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-hono-" });
  try {
    const text = await Deno.readTextFile(await bundle("src/hono/mod.ts", dir));
    assert.match(text, /function createApp\(/);
    for (const part of ["inspectorMain", "Run inspector", "INSPECTOR_CSP", "frame-ancestors"]) {
      assert.ok(!text.includes(part), part);
    }
    // Nor the MCP route: it is the `mcp` option, from an entry of its own.
    for (const part of ["io.modelcontextprotocol/protocolVersion", "notifications/cancelled"]) {
      assert.ok(!text.includes(part), part);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the inspector's script is the text of one function, called with the error messages and the run ID pattern as JSON", async () => {
  const script = (await bodies())["/inspect/app.js"];
  const config = { messages: ERROR_MESSAGES, runIdPattern: RUN_ID_PATTERN.source };
  // The text kept in app_js.ts is the function as written, types stripped, and is what is served.
  assert.equal(INSPECTOR_MAIN_JS, inspectorMain.toString());
  assert.equal(script, `(${INSPECTOR_MAIN_JS})(${JSON.stringify(config)});`);
  assert.match(script, /^\(function inspectorMain\(config\) \{\n\s*"use strict";/);
  // What it is given survives the trip: the same messages, the same pattern.
  const given = JSON.parse(script.slice(INSPECTOR_MAIN_JS.length + 3, -2));
  assert.deepEqual(given, config);
  assert.equal(new RegExp(given.runIdPattern).test("run-1"), true);
  assert.equal(new RegExp(given.runIdPattern).test(".."), false);
  // TypeScript is gone from what the browser gets.
  assert.doesNotMatch(script, /: (string|number|boolean|unknown|View|Answer)\b[,)=;]/);
  assert.doesNotMatch(script, /\btype (Row|View|Answer|Read) =/);
});

Deno.test("app_js.ts is what `deno task build:inspector` writes from inspectorMain", async () => {
  assert.equal(
    await Deno.readTextFile(APP_JS_PATH),
    await formattedAppJsModule(),
    "src/inspector/app_js.ts is stale: run `npx -y deno@2.9.6 task build:inspector`",
  );
});

Deno.test("the inspector's script stands alone: read as a browser script of its own it names only its locals and the browser's globals", async () => {
  const script = (await bodies())["/inspect/app.js"];
  assert.deepEqual(await unresolvedNames(script), []);
  // The check sees a name on a path that never runs, as a module-level helper would be.
  const leaky = script.replace('"use strict";', '"use strict";\n  if (config === null) helper();');
  assert.notEqual(leaky, script);
  assert.deepEqual(await unresolvedNames(leaky), ["helper"]);
});

Deno.test("with inspector: runInspector() the page and its assets are served with a strict CSP, nosniff, no referrer, no framing, no caching", async () => {
  assert.equal(
    INSPECTOR_CSP,
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
      "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  const served = app(runInspector());
  for (const [path, type] of Object.entries(ASSETS)) {
    const res = await served.request(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), type, path);
    assert.equal(res.headers.get("content-security-policy"), INSPECTOR_CSP, path);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
    assert.equal(res.headers.get("referrer-policy"), "no-referrer", path);
    assert.equal(res.headers.get("x-frame-options"), "DENY", path);
    assert.equal(res.headers.get("cache-control"), "no-store", path);
    assert.ok((await res.text()).length > 0, path);
  }
  // No token needed for the page: it holds no data.
  const post = await served.request("/inspect", { method: "POST" });
  assert.equal(post.status, 405);
  assert.equal((await post.json()).code, "METHOD_NOT_ALLOWED");
  // Only its own paths: the slash form and anything below are plain 404s.
  for (const path of ["/inspect/", "/inspect/other.js", "/inspect.html"]) {
    assert.equal((await served.request(path)).status, 404, path);
  }
});

Deno.test("the inspector's page has no inline script or style, no event-handler attributes and loads nothing from elsewhere", async () => {
  const served = await bodies();
  const html = served["/inspect"];
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.deepEqual(scripts.map((match) => [match[1]!.trim(), match[2]]), [
    ['src="inspect/app.js" defer', ""],
  ]);
  assert.doesNotMatch(html, /\sstyle\s*=/i);
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i);
  assert.match(html, /<meta name="referrer" content="no-referrer">/);
  // Relative URLs only (so the page works under a mount prefix), and no other origin.
  for (const [path, text] of Object.entries(served)) {
    const urls = [...text.matchAll(/(?:https?:)?\/\/[^\s"')]+/g)].map((match) => match[0]);
    assert.deepEqual(
      urls.filter((url) => url !== "http://www.w3.org/2000/svg"),
      [],
      path,
    );
    assert.doesNotMatch(text, /@import|url\(/, path);
  }
  assert.deepEqual([...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]), [
    "inspect/icon.svg",
    "inspect/app.css",
    "inspect/app.js",
  ]);
});

Deno.test("the inspector shows cost: the run list has a cost column, the script writes the run's cost and each record's as text", async () => {
  const served = await bodies();
  const html = served["/inspect"];
  const headers = [...html.matchAll(/<th scope="col"[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
  assert.deepEqual(headers.slice(0, 7), [
    "Run",
    "Status",
    "Started",
    "Ended",
    "Calls",
    "Errors",
    "Cost spent",
  ]);
  const script = served["/inspect/app.js"];
  // The run's cost under its own ID, from the run state's cost and budget.cost, only when the
  // run has a cost; a record's in the call detail, from record.cost, spent pending while
  // PROJECTING. What the page shows of them: tests/browser/inspector_test.ts.
  assert.match(script, /if \(run\.cost\) \{/);
  assert.match(script, /const limit = run\.budget\.cost;/);
  assert.match(script, /item\("Cost", [^\n]+ " spent · " [^\n]+ " reserved · " [^\n]+"run-cost"\)/);
  assert.match(script, /const cost = record\.cost;\n\s*if \(cost\) \{/);
  assert.match(script, /"meta cost", "cost " \+ grouped\(cost\.reserved\) \+ " reserved · "/);
  assert.match(script, /"spent when the call completes"/);
  // One more column: the empty list's cell spans all of them.
  assert.match(script, /cell\.colSpan = 7;/);
});

Deno.test("the inspector's script writes text only: no innerHTML, document.write, eval or string timers, no storage or cookies", async () => {
  const script = (await bodies())["/inspect/app.js"];
  for (
    const banned of [
      /innerHTML/,
      /outerHTML/,
      /insertAdjacentHTML/,
      /document\.write/,
      /\beval\(/,
      /new Function/,
      /setTimeout\(\s*["'`]/,
      /localStorage/,
      /sessionStorage/,
      /indexedDB/,
      /document\.cookie/,
      /location\.(hash|search|href)\s*=/,
      /history\.(push|replace)State/,
    ]
  ) {
    assert.doesNotMatch(script, banned);
  }
  assert.match(script, /textContent/);
  // The token travels in the bearer header only, with no cookies.
  assert.match(script, /authorization: "Bearer " \+ token/);
  assert.match(script, /credentials: "omit"/);
  // The script is valid JavaScript: parsing it (not running it) must not throw.
  assert.doesNotThrow(() => new Function(script));
});

Deno.test("edge deployments serve the inspector only with INSPECTOR=on", async () => {
  const cases: [string | undefined, number][] = [
    [undefined, 404],
    ["", 404],
    ["off", 404],
    ["1", 404],
    ["on", 200],
    [" ON ", 200],
  ];
  for (const [setting, status] of cases) {
    const { app: served } = buildEdgeApp(
      { AGENT_TOKEN: AGENT, HARNESS_TOKEN: HARNESS, INSPECTOR: setting },
      INSPECTOR_AND_MCP,
    );
    assert.equal((await served.request("/inspect")).status, status, String(setting));
  }
});

Deno.test("an edge entry without the inspector and the MCP route refuses INSPECTOR=on and serves run tokens without MCP", async () => {
  assert.throws(
    () => buildEdgeApp({ AGENT_TOKEN: AGENT, HARNESS_TOKEN: HARNESS, INSPECTOR: "on" }),
    {
      name: "StartupError",
      message: "Refusing to start: INSPECTOR is on, but this entry point has no run inspector",
    },
  );
  const SERVER_SECRET = "server-secret-0123456789abcdef-0123";
  const { app: served } = buildEdgeApp(
    { AGENT_TOKEN: AGENT, HARNESS_TOKEN: HARNESS, SERVER_SECRET },
  );
  const started = await served.request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${HARNESS}`, "content-type": "application/json" },
    body: JSON.stringify({ ttlMs: 60_000 }),
  });
  const { runId, agentToken } = await started.json();
  assert.match(agentToken, /^tbr\./);
  const mcp = await served.request(`/v1/runs/${runId}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${agentToken}`, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(mcp.status, 404);
  assert.equal((await mcp.json()).code, "NOT_FOUND");
  // The same configuration with both: the MCP route answers.
  const { app: full } = buildEdgeApp(
    { AGENT_TOKEN: AGENT, HARNESS_TOKEN: HARNESS, SERVER_SECRET },
    INSPECTOR_AND_MCP,
  );
  const again = await full.request(`/v1/runs/${runId}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(again.status, 200);
  await again.body?.cancel();
});

Deno.test("the dev server turns the inspector on and prints its address; INSPECTOR=off turns it off", async () => {
  for (const setting of [undefined, "off"]) {
    const child = start(
      Deno.execPath(),
      ["run", "--allow-net", "--allow-env", "--allow-read", "edge/dev.ts"],
      {
        cwd: ROOT,
        env: {
          PORT: "0",
          AGENT_TOKEN: AGENT,
          HARNESS_TOKEN: HARNESS,
          UPSTASH_REDIS_REST_URL: "",
          UPSTASH_REDIS_REST_TOKEN: "",
          ...(setting === undefined ? {} : { INSPECTOR: setting }),
        },
      },
    );
    try {
      const [, base] = await child.waitFor(/dev server on (http:\/\/127\.0\.0\.1:\d+)/);
      const [, line] = await child.waitFor(/run inspector: ([^\n]+)\n/);
      const res = await fetch(`${base}/inspect`);
      await res.body?.cancel();
      if (setting === undefined) {
        assert.equal(line, `${base}/inspect (paste the harness token there)`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("content-security-policy"), INSPECTOR_CSP);
      } else {
        assert.equal(line, "off");
        assert.equal(res.status, 404);
      }
    } finally {
      await child.stop();
    }
  }
});
