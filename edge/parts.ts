/**
 * What the entry points of this folder serve besides the JSON API: the run inspector (at
 * `/inspect`, when INSPECTOR is `on`) and the MCP route (when SERVER_SECRET is set). Each is an
 * entry of the core of its own; an entry point that does not pass them to `buildEdgeApp` does not
 * carry them in its bundle.
 *
 * @module
 */
import { runInspector } from "@tool-boundary/core/inspector";
import { mcpRoute } from "@tool-boundary/core/mcp";
import type { EdgeOptions } from "./app.ts";

/** The run inspector and the MCP route, for `buildEdgeApp`'s options. */
export const INSPECTOR_AND_MCP: Required<Pick<EdgeOptions, "inspector" | "mcp">> = Object.freeze({
  inspector: runInspector,
  mcp: mcpRoute,
});
