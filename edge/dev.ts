/**
 * Local dev server: `deno task dev`. Serves the app with the demo tools on 127.0.0.1 only.
 *
 * Tokens come from AGENT_TOKEN and HARNESS_TOKEN, or are generated for this process and printed.
 * The server secret (run tokens, MCP sessions) comes from SERVER_SECRET or is generated; it is
 * never printed.
 * The store is in memory unless UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set.
 * MCP_UPSTREAMS (JSON, see packages/mcp/gateway.ts), under `deno task dev:gateway`, makes it the
 * MCP gateway: the tools of those upstream MCP servers instead of the demo tools; those with a
 * `command` are run over stdio, and stopped with the server (SIGTERM, SIGINT).
 * The ledger key (docs/proof.md) comes from LEDGER_KEY or is generated for this process; its
 * public JWK is printed and served at GET /v1/ledger-key, so exported runs can be verified at once.
 * PORT picks the port (default 8787; 0 for any free one). The run inspector is served at /inspect
 * (INSPECTOR=off turns it off). Each failed call is logged with its code
 * and the error's name, never its message or any call data.
 *
 * It answers only to loopback host names (localhost, 127.0.0.1, [::1]) in `Host`, and ALLOWED_HOSTS
 * (comma-separated names) adds others: a web page on another name that resolves to this machine
 * (DNS rebinding) gets 403. The MCP route serves browser pages of the server's own loopback origins
 * (`http://localhost:<port>` and the like) and of MCP_ALLOWED_ORIGINS.
 *
 * A mistake in the configuration (a token with a space, malformed MCP_UPSTREAMS, an upstream or
 * Upstash endpoint that does not answer, a busy PORT) is one line on stderr naming the variable,
 * and exit status 2.
 *
 * @module
 */
import { type BoundaryEvent, generateLedgerKeys } from "@tool-boundary/core";
import { buildEdgeApp } from "./app.ts";
import { INSPECTOR_AND_MCP } from "./parts.ts";
import {
  hostGuarded,
  listenError,
  LOOPBACK_HOSTS,
  portOf,
  startOrExit,
  upstreamsError,
} from "./startup.ts";
import { TOOLS } from "./tools.ts";

/** One line per failed call: its code and the error's name, nothing a message could carry. */
function logFailure(event: BoundaryEvent): void {
  if (event.type === "call.refused") {
    console.log(`call refused: ${event.code}${errorName(event.error)}`);
  } else if (event.type === "call.finished" && event.code !== null) {
    console.log(`call ${event.toolCallId} failed: ${event.code}${errorName(event.error)}`);
  }
}

function errorName(error: unknown): string {
  if (error === undefined) return "";
  const name = error instanceof Error ? error.name : typeof error;
  return ` (${/^[A-Za-z0-9_.$-]{1,64}$/.test(name) ? name : "unnamed"})`;
}

/**
 * The MCP gateway of MCP_UPSTREAMS, or `null` without one. Its modules (and the MCP SDK they
 * need) are loaded only then, by a specifier the module graph cannot see (resolved at run time).
 * `task dev` runs with the core's own deno.json, which does not know packages/mcp, so that a cold
 * start fetches only what the app needs; `task dev:gateway` runs with deno.gateway.json, the core
 * and packages/mcp alone.
 */
async function gatewayOf(text: string | undefined) {
  if (text === undefined || text.trim() === "") return null;
  try {
    import.meta.resolve("@tool-boundary/mcp/gateway");
  } catch {
    console.error(
      "MCP_UPSTREAMS needs the MCP gateway of packages/mcp: start it with " +
        "`npx -y deno@2 task dev:gateway` (its configuration, deno.gateway.json).",
    );
    Deno.exit(2);
  }
  const load = (name: string) => import(import.meta.resolve(name));
  const { connectGateway, upstreamsOf }: typeof import("@tool-boundary/mcp/gateway") = await load(
    "@tool-boundary/mcp/gateway",
  );
  const { stdioTransport }: typeof import("@tool-boundary/mcp/stdio") = await load(
    "@tool-boundary/mcp/stdio",
  );
  try {
    const upstreams = upstreamsOf(text);
    return upstreams.length === 0
      ? null
      : await connectGateway(upstreams, { stdio: stdioTransport });
  } catch (error) {
    throw upstreamsError(error);
  }
}

