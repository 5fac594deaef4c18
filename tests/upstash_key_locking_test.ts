/**
 * `keyLocking: true`: every script starts with `#!lua flags=allow-key-locking`, which Upstash
 * reads and stock redis-server refuses. The client sends the flagged source (`EVAL`) and the SHA-1
 * of that exact source (`EVALSHA`); the test endpoint drops the flag before redis-server sees the
 * script and maps the SHA, as Upstash accepts such scripts. Through the real `@upstash/redis`
 * client, over HTTP, against a real redis-server.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../src/core/boundary.ts";
import { UpstashStore } from "../src/stores/upstash/mod.ts";
import { KEY_LOCKING_SHEBANG, SCRIPTS } from "../src/stores/upstash/scripts.ts";
import { createFakeToolkit } from "../src/testing/mod.ts";
import { stripKeyLocking } from "./support/upstash_endpoint.ts";
import { startUpstashFixture, type UpstashFixture } from "./support/upstash_fixture.ts";

const FLAG_LINE = "#!lua flags=allow-key-locking\n";

async function withFixture(fn: (fixture: UpstashFixture) => Promise<void>): Promise<void> {
  const fixture = await startUpstashFixture();
  try {
    await fn(fixture);
  } finally {
    await fixture.stop();
  }
}

async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function post(
  fixture: UpstashFixture,
  path: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${fixture.endpoint.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${fixture.endpoint.token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** The arguments of a MONITOR line: `<ts> [<db> <source>] "CMD" "arg" ...`, escapes undone. */
function monitorArgs(line: string): string[] {
  const args: string[] = [];
  const at = line.indexOf("] ");
  for (const match of line.slice(at + 2).matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    args.push(
      match[1]!.replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) => {
        if (e.startsWith("x")) return String.fromCharCode(parseInt(e.slice(1), 16));
        return ({ n: "\n", r: "\r", t: "\t", a: "\x07", b: "\b" } as Record<string, string>)[e] ??
          e;
      }),
    );
  }
  return args;
}

async function startRun(store: UpstashStore, runId: string): Promise<void> {
  const now = Date.now();
  const started = await store.startRun({
    runId,
    deadline: now + 600_000,
    budget: { calls: 10, perTool: {} },
    ttlMs: 600_000,
    attemptId: `start-${runId}`,
    now,
  });
  assert.equal(started.ok, true);
}

Deno.test("redis-server 7 refuses the allow-key-locking flag, for EVAL and SCRIPT LOAD", async () => {
  await withFixture(async (fixture) => {
    const script = `${FLAG_LINE}return 1`;
    await assert.rejects(
      fixture.direct(["EVAL", script, "0"]),
      /Unexpected flag in script shebang: allow-key-locking/,
    );
    await assert.rejects(
      fixture.direct(["SCRIPT", "LOAD", script]),
      /Unexpected flag in script shebang: allow-key-locking/,
    );
    // The shebang syntax itself is known to it: other flags pass.
    assert.equal(await fixture.direct(["EVAL", "#!lua flags=no-writes\nreturn 1", "0"]), 1);
  });
});

