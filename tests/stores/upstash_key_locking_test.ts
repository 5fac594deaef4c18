/**
 * `keyLocking: true`: every script starts with `#!lua flags=allow-key-locking`, which Upstash
 * reads and stock redis-server refuses. The client sends the flagged source (`EVAL`) and the SHA-1
 * of that exact source (`EVALSHA`); the test endpoint drops the flag before redis-server sees the
 * script and maps the SHA, as Upstash accepts such scripts. Through the real `@upstash/redis`
 * client, over HTTP, against a real redis-server.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../src/core/boundary.ts";
import { generateLedgerKeys } from "../../src/core/ledger.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import {
  KEY_LOCKING_READ_ONLY_SHEBANG,
  KEY_LOCKING_SHEBANG,
  keyLockingSource,
  SCRIPTS,
} from "../../src/upstash/scripts.ts";
import { createFakeToolkit } from "../../src/testing/mod.ts";
import { startStoreRun } from "../support/runs.ts";
import { stripKeyLocking } from "../support/upstash_endpoint.ts";
import { type UpstashFixture, withSharedUpstashFixture } from "../support/upstash_fixture.ts";
import { sha1Hex } from "../support/sha1.ts";

const FLAG_LINE = "#!lua flags=allow-key-locking\n";
const READ_ONLY_LINE = "#!lua flags=no-writes,allow-key-locking\n";

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

Deno.test("redis-server 7 refuses the allow-key-locking flag, for EVAL and SCRIPT LOAD", async () => {
  await withSharedUpstashFixture(async (fixture) => {
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

/**
 * One script's life on the wire with key locking: the flagged source and its SHA-1 from the
 * client, `EVALSHA` after `EVAL` and after `SCRIPT FLUSH`, and what redis-server itself runs.
 *
 * @param op Runs the script once through the store.
 * @param name The script's name (its first comment line).
 * @param sentLine The first line the client must send.
 * @param passedLine What the endpoint must pass on instead ("" when the line goes).
 */
async function checkFlaggedScript(
  fixture: UpstashFixture,
  op: () => Promise<void>,
  name: string,
  sentLine: string,
  passedLine: string,
): Promise<void> {
  const stopMonitor = await fixture.monitor();
  fixture.endpoint.reset();

  // First use on this redis: EVALSHA of the flagged source's SHA, NOSCRIPT, EVAL.
  await op();
  const first = fixture.endpoint.commands();
  assert.deepEqual(first.map((c) => c[0]), ["evalsha", "eval"]);
  const flaggedSource = first[1]![1]!;
  assert.ok(flaggedSource.startsWith(sentLine), `the client sent ${JSON.stringify(sentLine)}`);
  const body = flaggedSource.slice(sentLine.length);
  assert.equal(body.split("\n")[0], `-- ${name}`);
  const flaggedSha = await sha1Hex(flaggedSource);
  assert.equal(first[0]![1], flaggedSha, "EVALSHA names the SHA-1 of the flagged source");
  const passedSource = passedLine + body;
  const passedSha = await sha1Hex(passedSource);

  // Loaded: one EVALSHA, one request.
  fixture.endpoint.reset();
  await op();
  assert.deepEqual(fixture.endpoint.commands().map((c) => c.slice(0, 2)), [[
    "evalsha",
    flaggedSha,
  ]]);
  assert.equal(fixture.endpoint.requests, 1);

  // After SCRIPT FLUSH: NOSCRIPT again, the flagged source once more, then EVALSHA alone.
  assert.equal(await fixture.direct(["SCRIPT", "FLUSH"]), "OK");
  fixture.endpoint.reset();
  await op();
  const afterFlush = fixture.endpoint.commands();
  assert.deepEqual(afterFlush.map((c) => c[0]), ["evalsha", "eval"]);
  assert.equal(afterFlush[0]![1], flaggedSha);
  assert.equal(afterFlush[1]![1], flaggedSource);
  fixture.endpoint.reset();
  await op();
  assert.deepEqual(fixture.endpoint.commands().map((c) => c[0]), ["evalsha"], "loaded again");
  assert.equal(fixture.endpoint.requests, 1);

  // What redis-server itself ran: the script without allow-key-locking, and its SHA once the
  // endpoint has seen the flagged source (before, the client's SHA is unknown: NOSCRIPT).
  const seen = (await stopMonitor()).map(monitorArgs).filter((args) =>
    /^eval(sha)?$/i.test(args[0] ?? "")
  );
  assert.deepEqual(seen.map((args) => [args[0], args[1]]), [
    ["evalsha", flaggedSha],
    ["eval", passedSource],
    ["evalsha", passedSha],
    ["evalsha", passedSha],
    ["eval", passedSource],
    ["evalsha", passedSha],
  ]);
  assert.ok(
    seen.every((args) => !args[1]!.includes("allow-key-locking")),
    "no allow-key-locking reached redis-server",
  );
}

