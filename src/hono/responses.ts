/**
 * Valibot schemas of the HTTP response bodies, and every schema the OpenAPI document names
 * (`COMPONENTS`, the request bodies of `schemas.ts` among them). Each response schema is typed with
 * the type the app answers with (the core's `RunContext`, `BoundaryResult`, `CanonicalRecord`,
 * `RunEnd`, and the HTTP layer's own bodies), and `deno check` fails when the two differ in either
 * direction. Only the OpenAPI document needs these values: the app loads this module when it first
 * serves `/openapi.json`, so a cold start does not build them.
 *
 * @module
 */
import * as v from "valibot";
import { ERROR_CODES } from "../core/errors.ts";
import type { JsonObject, JsonValue } from "../core/json.ts";
import type { CallSummary, RunsPage, RunState } from "../core/store.ts";
import type { RunBundle } from "../core/ledger.ts";
import type { RunVerdict } from "../verify/verify.ts";
import type {
  BoundaryResult,
  CanonicalRecord,
  Citation,
  RunContext,
  RunEnd,
} from "../core/types.ts";
import { type ErrorBody, HTTP_ERROR_CODES } from "./status.ts";
import * as requests from "./schemas.ts";

const { count } = requests;
const epochMs = requests.epochMs();
const toolBudget = requests.toolBudget();
const costUnits = requests.costUnits();

const runCost = v.pipe(
  v.object({
    reserved: v.pipe(costUnits, v.description("Held by calls begun and not completed.")),
    spent: v.pipe(count(0), v.description("Spent by completed calls, excess included.")),
  }),
  v.description("The run's cost: present once it has a cost budget or a call with a cost."),
);
// Response parts that are JSON by construction: typed as JSON, checked as unknown. A recursive
// schema would only make the document longer (its JSON Schema is `{}` either way).
const unchecked = <T>(schema: v.GenericSchema): v.GenericSchema<T> => schema as v.GenericSchema<T>;
const json = unchecked<JsonValue>(v.pipe(v.unknown(), v.description("Any JSON value.")));
const jsonObject = unchecked<JsonObject>(v.record(v.string(), v.unknown()));

/**
 * A type as plain data: no `readonly`, intersections flattened, JSON values kept as they are (they
 * are recursive), so that two declarations of the same shape compare as identical.
 */
type Plain<T> = [T] extends [JsonValue] ? ([JsonValue] extends [T] ? JsonValue : PlainObject<T>)
  : PlainObject<T>;
type PlainObject<T> = T extends readonly (infer I)[] ? Plain<I>[]
  : T extends object ? { -readonly [K in keyof T]: Plain<T[K]> }
  : T;
/** The same type: every field, optional marker and union member alike. */
type Identical<A, B> = (<X>() => X extends Plain<A> ? 1 : 2) extends
  (<X>() => X extends Plain<B> ? 1 : 2) ? true : false;

/**
 * Types a response schema as a schema of `T`, the type the app answers with. `deno check` fails
 * unless the schema's output is `T` exactly (readonly aside), so a change of `T` that the schema
 * does not follow is caught: a field added (optional too), dropped or retyped, a new status or
 * code in a union. Assignability alone would miss a new optional field and a new union member.
 */
export const schemaOf = <T>() =>
<S extends v.GenericSchema<T>>(
  schema: S & (Identical<v.InferOutput<S>, T> extends true ? unknown : "differs from its type"),
): v.GenericSchema<T> => schema;

const budget = v.object({
  calls: count(1),
  perTool: v.record(v.string(), toolBudget),
  cost: v.exactOptional(costUnits),
});

/** A run context (`201` of `POST /v1/runs`). */
export const RunContextSchema: v.GenericSchema<RunContext> = schemaOf<RunContext>()(v.object({
  runId: v.string(),
  deadline: epochMs,
  startedAt: epochMs,
  budget,
}));

/** What `POST /v1/runs` answers: the run context, and a run token when the app has a secret. */
export interface StartedRun extends RunContext {
  /** An agent token valid on this run only, until its deadline (see docs/http.md). */
  agentToken?: string;
}

