/**
 * The route table and the OpenAPI 3.1 document generated from it and from the valibot schemas.
 *
 * @module
 */
import type * as v from "valibot";
import { jsonSchemaOf } from "../core/json_schema.ts";
import {
  BoundaryResultSchema,
  CanonicalRecordSchema,
  ErrorBodySchema,
  HealthSchema,
  RunContextSchema,
  RunEndSchema,
  StartRunBody,
  ToolCallBody,
  ToolsSchema,
} from "./schemas.ts";
import { HTTP_STATUS_BY_CODE } from "./status.ts";

/** Who may call a route. */
export type Access = "public" | "agent" | "harness";

/** One route: what the app registers and what the document describes. */
export interface RouteSpec {
  /** Lower-case HTTP method. */
  method: "get" | "post";
  /** The path in OpenAPI form (`{param}`). */
  path: string;
  /** Stable operation ID. */
  operationId: string;
  /** One line. */
  summary: string;
  /** `agent`: agent or harness token; `harness`: harness token only. */
  access: Access;
  /** Component name of the JSON body, when the route takes one. */
  body?: keyof typeof COMPONENTS;
  /** Status -> component name of the response body. */
  responses: Record<number, keyof typeof COMPONENTS>;
}

const COMPONENTS = {
  StartRunBody,
  ToolCallBody,
  RunContext: RunContextSchema,
  BoundaryResult: BoundaryResultSchema,
  CanonicalRecord: CanonicalRecordSchema,
  RunEnd: RunEndSchema,
  Tools: ToolsSchema,
  Health: HealthSchema,
  Error: ErrorBodySchema,
} satisfies Record<string, v.GenericSchema>;

const statusesOf = (codes: readonly string[]): number[] => [
  ...new Set(codes.map((code) => HTTP_STATUS_BY_CODE[code as keyof typeof HTTP_STATUS_BY_CODE])),
];

/** Every route the app serves. The app registers exactly these. */
export const ROUTES: readonly RouteSpec[] = [
  {
    method: "post",
    path: "/v1/runs",
    operationId: "startRun",
    summary: "Start a run.",
    access: "harness",
    body: "StartRunBody",
    responses: { 201: "RunContext", 400: "Error", 409: "Error", 410: "Error", 413: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/tool-calls",
    operationId: "submitToolCall",
    summary: "Submit one tool call; returns the bounded result or a safe error.",
    access: "agent",
    body: "ToolCallBody",
    responses: Object.fromEntries(
      statusesOf([
        "EXECUTION_FAILED",
        "INVALID_INPUT",
        "REQUEST_TOO_LARGE",
        "UNAUTHORIZED",
        "RUN_NOT_FOUND",
        "DUPLICATE_TOOL_CALL",
        "DEADLINE_EXCEEDED",
        "RUN_BUDGET_EXHAUSTED",
        "STORE_UNAVAILABLE",
      ]).map((status) => [status, "BoundaryResult" as const]),
    ),
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/tool-calls/{toolCallId}",
    operationId: "getRecord",
    summary: "Read the canonical record of a tool call (harness only; includes the raw response).",
    access: "harness",
    responses: { 200: "CanonicalRecord", 400: "Error", 404: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/end",
    operationId: "endRun",
    summary: "End a run and get its observed facts.",
    access: "harness",
    responses: { 200: "RunEnd", 400: "Error", 404: "Error" },
  },
  {
    method: "get",
    path: "/v1/tools",
    operationId: "listTools",
    summary: "List the tools with their read-only flags and input JSON Schemas.",
    access: "harness",
    responses: { 200: "Tools" },
  },
  {
    method: "get",
    path: "/healthz",
    operationId: "health",
    summary: "Liveness.",
    access: "public",
    responses: { 200: "Health" },
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    summary: "This document.",
    access: "public",
    responses: {},
  },
];

/**
 * Builds the OpenAPI 3.1 document from {@linkcode ROUTES} and the schemas.
 *
 * @param info Title and version.
 * @returns The document.
 */
export function buildOpenApi(info: { title: string; version: string }): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
      name: match[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const responses: Record<string, unknown> = {};
    for (const [status, name] of Object.entries(route.responses)) {
      responses[status] = {
        description: name === "Error" || name === "BoundaryResult" && status !== "200"
          ? "An error; see the status table."
          : "OK",
        content: { "application/json": { schema: ref(name) } },
      };
    }
    if (route.path === "/openapi.json") {
      responses["200"] = {
        description: "OK",
        content: { "application/json": { schema: { type: "object" } } },
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
    paths[route.path] = {
      ...paths[route.path],
      [route.method]: {
        operationId: route.operationId,
        summary: route.summary,
        "x-access": route.access,
        ...(params.length > 0 ? { parameters: params } : {}),
        ...(route.body === undefined ? {} : {
          requestBody: {
            required: true,
            content: { "application/json": { schema: ref(route.body) } },
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