Deno.test("UpstashStore keyLocking: a read-only script is sent with no-writes,allow-key-locking; redis-server runs it with no-writes", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), keyLocking: true });
    const runId = "run-key-locking";
    await startStoreRun(store, runId, { calls: 10, ttlMs: 600_000 });
    await checkFlaggedScript(
      fixture,
      async () => assert.equal((await store.getRun(runId))?.runId, runId),
      "getRun",
      READ_ONLY_LINE,
      "#!lua flags=no-writes\n",
    );
  });
});

Deno.test("UpstashStore keyLocking: a writing script is sent with allow-key-locking; redis-server runs it without a shebang", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), keyLocking: true });
    // listRuns on an empty store: its one script alone (startRun sends two, with the index's).
    await checkFlaggedScript(
      fixture,
      async () => assert.deepEqual(await store.listRuns({ limit: 1 }), { runs: [], next: null }),
      "listRuns",
      FLAG_LINE,
      "",
    );
  });
});

Deno.test("UpstashStore keyLocking: every script is sent flagged, read-only ones with no-writes; a whole run through the boundary", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), keyLocking: true });
    const kit = createFakeToolkit();
    // With a ledger key, so the run also seals (sealRun) and exports (readRecords).
    const { privateKey } = await generateLedgerKeys();
    const boundary = new ToolBoundary({ store, tools: kit.tools, ledgerKey: privateKey });
    const stopMonitor = await fixture.monitor();
    const run = await boundary.startRun({ ttlMs: 60_000, budget: { calls: 5 } });
    const result = await boundary.invoke(run, {
      toolCallId: "call_1",
      runId: run.runId,
      toolName: kit.names.success,
      input: { query: "disk" },
    });
    assert.equal(result.status, "READY", JSON.stringify(result));
    assert.equal((await boundary.inspect(run.runId, "call_1"))?.status, "READY");
    assert.equal((await store.getRun(run.runId))?.status, "ACTIVE");
    assert.equal((await store.lookupCall(run.runId, "call_1"))?.call?.seq, 1);
    assert.equal((await store.listCalls(run.runId))?.calls.length, 1);
    assert.equal((await store.listRuns({ limit: 10 })).runs.length, 1);
    const facts = await boundary.endRun(run);
    assert.equal(facts.length, 1);
    assert.equal((await boundary.exportRun(run.runId)).records.length, 1);

    const sent = fixture.endpoint.commands();
    const evals = sent.filter((c) => c[0] === "eval");
    const bySource = new Map(SCRIPTS.map((script) => [keyLockingSource(script), script]));
    const sentNames = evals.map((command) => {
      const script = bySource.get(command[1]!);
      assert.ok(script, "an EVAL of a flagged script source");
      const line = command[1]!.slice(0, command[1]!.indexOf("\n") + 1);
      assert.equal(line, script.readOnly ? READ_ONLY_LINE : FLAG_LINE, script.name);
      return script.name;
    });
    assert.deepEqual(
      new Set(sentNames),
      new Set(SCRIPTS.map((script) => script.name)),
      "every script was sent once",
    );
    assert.equal(sentNames.length, SCRIPTS.length);
    assert.equal(KEY_LOCKING_SHEBANG, FLAG_LINE);
    assert.equal(KEY_LOCKING_READ_ONLY_SHEBANG, READ_ONLY_LINE);
    assert.deepEqual(
      SCRIPTS.filter((script) => script.readOnly).map((script) => script.name),
      ["getRun", "get", "readFacts", "lookupCall", "readCalls", "readRecords"],
    );
    const shas = new Set(await Promise.all([...bySource.keys()].map(sha1Hex)));
    for (const command of sent.filter((c) => c[0] === "evalsha")) {
      assert.ok(shas.has(command[1]!), "an EVALSHA of a flagged source");
    }

    // redis-server ran the read-only scripts as no-writes scripts, the others unflagged.
    const ran = (await stopMonitor()).map(monitorArgs).filter((args) =>
      /^eval$/i.test(args[0] ?? "")
    );
    assert.equal(ran.length, SCRIPTS.length);
    for (const args of ran) {
      const name = /^(?:#!lua flags=no-writes\n)?-- (\w+)/.exec(args[1]!)?.[1];
      const script = SCRIPTS.find((s) => s.name === name);
      assert.ok(script, args[1]!.slice(0, 60));
      assert.equal(args[1]!.startsWith("#!lua flags=no-writes\n"), script.readOnly === true, name);
    }
  });
});