/** A started run (`201` of `POST /v1/runs`). */
export const StartedRunSchema: v.GenericSchema<StartedRun> = schemaOf<StartedRun>()(v.object({
  runId: v.string(),
  deadline: epochMs,
  startedAt: epochMs,
  budget,
  agentToken: v.exactOptional(
    v.pipe(v.string(), v.description("Agent token for this run only, valid until its deadline.")),
  ),
}));

const projected = v.picklist(["EVIDENCE_FOUND", "NO_EVIDENCE"]);
const issue = v.object({ path: v.string(), expected: v.nullable(v.string()) });
const replayed = v.pipe(
  v.literal(true),
  v.description("The recorded result given again (replay, recall): nothing ran."),
);

/** What a tool call returns: the bounded READY result or a safe ERROR. */
export const BoundaryResultSchema: v.GenericSchema<BoundaryResult> = schemaOf<BoundaryResult>()(
  v.variant("status", [
    v.object({
      status: v.literal("READY"),
      toolCallId: v.string(),
      evidence: projected,
      scope: v.string(),
      content: json,
      replayed: v.exactOptional(replayed),
    }),
    v.object({
      status: v.literal("ERROR"),
      toolCallId: v.nullable(v.string()),
      code: v.picklist(ERROR_CODES),
      message: v.string(),
      issues: v.exactOptional(v.array(issue)),
      replayed: v.exactOptional(replayed),
    }),
  ]),
);

const proof = v.pipe(
  v.object({ hash: v.string(), sig: v.string(), keyId: v.string() }),
  v.description("The record's hash and Ed25519 signature (docs/proof.md)."),
);

const receipt = v.pipe(
  v.object({
    runId: v.string(),
    startedAt: v.pipe(epochMs, v.description("The run's startedAt: the instance sealed.")),
    calls: v.array(v.union([
      v.object({ toolCallId: v.string(), hash: v.string() }),
      v.object({
        toolCallId: v.string(),
        hash: v.nullable(v.string()),
        state: v.literal("UNSIGNED"),
      }),
      v.object({ toolCallId: v.string(), hash: v.null(), state: v.literal("INCOMPLETE") }),
    ])),
    factsHash: v.string(),
    keyId: v.string(),
    sig: v.string(),
    timestamp: v.exactOptional(v.pipe(
      v.string(),
      v.description(
        "RFC 3161 TimeStampToken (DER, base64url) over the SHA-256 of this receipt without it.",
      ),
    )),
  }),
  v.description("The run's seal, signed over its calls and its facts (docs/proof.md)."),
);

/** A canonical record (harness only). */
export const CanonicalRecordSchema: v.GenericSchema<CanonicalRecord> = schemaOf<
  CanonicalRecord
>()(v.object({
  runId: v.string(),
  toolCallId: v.string(),
  toolName: v.string(),
  status: v.picklist(["PROJECTING", "READY", "ERROR"]),
  evidence: v.nullable(v.picklist(["EVIDENCE_FOUND", "NO_EVIDENCE", "ERROR"])),
  request: jsonObject,
  raw: v.exactOptional(json),
  agentResult: v.nullable(v.object({ evidence: projected, scope: v.string(), content: json })),
  errorCode: v.nullable(v.picklist(ERROR_CODES)),
  seq: v.pipe(
    count(1),
    v.description("The call's position in its run: 1, 2, 3, ... in begin order."),
  ),
  createdAt: epochMs,
  updatedAt: epochMs,
  expiresAt: epochMs,
  cost: v.exactOptional(v.pipe(
    v.object({ reserved: costUnits, spent: v.nullable(costUnits) }),
    v.description(
      "A call of a tool with a cost: reserved at begin, spent at complete (null until then).",
    ),
  )),
  failure: v.exactOptional(v.pipe(
    v.object({ name: v.string(), message: v.nullable(v.string()) }),
    v.description(
      "What the executor threw (EXECUTION_FAILED): its name, and its message unless past 2 KiB.",
    ),
  )),
  proof: v.exactOptional(proof),
}));

const fact = v.object({
  toolCallId: v.string(),
  toolName: v.string(),
  kind: v.picklist(["EVIDENCE", "NEGATIVE_OBSERVATION"]),
  evidence: projected,
  scope: v.string(),
  content: json,
  observedAt: epochMs,
});

