/**
 * `MemoryStore`: the embedded, in-process canonical store. The default when a `ToolBoundary`
 * gets no store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "@tool-boundary/core/memory";
 * import { ToolBoundary } from "@tool-boundary/core";
 * const boundary = new ToolBoundary({ store: new MemoryStore(), tools: [] });
 * assert.ok(boundary.store instanceof MemoryStore);
 * ```
 *
 * @module
 */
export { MemoryStore, type MemoryStoreOptions } from "./store.ts";