Deno.test("UpstashStore: without keyLocking no script carries a shebang; keyLocking must be a boolean", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis(), keyLocking: false });
    await startStoreRun(store, "run-plain", { calls: 10, ttlMs: 600_000 });
    const evals = fixture.endpoint.commands().filter((c) => c[0] === "eval");
    assert.deepEqual(evals.map((c) => c[1]!.split("\n")[0]), ["-- indexRun", "-- startRun"]);
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
  await withSharedUpstashFixture(async (fixture) => {
    const body = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])";
    const flagged = FLAG_LINE + body;
    const flaggedSha = await sha1Hex(flagged);
    const bodySha = await sha1Hex(body);

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

Deno.test("Upstash endpoint: a no-writes,allow-key-locking script keeps no-writes; its SHA maps, for EVAL, EVAL_RO and SCRIPT LOAD", async () => {
  await withSharedUpstashFixture(async (fixture) => {
    const read = "return redis.call('GET', KEYS[1])";
    const write = "redis.call('SET', KEYS[1], ARGV[1]); return 1";
    assert.equal(await fixture.direct(["SET", "k", "v0"]), "OK");
    for (const line of [READ_ONLY_LINE, "#!lua flags=allow-key-locking,no-writes\n"]) {
      await fixture.direct(["SCRIPT", "FLUSH"]);
      const flagged = line + read;
      const flaggedSha = await sha1Hex(flagged);
      const passedSha = await sha1Hex(`#!lua flags=no-writes\n${read}`);

      const missing = await post(fixture, "/", ["EVALSHA", flaggedSha, 1, "k"]);
      assert.match((missing.body as { error: string }).error, /^NOSCRIPT/);
      assert.deepEqual(await post(fixture, "/", ["EVAL", flagged, 1, "k"]), {
        status: 200,
        body: { result: "v0" },
      });
      // redis-server holds the no-writes script, under the SHA of what was passed on.
      assert.deepEqual(await fixture.direct(["SCRIPT", "EXISTS", passedSha, flaggedSha]), [1, 0]);
      for (const name of ["EVALSHA", "EVALSHA_RO", "evalsha_ro"]) {
        assert.deepEqual(await post(fixture, "/", [name, flaggedSha, 1, "k"]), {
          status: 200,
          body: { result: "v0" },
        }, name);
      }
      assert.deepEqual(await post(fixture, "/", ["SCRIPT", "EXISTS", flaggedSha]), {
        status: 200,
        body: { result: [1] },
      });

      await fixture.direct(["SCRIPT", "FLUSH"]);
      assert.deepEqual(await post(fixture, "/", ["EVAL_RO", flagged, 1, "k"]), {
        status: 200,
        body: { result: "v0" },
      });
      assert.deepEqual(await post(fixture, "/", ["EVALSHA", flaggedSha, 1, "k"]), {
        status: 200,
        body: { result: "v0" },
      });
      await fixture.direct(["SCRIPT", "FLUSH"]);
      assert.deepEqual(await post(fixture, "/", ["SCRIPT", "LOAD", flagged]), {
        status: 200,
        body: { result: flaggedSha },
      });
      assert.deepEqual(await post(fixture, "/", ["EVALSHA", flaggedSha, 1, "k"]), {
        status: 200,
        body: { result: "v0" },
      });

      // no-writes still holds: a write in such a script is refused, and nothing is written.
      const refused = await post(fixture, "/", ["EVAL", line + write, 1, "k", "w"]);
      assert.equal(refused.status, 400);
      assert.match((refused.body as { error: string }).error, /Write commands are not allowed/);
      assert.equal(await fixture.direct(["GET", "k"]), "v0");
    }
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
  assert.equal(
    stripKeyLocking("#!lua flags=allow-key-locking,no-writes\nreturn 1"),
    "#!lua flags=no-writes\nreturn 1",
  );
  assert.equal(stripKeyLocking("#!lua flags=no-writes\nreturn 1"), null);
  assert.equal(stripKeyLocking("#!lua\nreturn 1"), null);
  assert.equal(stripKeyLocking("return 1 -- #!lua flags=allow-key-locking"), null);
  assert.equal(stripKeyLocking(`-- x\n${FLAG_LINE}return 1`), null);
});
