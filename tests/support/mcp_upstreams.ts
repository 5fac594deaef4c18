/**
 * The upstream MCP servers of the gateway tests, as published on npm (see mcp_npm/package.json):
 * `@modelcontextprotocol/server-filesystem` over stdio and `@modelcontextprotocol/server-everything`
 * over Streamable HTTP, each run with Node (and `serverScript` for those and
 * `@modelcontextprotocol/server-memory`, run by the gateway itself). They are installed by the
 * tests themselves; a failed install fails the test. Each is reached through either official SDK
 * client: `v1` (`@modelcontextprotocol/sdk` 1.x) or `v2` (`@modelcontextprotocol/client` 2.x).
 * Each client logs the JSON-RPC messages it sends, so a test can tell what reached the server.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { freePort, run, start } from "../runtime/process.ts";

const NPM = new URL("./mcp_npm/", import.meta.url).pathname;
const SERVERS = `${NPM}node_modules/@modelcontextprotocol/`;

/** One JSON-RPC request a client sent: its method and params. */
export interface Sent {
  method: string;
  params: Record<string, unknown>;
}

/** Which official SDK's client. */
export type Sdk = "v1" | "v2";

/** Both, for tests that run over each. */
export const SDKS: readonly Sdk[] = ["v1", "v2"];

/** A connected client, what it sent, and how to stop it and its server. */
export interface Upstream {
  client: Client | ClientV2;
  /** Every JSON-RPC request and notification sent, in order. */
  sent: Sent[];
  /** The `tools/call` requests sent. */
  calls(): Sent[];
  close(): Promise<void>;
}

let installed: Promise<void> | undefined;

/**
 * Installs the servers once per process: the first test module to need them runs npm (a no-op
 * when they are up to date) and marks node_modules with the process; the other modules of a
 * parallel run wait for it (a file lock) and find the mark.
 */
function install(): Promise<void> {
  installed ??= installOnce();
  return installed;
}

async function installOnce(): Promise<void> {
  await Deno.mkdir(`${NPM}node_modules`, { recursive: true });
  const lock = await Deno.open(`${NPM}node_modules/.tool-boundary-install.lock`, {
    create: true,
    write: true,
  });
  try {
    await lock.lock(true);
    // The process's ID and start time: an ID alone may come back in a later run.
    const stat = await Deno.readTextFile("/proc/self/stat");
    const process = `${Deno.pid} ${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}`;
    const mark = `${NPM}node_modules/.tool-boundary-installed`;
    if (await Deno.readTextFile(mark).catch(() => null) === process) return;
    await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: NPM });
    await Deno.writeTextFile(mark, process);
  } finally {
    lock.close();
  }
}

/**
 * Installs the servers and returns the script of one, to run with Node (as the gateway's stdio
 * upstreams do).
 *
 * @param name Its package name without the scope, e.g. `server-memory`.
 */
export async function serverScript(
  name: "server-everything" | "server-filesystem" | "server-memory",
): Promise<string> {
  await install();
  return `${SERVERS}${name}/dist/index.js`;
}

function upstream(client: Client | ClientV2, sent: Sent[], close: () => Promise<void>): Upstream {
  return {
    client,
    sent,
    calls: () => sent.filter((message) => message.method === "tools/call"),
    close,
  };
}

function log(sent: Sent[], message: unknown): void {
  for (const item of Array.isArray(message) ? message : [message]) {
    if (typeof item?.method === "string") {
      sent.push({ method: item.method, params: structuredClone(item.params ?? {}) });
    }
  }
}

/**
 * The filesystem server on `folder`, over stdio.
 *
 * @param folder The one folder it may read and write.
 * @param sdk Whose client. @default "v1"
 */
export async function filesystemServer(folder: string, sdk: Sdk = "v1"): Promise<Upstream> {
  await install();
  const sent: Sent[] = [];
  const command = {
    command: "node",
    args: [`${SERVERS}server-filesystem/dist/index.js`, folder],
    stderr: "pipe" as const,
  };
  const transport = sdk === "v1"
    ? new StdioClientTransport(command)
    : new StdioClientTransportV2(command);
  // What the client hands the real transport, written down on its way out.
  const send = transport.send.bind(transport);
  transport.send = (message: unknown) => {
    log(sent, message);
    return send(message as never);
  };
  const info = { name: "gateway-test", version: "1.0.0" };
  if (sdk === "v1") {
    const client = new Client(info);
    await client.connect(transport as StdioClientTransport);
    return upstream(client, sent, () => client.close());
  }
  const client = new ClientV2(info);
  await client.connect(transport as StdioClientTransportV2);
  return upstream(client, sent, () => client.close());
}

/**
 * The everything server in its Streamable HTTP mode, on a loopback port, with no client.
 *
 * @param port Where it listens. @default a free port
 */
export async function startEverything(
  port: number = freePort(),
): Promise<{ url: string; output(): string; stop(): Promise<void> }> {
  await install();
  const child = start("node", [`${SERVERS}server-everything/dist/index.js`, "streamableHttp"], {
    env: { PORT: String(port) },
  });
  await child.waitFor(/listening on port/i, 30_000);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    /** What the server logged: it names each session it opens and each it is asked to end. */
    output: () => child.output(),
    stop: async () => {
      const status = await child.stop();
      assert.ok(status.code === 0 || status.signal === "SIGTERM", child.output());
    },
  };
}

/**
 * The everything server over Streamable HTTP, and a client connected to it.
 *
 * @param sdk Whose client. @default "v1"
 */
export async function everythingServer(sdk: Sdk = "v1"): Promise<Upstream & { url: string }> {
  const server = await startEverything();
  const sent: Sent[] = [];
  const options = {
    // The bodies of what goes out over real HTTP, written down first.
    fetch: (input: string | URL, init?: RequestInit) => {
      if (typeof init?.body === "string") log(sent, JSON.parse(init.body));
      return fetch(input, init);
    },
  };
  const info = { name: "gateway-test", version: "1.0.0" };
  let client: Client | ClientV2;
  try {
    if (sdk === "v1") {
      const v1 = new Client(info);
      await v1.connect(new StreamableHTTPClientTransport(new URL(server.url), options));
      client = v1;
    } else {
      const v2 = new ClientV2(info);
      await v2.connect(new StreamableHTTPClientTransportV2(new URL(server.url), options));
      client = v2;
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    ...upstream(client, sent, async () => {
      await client.close();
      await server.stop();
    }),
    url: server.url,
  };
}
