/**
 * Startup mistakes of the Deno entries, run as processes: each is one line on stderr that names
 * the variable and its rule, and exit status 2; a store failure after the start is one log line;
 * the dev server answers only to loopback host names.
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, HARNESS_TOKEN } from "../runtime/flow.ts";
import { freePort, ROOT, start, WORKSPACE_CONFIG } from "../runtime/process.ts";
import { withSharedUpstashFixture } from "../support/upstash_fixture.ts";

const DENO = Deno.execPath();
const NO_UPSTASH = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };
const BASE_ENV = {
  AGENT_TOKEN,
  HARNESS_TOKEN,
  SERVER_SECRET: "",
  MCP_UPSTREAMS: "",
  MCP_ALLOWED_ORIGINS: "",
  ALLOWED_HOSTS: "",
  LEDGER_KEY: "",
  PORT: "0",
  ...NO_UPSTASH,
};

const DEV = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-run", "edge/dev.ts"];
const DEV_GATEWAY = [
  "run",
  ...WORKSPACE_CONFIG,
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-run",
  "edge/dev.ts",
];
const GATEWAY = ["run", ...WORKSPACE_CONFIG, "--allow-net", "--allow-env", "edge/gateway_deno.ts"];
const SERVE = ["serve", "--allow-net", "--allow-env", "--port", "0", "edge/deno.ts"];

/** Runs an entry to its end: its exit code, stderr and stdout. */
async function refused(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(DENO, {
    args,
    cwd: ROOT,
    env: { ...BASE_ENV, ...env, NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stderr: decode(out.stderr), stdout: decode(out.stdout) };
}

/** Asserts exit status 2 and exactly `line` on stderr, with nothing listening. */
function assertRefused(result: Awaited<ReturnType<typeof refused>>, line: string | RegExp) {
  assert.equal(result.code, 2, `${result.stderr}\n${result.stdout}`);
  if (typeof line === "string") {
    assert.equal(result.stderr, `${line}\n`);
  } else {
    assert.match(result.stderr, line);
    assert.equal(result.stderr.split("\n").length, 2, `one line: ${result.stderr}`);
  }
  assert.doesNotMatch(result.stdout, /Listening|dev server on/);
}

Deno.test("a token with a space is refused by its variable's name and rule, exit 2 (dev and deno serve)", async () => {
  const line = "Refusing to start: AGENT_TOKEN may hold only A-Z a-z 0-9 - . _ ~ + / " +
    "(and = at its end), no spaces: it goes in an Authorization: Bearer header";
  const token = "agent token with a space";
  assertRefused(await refused(DEV, { AGENT_TOKEN: token }), line);
  assertRefused(await refused(SERVE, { AGENT_TOKEN: token }), line);
  assertRefused(
    await refused(SERVE, { HARNESS_TOKEN: "short" }),
    "Refusing to start: HARNESS_TOKEN must be at least 16 characters",
  );
  assertRefused(
    await refused(SERVE, { AGENT_TOKEN: HARNESS_TOKEN }),
    "Refusing to start: AGENT_TOKEN and HARNESS_TOKEN must differ",
  );
  assertRefused(
    await refused(SERVE, { SERVER_SECRET: "too-short" }),
    "Refusing to start: SERVER_SECRET must be at least 32 characters",
  );
  assertRefused(
    await refused(SERVE, { LEDGER_KEY: "{not json" }),
    "Refusing to start: LEDGER_KEY must be a private JWK as JSON text (generateLedgerKeys)",
  );
  assertRefused(
    await refused(SERVE, { MCP_ALLOWED_ORIGINS: "https://app.example.com/path" }),
    "Refusing to start: MCP_ALLOWED_ORIGINS must list origins such as https://app.example.com " +
      "(http or https, host and port only, no path)",
  );
  assertRefused(
    await refused(SERVE, { UPSTASH_REDIS_REST_URL: "https://x.upstash.io" }),
    "Refusing to start: UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN must both be set, " +
      "or neither",
  );
});

Deno.test("a busy PORT or one that is no number is one line naming PORT, exit 2", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  try {
    assertRefused(
      await refused(DEV, { PORT: String(port) }),
      `Refusing to start: PORT ${port} is in use on 127.0.0.1: stop what listens there, or set ` +
        "PORT to a free port (0 for any)",
    );
    const gateway = await refused(GATEWAY, {
      PORT: String(port),
      HOST: "127.0.0.1",
      MCP_UPSTREAMS: "[]",
    });
    assertRefused(gateway, "Refusing to start: MCP_UPSTREAMS names no upstream MCP server");
  } finally {
    listener.close();
  }
  assertRefused(
    await refused(DEV, { PORT: "eighty" }),
    "Refusing to start: PORT must be a port number from 0 to 65535 (0: any free port)",
  );
});

Deno.test("malformed MCP_UPSTREAMS is refused as not JSON, exit 2 (dev gateway and Deno gateway)", async () => {
  const line = "Refusing to start: MCP_UPSTREAMS is not valid JSON: a JSON array of upstream " +
    "objects is expected";
  assertRefused(await refused(DEV_GATEWAY, { MCP_UPSTREAMS: '[{"url":' }), line);
  assertRefused(await refused(GATEWAY, { MCP_UPSTREAMS: '[{"url":' }), line);
  assertRefused(
    await refused(GATEWAY, { MCP_UPSTREAMS: '[{"url":"ftp://a.example"}]' }),
    "Refusing to start: MCP_UPSTREAMS is not valid at 0.url: url must be http or https",
  );
});

Deno.test("an unreachable upstream is one line naming MCP_UPSTREAMS and its origin, never its query, exit 2", async () => {
  const port = freePort();
  const upstreams = JSON.stringify([{ url: `http://127.0.0.1:${port}/mcp?key=canary-9f1e` }]);
  for (const args of [GATEWAY, DEV_GATEWAY]) {
    const result = await refused(args, { MCP_UPSTREAMS: upstreams });
    assertRefused(
      result,
      new RegExp(
        `^Refusing to start: MCP_UPSTREAMS names an upstream that did not connect \\(it must ` +
          `be up and speak MCP at its url, or start with its command\\): Error: ` +
          `http://127\\.0\\.0\\.1:${port}: fetch failed.*Connection refused`,
      ),
    );
    assert.doesNotMatch(result.stderr, /canary-9f1e|\/mcp/);
  }
});

Deno.test("a wrong UPSTASH_REDIS_REST_URL or token stops the start with one line, exit 2", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const closed = `http://127.0.0.1:${freePort()}`;
    const upstash = { UPSTASH_REDIS_REST_TOKEN: fixture.endpoint.token };
    const line = new RegExp(
      "^Refusing to start: UPSTASH_REDIS_REST_URL did not answer as an Upstash REST endpoint " +
        "\\(TypeError: fetch failed <- Error: .*Connection refused.*\\)$",
      "m",
    );
    for (const args of [DEV, SERVE]) {
      const result = await refused(args, { ...upstash, UPSTASH_REDIS_REST_URL: closed });
      assertRefused(result, line);
      assert.ok(!result.stderr.includes(closed), result.stderr);
    }
    assertRefused(
      await refused(DEV, {
        UPSTASH_REDIS_REST_URL: fixture.endpoint.url,
        UPSTASH_REDIS_REST_TOKEN: "not-the-token",
      }),
      "Refusing to start: UPSTASH_REDIS_REST_TOKEN was refused by the REST endpoint " +
        "(UpstashError: Unauthorized)",
    );
  });
});

