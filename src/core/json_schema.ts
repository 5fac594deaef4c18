/**
 * JSON Schema of valibot schemas: for tool listings (`describeTools`) and the OpenAPI document.
 *
 * @module
 */
import type * as v from "valibot";
import { toJsonSchema } from "@valibot/to-json-schema";

/**
 * Converts a valibot schema to a JSON Schema (2020-12, as OpenAPI 3.1 uses) without `$schema`.
 *
 * @param schema The schema.
 * @param lenient Leave out what JSON Schema cannot express instead of throwing. @default false
 * @returns The JSON Schema.
 */
export function jsonSchemaOf(
  schema: v.GenericSchema,
  lenient = false,
): Record<string, unknown> {
  const { $schema: _, ...rest } = toJsonSchema(schema, {
    target: "draft-2020-12",
    typeMode: "input",
    // Tools are the user's: a part JSON Schema cannot express is left out, not fatal.
    errorMode: lenient ? "ignore" : "throw",
  }) as Record<string, unknown>;
  return rest;
}