Deno.test("UpstashStore keyLocking: the client sends the flagged source, EVALSHA works after, also after SCRIPT FLUSH", async () => {
  await withFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), keyLocking: true });
    const runId = "run-key-locking";
    await startRun(store, runId);
    const stopMonitor = await fixture.monitor();
    fixture.endpoint.reset();

    // First use of getRun on this redis: EVALSHA of the flagged source's SHA, NOSCRIPT, EVAL.
    assert.equal((await store.getRun(runId))?.runId, runId);
    const first = fixture.endpoint.commands();
    assert.deepEqual(first.map((c) => c[0]), ["evalsha", "eval"]);
    const flaggedSource = first[1]![1]!;
    assert.ok(flaggedSource.startsWith(FLAG_LINE), "the client sent the flag");
    assert.equal(flaggedSource.slice(FLAG_LINE.length).split("\n")[0], "-- getRun");
    const flaggedSha = await sha1(flaggedSource);
    assert.equal(first[0]![1], flaggedSha, "EVALSHA names the SHA-1 of the flagged source");
    const strippedSource = flaggedSource.slice(FLAG_LINE.length);
    const strippedSha = await sha1(strippedSource);

    // Loaded: one EVALSHA, one request.
    fixture.endpoint.reset();
    assert.equal((await store.getRun(runId))?.runId, runId);
    assert.deepEqual(fixture.endpoint.commands(), [["evalsha", flaggedSha, "1", first[0]![3]!]]);
    assert.equal(fixture.endpoint.requests, 1);

    // After SCRIPT FLUSH: NOSCRIPT again, the flagged source once more, then EVALSHA alone.
    assert.equal(await fixture.direct(["SCRIPT", "FLUSH"]), "OK");
    fixture.endpoint.reset();
    assert.equal((await store.getRun(runId))?.runId, runId);
    const afterFlush = fixture.endpoint.commands();
    assert.deepEqual(afterFlush.map((c) => c[0]), ["evalsha", "eval"]);
    assert.equal(afterFlush[0]![1], flaggedSha);
    assert.equal(afterFlush[1]![1], flaggedSource);
    fixture.endpoint.reset();
    assert.equal((await store.getRun(runId))?.runId, runId);
    assert.deepEqual(fixture.endpoint.commands().map((c) => c[0]), ["evalsha"], "loaded again");
    assert.equal(fixture.endpoint.requests, 1);

    // What redis-server itself ran: the script without the flag line, and its SHA once the
    // endpoint has seen the flagged source (before, the client's SHA is unknown: NOSCRIPT).
    const seen = (await stopMonitor()).map(monitorArgs).filter((args) =>
      /^eval(sha)?$/i.test(args[0] ?? "")
    );
    assert.deepEqual(seen.map((args) => [args[0], args[1]]), [
      ["evalsha", flaggedSha],
      ["eval", strippedSource],
      ["evalsha", strippedSha],
      ["evalsha", strippedSha],
      ["eval", strippedSource],
      ["evalsha", strippedSha],
    ]);
    assert.ok(seen.every((args) => !args[1]!.startsWith("#!")), "no flag reached redis-server");
  });
});

Deno.test("UpstashStore keyLocking: every script is sent flagged; a whole run through the boundary", async () => {
  await withFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), keyLocking: true });
    const kit = createFakeToolkit();
    const boundary = new ToolBoundary({ store, tools: kit.tools });
    const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
    const result = await boundary.invoke(run, {
      toolCallId: "call_1",
      runId: run.runId,
      toolName: kit.names.success,
      input: { query: "disk" },
    });
    assert.equal(result.status, "READY", JSON.stringify(result));
    const facts = await boundary.endRun(run);
    assert.equal(facts.length, 1);

    const sent = fixture.endpoint.commands();
    const evals = sent.filter((c) => c[0] === "eval");
    assert.ok(evals.length >= 5, "startRun, begin, complete, endRun, readFacts: each sent once");
    const expected = new Map(
      await Promise.all(SCRIPTS.map(async (s) => {
        const source = KEY_LOCKING_SHEBANG + s.source;
        return [source, await sha1(source)] as const;
      })),
    );
    for (const command of evals) {
      assert.ok(expected.has(command[1]!), "an EVAL of a flagged script source");
    }
    for (const command of sent.filter((c) => c[0] === "evalsha")) {
      assert.ok([...expected.values()].includes(command[1]!), "an EVALSHA of a flagged source");
    }
  });
});

Deno.test("UpstashStore: without keyLocking no script carries a shebang; keyLocking must be a boolean", async () => {
  await withFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), keyLocking: false });
    await startRun(store, "run-plain");
    const evals = fixture.endpoint.commands().filter((c) => c[0] === "eval");
    assert.equal(evals.length, 1);
    assert.ok(!evals[0]![1]!.startsWith("#!"));
    assert.throws(
      () =>
        new UpstashStore({
          redis: fixture.createRedis(),
          keyLocking: "yes" as unknown as boolean,
        }),
      TypeError,
    );
  });
});