Deno.test("a store that fails after the start is one log line with its causes, and no request data", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const child = start(DENO, DEV, {
      cwd: ROOT,
      env: {
        ...BASE_ENV,
        UPSTASH_REDIS_REST_URL: fixture.endpoint.url,
        UPSTASH_REDIS_REST_TOKEN: fixture.endpoint.token,
        NO_COLOR: "1",
      },
    });
    try {
      const [, base] = await child.waitFor(/dev server on (http:\/\/127\.0\.0\.1:\d+)/);
      await child.waitFor(/upstash store/);
      await fixture.endpoint.stop();
      const res = await fetch(`${base}/v1/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${HARNESS_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ runId: "run-canary-4b7d", ttlMs: 60_000 }),
      });
      assert.equal(res.status, 503);
      assert.equal((await res.json()).code, "STORE_UNAVAILABLE");
      const [line] = await child.waitFor(/request \S+ failed: .*\n/);
      assert.match(
        line!,
        /^request \S+ failed: BoundaryError: .+ \[STORE_UNAVAILABLE\] <- TypeError: fetch failed <- Error: .*Connection refused.*\n$/,
      );
      // One line: no stack, no command, no run ID, no address.
      const after = child.output().slice(child.output().indexOf(line!) + line!.length);
      assert.doesNotMatch(after, /^\s+at /m);
      assert.doesNotMatch(child.output(), /run-canary-4b7d|command was/);
      assert.ok(!line!.includes(fixture.endpoint.url), line);
    } finally {
      await child.stop();
    }
  });
});

/** One raw HTTP/1.1 request, so that the test picks the Host header. */
async function rawRequest(port: number, lines: string[], body = ""): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = [...lines, `content-length: ${new TextEncoder().encode(body).length}`];
    await conn.write(new TextEncoder().encode(`${head.join("\r\n")}\r\n\r\n${body}`));
    let text = "";
    const buffer = new Uint8Array(65536);
    while (!/\r\n\r\n/.test(text)) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    return text;
  } finally {
    conn.close();
  }
}

Deno.test("the dev server refuses a foreign Host with 403, serves loopback names and ALLOWED_HOSTS", async () => {
  const child = start(DENO, DEV, {
    cwd: ROOT,
    env: { ...BASE_ENV, ALLOWED_HOSTS: "tools.internal", NO_COLOR: "1" },
  });
  try {
    const [, port] = await child.waitFor(/dev server on http:\/\/127\.0\.0\.1:(\d+)/);
    const status = async (host: string) => {
      const answer = await rawRequest(Number(port), [
        "GET /healthz HTTP/1.1",
        `host: ${host}`,
        "connection: close",
      ]);
      return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
    };
    assert.equal(await status("evil.example.com"), 403);
    assert.equal(await status(`evil.example.com:${port}`), 403);
    assert.equal(await status(`localhost:${port}`), 200);
    assert.equal(await status(`127.0.0.1:${port}`), 200);
    assert.equal(await status(`[::1]:${port}`), 200);
    assert.equal(await status(`tools.internal:${port}`), 200);
  } finally {
    await child.stop();
  }
});
