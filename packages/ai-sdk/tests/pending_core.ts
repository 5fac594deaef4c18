// TEMPORARY until the core's describeTools() and invoke(..., { signal }) are merged.
import type { ToolBoundary } from "@tool-boundary/core";
import { jsonSchemaOf } from "../../../src/http/openapi.ts";
import type { AdaptedBoundary } from "../mod.ts";

export function adapt(boundary: ToolBoundary): AdaptedBoundary {
  return {
    describeTools: () =>
      [...boundary.tools.values()].map((tool) => ({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        readOnly: tool.readOnly,
        inputSchema: tool.input === undefined ? { type: "object" } : jsonSchemaOf(tool.input, true),
      })),
    invoke: (run, envelope) => boundary.invoke(run, envelope),
  };
}