/** The facts of an ended run. */
export const RunEndSchema: v.GenericSchema<RunEnd> = schemaOf<RunEnd>()(v.object({
  facts: v.array(fact),
  omitted: v.pipe(count(0), v.description("READY records left out by the fact caps.")),
  receipt: v.exactOptional(receipt),
}));

/** The body of `GET /v1/runs/{runId}`: the run's state and every call it began. */
export interface RunCalls {
  /** The run as the store keeps it: status, deadline, times, budgets and what was used. */
  run: RunState;
  /** Every begun call, in begin order, without payloads (as `listCalls` gives them). */
  calls: CallSummary[];
}

const perTool = v.record(v.string(), toolBudget);

const runState = v.object({
  runId: v.string(),
  status: v.picklist(["ACTIVE", "ENDED"]),
  deadline: epochMs,
  startedAt: epochMs,
  endedAt: v.nullable(epochMs),
  budget: v.object({ calls: count(1), perTool, cost: v.exactOptional(costUnits) }),
  used: v.object({ calls: count(0), perTool }),
  cost: v.exactOptional(runCost),
});

/** A run's state and its calls (harness only). */
export const RunCallsSchema: v.GenericSchema<RunCalls> = schemaOf<RunCalls>()(v.object({
  run: runState,
  calls: v.array(v.object({
    toolCallId: v.string(),
    status: v.picklist(["PROJECTING", "READY", "ERROR", "EXPIRED"]),
    toolName: v.nullable(v.string()),
    evidence: v.nullable(v.picklist(["EVIDENCE_FOUND", "NO_EVIDENCE", "ERROR"])),
    errorCode: v.nullable(v.picklist(ERROR_CODES)),
    createdAt: v.nullable(epochMs),
    updatedAt: v.nullable(epochMs),
  })),
}));

/** A page of the recent runs (`GET /v1/runs`), newest first (harness only). */
export const RunsPageSchema: v.GenericSchema<RunsPage> = schemaOf<RunsPage>()(v.object({
  runs: v.array(v.object({
    runId: v.string(),
    status: v.picklist(["ACTIVE", "ENDED"]),
    startedAt: epochMs,
    endedAt: v.nullable(epochMs),
    calls: v.pipe(count(0), v.description("Calls begun.")),
    errors: v.pipe(count(0), v.description("Begun calls whose record ended ERROR.")),
    cost: v.exactOptional(runCost),
  })),
  next: v.pipe(
    v.nullable(v.string()),
    v.description(
      "The cursor of the next page (`?cursor=`), null on the last page: the position of this " +
        "page's last run, `<startedAt>.<runId>`.",
    ),
  ),
}));

/** An exported run (`GET /v1/runs/{runId}/export`), for `verifyRun`. */
export const RunBundleSchema: v.GenericSchema<RunBundle> = schemaOf<RunBundle>()(v.object({
  format: v.literal("tool-boundary.run/1"),
  run: runState,
  records: v.array(CanonicalRecordSchema),
  facts: v.nullable(v.array(fact)),
  receipt: v.nullable(receipt),
}));

/** The body of `GET /v1/ledger-key`. */
export interface LedgerKey {
  /** The key ID proofs and receipts name. */
  keyId: string;
  /** The Ed25519 public key, a JWK. */
  publicKey: { kty: string; crv: string; x: string };
}

/** The ledger's public key. */
export const LedgerKeySchema: v.GenericSchema<LedgerKey> = schemaOf<LedgerKey>()(v.object({
  keyId: v.string(),
  publicKey: v.object({ kty: v.string(), crv: v.string(), x: v.string() }),
}));

/** The body of `GET /v1/runs/{runId}/verdict`. */
export interface Verdict {
  /** `verifyRun` of the run's export with the ledger's public key; `null` without a ledger key. */
  verdict: RunVerdict | null;
}

/** A run's verdict, as the server finds it. */
export const VerdictSchema: v.GenericSchema<Verdict> = schemaOf<Verdict>()(v.object({
  verdict: v.nullable(v.union([
    v.object({
      ok: v.literal(true),
      sealed: v.boolean(),
      calls: v.number(),
      timestampedAt: v.exactOptional(epochMs),
    }),
    v.object({
      ok: v.literal(false),
      toolCallId: v.nullable(v.string()),
      reason: v.picklist([
        "ALTERED",
        "MISSING",
        "INSERTED",
        "REORDERED",
        "BAD_SIGNATURE",
        "UNSIGNED",
        "FACTS_ALTERED",
        "OTHER_RUN",
        "BAD_TIMESTAMP",
      ]),
      seq: v.exactOptional(v.pipe(
        count(1),
        v.description("Of a call missing from a run not yet sealed: its position in the run."),
      )),
    }),
  ])),
}));