Deno.test("Upstash endpoint: drops the key-locking flag and maps SHAs, like Upstash", async () => {
  await withFixture(async (fixture) => {
    const body = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])";
    const flagged = FLAG_LINE + body;
    const flaggedSha = await sha1(flagged);
    const bodySha = await sha1(body);

    // Unknown SHA: NOSCRIPT, so a client falls back to EVAL.
    const missing = await post(fixture, "/", ["EVALSHA", flaggedSha, 1, "k", "v"]);
    assert.equal(missing.status, 400);
    assert.match((missing.body as { error: string }).error, /^NOSCRIPT/);

    // EVAL of the flagged source runs; the log shows it as sent.
    assert.deepEqual(await post(fixture, "/", ["EVAL", flagged, 1, "k", "v1"]), {
      status: 200,
      body: { result: "v1" },
    });
    assert.deepEqual(fixture.endpoint.commands().at(-1), ["EVAL", flagged, "1", "k", "v1"]);
    // EVALSHA of the flagged source's SHA runs the script redis-server holds.
    assert.deepEqual(await post(fixture, "/", ["evalsha", flaggedSha, 1, "k", "v2"]), {
      status: 200,
      body: { result: "v2" },
    });
    assert.deepEqual(
      await post(fixture, "/", ["EVALSHA", flaggedSha.toUpperCase(), 1, "k", "v3"]),
      {
        status: 200,
        body: { result: "v3" },
      },
    );
    assert.deepEqual(
      await post(fixture, "/", ["SCRIPT", "EXISTS", flaggedSha, bodySha, "0".repeat(40)]),
      {
        status: 200,
        body: { result: [1, 1, 0] },
      },
    );

    // After SCRIPT FLUSH: NOSCRIPT, then SCRIPT LOAD answers the flagged source's SHA.
    assert.equal(await fixture.direct(["SCRIPT", "FLUSH"]), "OK");
    const flushed = await post(fixture, "/", ["EVALSHA", flaggedSha, 1, "k", "v"]);
    assert.match((flushed.body as { error: string }).error, /^NOSCRIPT/);
    assert.deepEqual(await post(fixture, "/", ["SCRIPT", "LOAD", flagged]), {
      status: 200,
      body: { result: flaggedSha },
    });
    assert.deepEqual(await fixture.direct(["SCRIPT", "EXISTS", bodySha]), [1]);

    // Pipeline and multi-exec too, each command on its own.
    assert.deepEqual(
      await post(fixture, "/pipeline", [["EVALSHA", flaggedSha, 1, "k", "p"], ["GET", "k"]]),
      { status: 200, body: [{ result: "p" }, { result: "p" }] },
    );
    assert.deepEqual(
      await post(fixture, "/multi-exec", [["EVAL", flagged, 1, "k", "m"], [
        "EVALSHA",
        flaggedSha,
        1,
        "k",
        "n",
      ]]),
      { status: 200, body: [{ result: "m" }, { result: "n" }] },
    );

    // A script that fails to compile still fails, with redis-server's error.
    const broken = await post(fixture, "/", ["SCRIPT", "LOAD", `${FLAG_LINE}return (`]);
    assert.equal(broken.status, 400);

    // Other flags stay: a no-writes script still may not write.
    const readOnly = await post(fixture, "/", [
      "EVAL",
      `#!lua flags=no-writes,allow-key-locking\n${body}`,
      1,
      "k",
      "w",
    ]);
    assert.equal(readOnly.status, 400);
    assert.match((readOnly.body as { error: string }).error, /read-only|no-writes/i);
  });
});

Deno.test("stripKeyLocking: only the allow-key-locking flag goes", () => {
  assert.equal(stripKeyLocking(`${FLAG_LINE}return 1`), "return 1");
  assert.equal(stripKeyLocking("#!lua flags=allow-key-locking\r\nreturn 1"), "return 1");
  assert.equal(stripKeyLocking("#!lua flags=allow-key-locking"), "");
  assert.equal(
    stripKeyLocking("#!lua flags=no-writes,allow-key-locking\nreturn 1"),
    "#!lua flags=no-writes\nreturn 1",
  );
  assert.equal(stripKeyLocking("#!lua flags=no-writes\nreturn 1"), null);
  assert.equal(stripKeyLocking("#!lua\nreturn 1"), null);
  assert.equal(stripKeyLocking("return 1 -- #!lua flags=allow-key-locking"), null);
  assert.equal(stripKeyLocking(`-- x\n${FLAG_LINE}return 1`), null);
});
