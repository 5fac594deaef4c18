/**
 * The run inspector: a static page at `/inspect` that shows a run and every call it began, with
 * each call's request, agent view and raw response side by side. An entry of its own, so an app
 * without it does not carry it: {@linkcode runInspector} makes the sub-app that `createApp` of
 * `@tool-boundary/core/hono` mounts when given it as its `inspector` option.
 *
 * The page holds no data: it asks for the harness token in a form, keeps it in a script variable
 * only (never in the URL, a cookie or storage) and sends it as a bearer header to the JSON API
 * (`GET /v1/runs` for the run list, `GET /v1/runs/{runId}`, the records, the facts of an ENDED
 * run, and on request the run's export and the ledger key, for its proof state and download). Every payload is rendered
 * with `textContent`, never as HTML, under a Content-Security-Policy that allows only the page's
 * own script, styles and icon. The page, styles and icon are string constants and the script is
 * one function sent as its own source (edge runtimes cannot read files, and there is no build
 * step).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolBoundary } from "@tool-boundary/core";
 * import { createApp } from "@tool-boundary/core/hono";
 * import { runInspector } from "@tool-boundary/core/inspector";
 *
 * const app = createApp({
 *   boundary: new ToolBoundary({ tools: [] }),
 *   agentToken: "agent-token-0123456789",
 *   harnessToken: "harness-token-0123456789",
 *   inspector: runInspector(),
 * });
 * const page = await app.request("/inspect");
 * assert.equal(page.status, 200);
 * assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
 * assert.match(await page.text(), /<title>Run inspector/);
 * ```
 *
 * @module
 */
import { Hono } from "hono";
import { ERROR_MESSAGES } from "../core/errors.ts";
import { RUN_ID_PATTERN } from "../core/ids.ts";
import { ICON_SVG } from "./icon.ts";
import { PAGE_HTML } from "./page.ts";
import { inspectorScript } from "./app_js.ts";
import { STYLES_CSS } from "./styles.ts";
import type { InspectorApp } from "./types.ts";

export type { InspectorApp };

/**
 * The Content-Security-Policy of the inspector's responses: nothing but the page's own script,
 * styles and icon, requests only to its own origin, no forms submitted, no framing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { INSPECTOR_CSP, runInspector } from "@tool-boundary/core/inspector";
 *
 * assert.match(INSPECTOR_CSP, /^default-src 'none'; script-src 'self';/);
 * const res = await runInspector().request("/inspect/app.js");
 * assert.equal(res.headers.get("content-security-policy"), INSPECTOR_CSP);
 * ```
 */
export const INSPECTOR_CSP: string = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * Makes the run inspector: a Hono app that serves `GET /inspect` (the page), `/inspect/app.js`,
 * `/inspect/app.css` and `/inspect/icon.svg`, each with {@linkcode INSPECTOR_CSP}, no referrer, no
 * framing, no caching and no sniffing. Give it to `createApp` as `inspector`.
 *
 * @returns The inspector's app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runInspector } from "@tool-boundary/core/inspector";
 *
 * const inspector = runInspector();
 * const script = await inspector.request("/inspect/app.js");
 * assert.equal(script.status, 200);
 * assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
 * assert.equal(script.headers.get("x-frame-options"), "DENY");
 * assert.equal((await inspector.request("/v1/tools")).status, 404);
 * ```
 */
export function runInspector(): InspectorApp {
  const script = inspectorScript({
    messages: ERROR_MESSAGES,
    runIdPattern: RUN_ID_PATTERN.source,
  });
  const assets: Readonly<Record<string, readonly [string, string]>> = {
    "/inspect": ["text/html; charset=utf-8", PAGE_HTML],
    "/inspect/app.js": ["text/javascript; charset=utf-8", script],
    "/inspect/app.css": ["text/css; charset=utf-8", STYLES_CSS],
    "/inspect/icon.svg": ["image/svg+xml", ICON_SVG],
  };
  const app = new Hono();
  for (const [path, [type, body]] of Object.entries(assets)) {
    app.get(path, (c) => {
      c.header("Content-Type", type);
      c.header("Content-Security-Policy", INSPECTOR_CSP);
      c.header("Referrer-Policy", "no-referrer");
      c.header("X-Frame-Options", "DENY");
      c.header("Cross-Origin-Opener-Policy", "same-origin");
      c.header("Cross-Origin-Resource-Policy", "same-origin");
      // Also when mounted in an app without createApp's middleware that sets these.
      c.header("Cache-Control", "no-store");
      c.header("X-Content-Type-Options", "nosniff");
      return c.body(body, 200);
    });
  }
  return app;
}
