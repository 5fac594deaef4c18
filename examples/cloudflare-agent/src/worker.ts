/**
 * A Cloudflare Agent (the Agents SDK's `Agent`, a Durable Object) whose tools go through the
 * boundary, with the ledger in the agent's own SQLite storage: no network round trip per call.
 *
 * `POST /agents/:name/ask` with `{ "question": "..." }` and `Authorization: Bearer <API_TOKEN>`
 * runs one turn of the agent `:name` (Workers AI through the AI SDK, the tools through
 * `aiSdkTools`) and answers its text, its run and the facts of the run.
 *
 * Secrets: API_TOKEN (required, at least 16 characters; for `wrangler dev`, in `.dev.vars`: copy
 * `.dev.vars.example`). Bindings (wrangler.toml): SupportAgent (the agent's namespace) and AI.
 *
 * @module
 */
import { Agent, type AgentContext, getAgentByName } from "agents";
import { generateText, isStepCount } from "ai";
import { createWorkersAI } from "workers-ai-provider";
import * as v from "valibot";
import { defineTool, type ObservedFact, ToolBoundary } from "@tool-boundary/core";
import { aiSdkTools } from "@tool-boundary/ai-sdk";
import { DurableObjectStore } from "@tool-boundary/cloudflare";

/** The Worker's bindings. */
export interface Env {
  API_TOKEN?: string;
  /** The Workers AI binding. */
  AI: Parameters<typeof createWorkersAI>[0]["binding"];
  /** The agents' namespace. */
  SupportAgent: Parameters<typeof getAgentByName>[0];
}

const STATUS: Record<string, string> = {
  api: "degraded: p99 latency above 2 s since 09:40 UTC",
  billing: "operational",
};

const serviceStatus = defineTool({
  name: "service_status",
  description: "The current status of one service (api, billing, ...).",
  readOnly: true,
  input: v.object({ service: v.string() }),
  // The raw response stays in the record; the model gets the projection only.
  execute: ({ service }) => ({ service, status: STATUS[service] ?? null, db: "status-db-7" }),
  project: (raw) => ({
    evidence: raw.status === null ? "NO_EVIDENCE" : "EVIDENCE_FOUND",
    scope: `status page entry of "${raw.service}"`,
    content: raw.status,
  }),
});

/** What one turn answers. */
export interface Answer {
  runId: string;
  text: string;
  facts: ObservedFact[];
}

/** A support agent: its tool calls are recorded in its own storage, each one once. */
export class SupportAgent extends Agent<Env> {
  readonly ledger: DurableObjectStore;
  readonly boundary: ToolBoundary;
  readonly #env: Env;

  constructor(ctx: AgentContext, env: Env) {
    super(ctx, env);
    this.#env = env;
    // The agent owns its object's alarm (for its schedules): the ledger's sweeps of expired
    // records go through the agent's scheduler instead.
    this.ledger = new DurableObjectStore(ctx, {
      scheduleSweep: (at) => this.schedule(new Date(at), "sweepLedger"),
    });
    this.boundary = new ToolBoundary({ store: this.ledger, tools: [serviceStatus] });
  }

  /** Deletes the ledger's expired rows; the scheduler calls it. */
  async sweepLedger(): Promise<void> {
    await this.ledger.sweep();
  }

  /** One turn: a run of at most 5 tool calls, ended with its facts. */
  async ask(question: string): Promise<Answer> {
    const run = await this.boundary.startRun({ ttlMs: 5 * 60_000, budget: { calls: 5 } });
    const workersAi = createWorkersAI({ binding: this.#env.AI });
    const { text } = await generateText({
      model: workersAi("@cf/meta/llama-3.3-70b-instruct-fp8-fast"),
      system: "You answer questions about our services. Use service_status; cite what it says.",
      prompt: question,
      tools: aiSdkTools(this.boundary, run),
      stopWhen: isStepCount(5),
    });
    return { runId: run.runId, text, facts: await this.boundary.endRun(run) };
  }
}

const ASK = /^\/agents\/([A-Za-z0-9_-]{1,64})\/ask$/;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const token = env.API_TOKEN;
    if (token === undefined || token.length < 16) {
      return Response.json({ error: "Not configured: set API_TOKEN (see .dev.vars.example)." }, {
        status: 500,
      });
    }
    if (request.headers.get("authorization") !== `Bearer ${token}`) {
      return Response.json({ error: "Unauthorized" }, { status: 401 });
    }
    const match = ASK.exec(new URL(request.url).pathname);
    if (request.method !== "POST" || match === null) {
      return Response.json({ error: "Not found" }, { status: 404 });
    }
    const body = await request.json().catch(() => null) as { question?: unknown } | null;
    if (typeof body?.question !== "string" || body.question.length > 2_000) {
      return Response.json({ error: "Expected { question: string }" }, { status: 400 });
    }
    const agent = await getAgentByName(env.SupportAgent, match[1]!) as unknown as SupportAgent;
    return Response.json(await agent.ask(body.question));
  },
};