/** The body of `POST /v1/runs/{runId}/citations`'s answer. */
export interface Citations {
  /** One verdict per ID, in the order sent. */
  citations: Citation[];
}

/** The verdicts on cited tool calls (harness only). */
export const CitationsSchema: v.GenericSchema<Citations> = schemaOf<Citations>()(v.object({
  citations: v.array(v.object({
    toolCallId: v.string(),
    verdict: v.picklist(["EVIDENCE", "NEGATIVE_OBSERVATION", "NOT_EVIDENCE"]),
    scope: v.exactOptional(v.string()),
  })),
}));

/** One tool as `GET /v1/tools` lists it. */
export interface ToolInfo {
  /** The tool's name. */
  name: string;
  /** Its description, `null` when it has none. */
  description: string | null;
  /** Whether it is read-only (the boundary runs only read-only tools). */
  readOnly: boolean;
  /** JSON Schema 2020-12 of its input. */
  inputSchema: Record<string, unknown>;
}

/** The body of `GET /v1/tools`. */
export interface ToolList {
  /** Every tool of the boundary. */
  tools: ToolInfo[];
}

/** The tool listing. */
export const ToolsSchema: v.GenericSchema<ToolList> = schemaOf<ToolList>()(v.object({
  tools: v.array(
    v.object({
      name: v.string(),
      description: v.nullable(v.string()),
      readOnly: v.boolean(),
      inputSchema: v.record(v.string(), v.unknown()),
    }),
  ),
}));

/** The body of `GET /healthz`. */
export interface Health {
  /** Always `ok`. */
  status: "ok";
}

/** Health. */
export const HealthSchema: v.GenericSchema<Health> = schemaOf<Health>()(
  v.object({ status: v.literal("ok") }),
);

/** The body of `GET /`: what the app serves, for a person or a client that found its address. */
export interface Index {
  /** The app's title and version (`createApp`'s `info`). */
  name: string;
  /** Its version. */
  version: string;
  /** Where the OpenAPI document is. */
  openapi: string;
  /** Every route: method, path and what it does. */
  routes: { method: string; path: string; summary: string }[];
}

/** Index. */
export const IndexSchema: v.GenericSchema<Index> = schemaOf<Index>()(v.object({
  name: v.string(),
  version: v.string(),
  openapi: v.string(),
  routes: v.array(v.object({ method: v.string(), path: v.string(), summary: v.string() })),
}));

/** Every error body outside the tool-call route's BoundaryResult. */
export const ErrorBodySchema: v.GenericSchema<ErrorBody> = schemaOf<ErrorBody>()(v.object({
  status: v.literal("ERROR"),
  code: v.picklist([...ERROR_CODES, ...HTTP_ERROR_CODES]),
  message: v.string(),
  issues: v.exactOptional(v.array(issue)),
}));

/** Every schema the OpenAPI document names, by its name there. */
export const COMPONENTS = {
  StartRunBody: requests.startRunBody(),
  ToolCallBody: requests.toolCallBody(),
  CitationsBody: requests.citationsBody(),
  RunContext: RunContextSchema,
  StartedRun: StartedRunSchema,
  RunCalls: RunCallsSchema,
  RunsPage: RunsPageSchema,
  Citations: CitationsSchema,
  BoundaryResult: BoundaryResultSchema,
  CanonicalRecord: CanonicalRecordSchema,
  RunEnd: RunEndSchema,
  RunBundle: RunBundleSchema,
  LedgerKey: LedgerKeySchema,
  Verdict: VerdictSchema,
  Tools: ToolsSchema,
  Health: HealthSchema,
  Index: IndexSchema,
  Error: ErrorBodySchema,
} satisfies Record<string, v.GenericSchema>;

/** The name of a schema in the OpenAPI document. */
export type ComponentName = keyof typeof COMPONENTS;
