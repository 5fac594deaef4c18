/**
 * The tools the edge entry points serve. Replace the demo tools with your own: every entry point
 * (Cloudflare Workers, Deno Deploy, Bun) picks them up from here.
 *
 * @module
 */
import type { AnyToolDefinition } from "@tool-boundary/core";
import { DEMO_TOOLS } from "./demo/tools.ts";

/** The served tools. */
export const TOOLS: readonly AnyToolDefinition[] = DEMO_TOOLS;
