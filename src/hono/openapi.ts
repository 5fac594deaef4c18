/**
 * The OpenAPI 3.1 document, generated from the route table and the valibot schemas.
 *
 * @module
 */
import type * as v from "valibot";
import type { StoreCapability } from "../core/capabilities.ts";
import { jsonSchemaOf } from "../core/json_schema.ts";
import type { Access } from "./auth.ts";
import { type ComponentName, COMPONENTS } from "./responses.ts";

/** What the document says of a route; the route table's entries are these and more. */
export interface RouteDoc {
  /** Lower-case HTTP method. */
  method: "get" | "post";
  /** The path in Hono form (`:param`); the document writes `{param}`. */
  path: string;
  /** Stable operation ID. */
  operationId: string;
  /** One line. */
  summary: string;
  /** Who may call it. */
  access: Access;
  /** The JSON body, when the route takes one; its schema must be one of the components. */
  body?: { schema: () => v.GenericSchema };
  /** Query parameters, each optional: its name, what it means and its JSON Schema. */
  query?: readonly { name: string; description: string; schema: Record<string, unknown> }[];
  /** Request headers the route reads, each optional, as `query` describes them. */
  headers?: readonly { name: string; description: string; schema: Record<string, unknown> }[];
  /** Status -> component name of the response body. */
  responses: Readonly<Record<number, ComponentName>>;
  /**
   * The store capability the route needs: on a store without it the route answers 404
   * NOT_FOUND, after the token is checked.
   */
  needs?: StoreCapability;
}

/**
 * Builds the OpenAPI 3.1 document from the route table and the schemas.
 *
 * @param routes The routes, in the order the document lists them.
 * @param info Title and version.
 * @returns The document.
 * @throws {TypeError} When a route's body schema is not a component.
 */
export function buildOpenApi(
  routes: readonly RouteDoc[],
  info: { title: string; version: string },
): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    const params: Record<string, unknown>[] = [...path.matchAll(/\{(\w+)\}/g)].map((match) => ({
      name: match[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    for (const { name, description, schema } of route.query ?? []) {
      params.push({ name, in: "query", required: false, description, schema });
    }
    for (const { name, description, schema } of route.headers ?? []) {
      params.push({ name, in: "header", required: false, description, schema });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, name] of Object.entries(route.responses)) {
      responses[status] = {
        description: name === "Error" || name === "BoundaryResult" && status !== "200"
          ? "An error; see the status table."
          : "OK",
        content: { "application/json": { schema: ref(name) } },
      };
    }
    if (path === "/openapi.json") {
      responses["200"] = {
        description: "OK",
        content: { "application/json": { schema: { type: "object" } } },
      };
    }
    if (route.needs !== undefined) {
      responses["404"] = {
        description: `An error; NOT_FOUND when the store has no ${route.needs}.`,
        content: { "application/json": { schema: ref("Error") } },
      };
    }
    if (route.access !== "public") {
      responses["401"] = {
        description: "Missing or wrong bearer token.",
        content: { "application/json": { schema: ref("Error") } },
      };
      if (route.access === "harness") {
        responses["403"] ??= {
          description: "The agent token may only submit tool calls.",
          content: { "application/json": { schema: ref("Error") } },
        };
      }
    }
    paths[path] = {
      ...paths[path],
      [route.method]: {
        operationId: route.operationId,
        summary: route.summary,
        "x-access": route.access,
        ...(params.length > 0 ? { parameters: params } : {}),
        ...(route.body === undefined ? {} : {
          requestBody: {
            required: true,
            content: { "application/json": { schema: ref(componentOf(route.body.schema())) } },
          },
        }),
        ...(route.access === "public" ? { security: [] } : {}),
        responses,
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      ...info,
      description: "A fail-closed boundary around AI-agent tool calls, one canonical record per " +
        "call. Roles: the agent token may only submit tool calls; the harness token may do " +
        "everything.",
    },
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: Object.fromEntries(
        Object.entries(COMPONENTS).map(([name, schema]) => [name, jsonSchemaOf(schema)]),
      ),
    },
  };
}

function componentOf(schema: v.GenericSchema): ComponentName {
  const name = (Object.keys(COMPONENTS) as ComponentName[]).find((key) =>
    COMPONENTS[key] === schema
  );
  if (name === undefined) {
    throw new TypeError("Cannot build OpenAPI: a body schema is no component");
  }
  return name;
}