/** A port that was free a moment ago, for PORT=0: the origins the MCP route serves name it. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

const generated = () => `dev-${crypto.randomUUID().replaceAll("-", "")}`;
const env = Deno.env.toObject();
const agentToken = env.AGENT_TOKEN || generated();
const harnessToken = env.HARNESS_TOKEN || generated();
const secret = env.SERVER_SECRET || `${generated()}${generated()}`;
const ledgerKey = env.LEDGER_KEY || JSON.stringify((await generateLedgerKeys()).privateKey);
// On unless INSPECTOR=off: the page holds no data and the server listens on loopback only.
const inspector = env.INSPECTOR?.trim().toLowerCase() !== "off";
const hostname = "127.0.0.1";
const hosts = [
  ...LOOPBACK_HOSTS,
  ...(env.ALLOWED_HOSTS ?? "").split(",").map((host) => host.trim().toLowerCase()).filter(Boolean),
];

const { app, store, gateway, port } = await startOrExit(async () => {
  const wanted = portOf(env.PORT, 8787);
  const port = wanted === 0 ? freePort() : wanted;
  // Pages of the server's own names may use its MCP route, and those of MCP_ALLOWED_ORIGINS.
  const ownOrigins = hosts.map((host) => `http://${host}:${port}`);
  const gateway = await gatewayOf(env.MCP_UPSTREAMS);
  try {
    const built = buildEdgeApp(
      {
        ...env,
        AGENT_TOKEN: agentToken,
        HARNESS_TOKEN: harnessToken,
        SERVER_SECRET: secret,
        LEDGER_KEY: ledgerKey,
        INSPECTOR: inspector ? "on" : "off",
        MCP_ALLOWED_ORIGINS: [...ownOrigins, env.MCP_ALLOWED_ORIGINS ?? ""].join(","),
      },
      { ...INSPECTOR_AND_MCP, tools: gateway?.tools ?? TOOLS, observe: logFailure },
    );
    await built.checkStore();
    return { ...built, gateway, port };
  } catch (error) {
    await gateway?.close();
    throw error;
  }
}, Deno.exit);

/** The curl lines of the demo tools. */
const TRY_IT = (url: string) =>
  `Try it:
  export TB=${url} AGENT=${agentToken} HARNESS=${harnessToken}
  RUN=run-$(date +%s)
  curl -s -X POST $TB/v1/runs -H "authorization: Bearer $HARNESS" \\
    -H 'content-type: application/json' -d '{"runId":"'$RUN'","ttlMs":600000,"budget":{"calls":20}}'
  curl -s -X POST $TB/v1/runs/$RUN/tool-calls -H "authorization: Bearer $AGENT" \\
    -H 'content-type: application/json' \\
    -d '{"toolCallId":"call_1","toolName":"search_runbook","input":{"query":"disk full"}}'
  curl -s $TB/v1/runs/$RUN/tool-calls/call_1 -H "authorization: Bearer $HARNESS"
  curl -s -X POST $TB/v1/runs/$RUN/end -H "authorization: Bearer $HARNESS"
  curl -s $TB/v1/runs/$RUN/export -H "authorization: Bearer $HARNESS" > bundle.json
  curl -s $TB/v1/ledger-key > public.jwk
  npx -y deno@2 run --allow-read src/verify/mod.ts bundle.json public.jwk`;

/** The ledger key's public half, as JSON text (the key was checked when the app was built). */
const { kty, crv, x } = JSON.parse(ledgerKey) as JsonWebKey;
const ledgerPublic = JSON.stringify({ kty, crv, x });

const server = await startOrExit(async () => {
  try {
    return Deno.serve({
      // Loopback only: the dev server may run on generated tokens and is not for a network.
      hostname,
      port,
      onListen,
    }, hostGuarded(app.fetch, hosts));
  } catch (error) {
    await gateway?.close();
    throw listenError(error, hostname, port);
  }
}, Deno.exit);

function onListen({ hostname, port }: Deno.NetAddr): void {
  const url = `http://${hostname}:${port}`;
  const from = (name: string) => env[name] ? `from ${name}` : "generated for this process";
  console.log(`tool-boundary dev server on ${url} (loopback only), ${store} store
  agent token   (${from("AGENT_TOKEN")}): ${agentToken}
  harness token (${from("HARNESS_TOKEN")}): ${harnessToken}
  server secret (${from("SERVER_SECRET")}, not shown): run tokens and MCP sessions
  ledger key    (${from("LEDGER_KEY")}): public JWK ${ledgerPublic} (GET /v1/ledger-key)
  ${
    gateway === null
      ? `demo tools: ${TOOLS.map((tool) => tool.name).join(", ")}`
      : `MCP gateway (MCP_UPSTREAMS):\n    ${gateway.summary.join("\n    ")}`
  }
  MCP: POST ${url}/v1/runs/<runId>/mcp with the agent token (docs/mcp.md)
  run inspector: ${inspector ? `${url}/inspect (paste the harness token there)` : "off"}

${gateway === null ? TRY_IT(url) : "Try it: docs/mcp.md, the gateway walkthrough."}
More: docs/http.md. OpenAPI: ${url}/openapi.json`);
}

// Stop the upstream processes with the server.
if (gateway !== null) {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, async () => {
      await server.shutdown();
      await gateway.close();
      Deno.exit(0);
    });
  }
}
