/**
 * The inspector's public type, in a module of its own: `createApp`'s options name it, and this way
 * the JSON API's types do not pull in the browser script (and with it the DOM's types).
 *
 * @module
 */
import type { Hono } from "hono";

/**
 * What `runInspector()` returns: a Hono app serving only the inspector's four paths, for
 * `createApp`'s `inspector` option (or `app.route("/", inspector)` in an app of your own).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type InspectorApp, runInspector } from "@tool-boundary/core/inspector";
 *
 * const inspector: InspectorApp = runInspector();
 * assert.deepEqual(
 *   inspector.routes.map((route) => `${route.method} ${route.path}`),
 *   ["GET /inspect", "GET /inspect/app.js", "GET /inspect/app.css", "GET /inspect/icon.svg"],
 * );
 * ```
 */
export type InspectorApp = Hono;
