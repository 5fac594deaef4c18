/**
 * The gopher-lua engine of the tests (`tests/support/gopher_lua/main.go`): it converts between
 * Lua and Redis as redis-server does (each probe script answers the same on both engines), runs
 * a script atomically, handles the script commands and the `#!lua` line as redis-server 7.0 does,
 * and really runs the store's scripts (redis-server's own Lua never sees one). The differences
 * of the VM itself that the store's scripts avoid are pinned here too (docs/upstash.md, "Under
 * gopher-lua").
 */
import assert from "node:assert/strict";
import { defineTool, ToolBoundary } from "../../src/mod.ts";
import { UpstashStore } from "../../src/upstash/mod.ts";
import { SCRIPTS } from "../../src/upstash/scripts.ts";
import { startGopherLua } from "../support/gopher_lua.ts";
import { startRedisServer } from "../support/redis_server.ts";
import { type RespConnection, RespError, RespStatus, type RespValue } from "../support/resp.ts";
import { withUpstashFixture } from "../support/upstash_fixture.ts";
import { sha1Hex } from "../support/sha1.ts";

/** A reply as comparable data; an error's text without what follows " script: ". */
function plain(reply: RespValue): unknown {
  if (reply instanceof Uint8Array) return new TextDecoder().decode(reply);
  if (reply instanceof RespStatus) return { status: reply.text };
  if (reply instanceof RespError) return { error: reply.text.split(" script: ")[0] };
  if (Array.isArray(reply)) return reply.map(plain);
  return reply;
}

/**
 * A redis-server and the gopher-lua engine in front of it, one connection to each, and a way to
 * open more connections to the engine.
 */
async function withEngines(
  fn: (
    redis: RespConnection,
    gopher: RespConnection,
    connectGopher: () => Promise<RespConnection>,
  ) => Promise<void>,
): Promise<void> {
  const server = await startRedisServer();
  const engine = await startGopherLua(server.port).catch(async (error) => {
    await server.stop();
    throw error;
  });
  const redis = await server.connect();
  const gopher = await engine.connect();
  try {
    await fn(redis, gopher, () => engine.connect());
  } finally {
    await gopher.close();
    await redis.close();
    await engine.stop();
    await server.stop();
  }
}

/** Scripts whose replies must be the same on both engines: [name, source, keys, args]. */
const PROBES: [string, string, string[], string[]][] = [
  ["numbers truncate", "return {1, 2.7, -2.7, 0.5, -0.5, 1e15}", [], []],
  ["an array stops at its first nil", "return {1, 'two', nil, 4}", [], []],
  ["false is nil, true is 1", "return {false, true, 'x'}", [], []],
  ["nil", "return nil", [], []],
  ["false", "return false", [], []],
  ["true", "return true", [], []],
  ["a string", "return 'plain \\0 bytes \\255'", [], []],
  ["a number", "return 42.9", [], []],
  [
    "status and error tables",
    "return {{ok='FINE'}, {err='MYERR went wrong'}, {1, {2, {3}}}}",
    [],
    [],
  ],
  ["a status reply", "return redis.status_reply('DONE')", [], []],
  ["an error reply", "return redis.error_reply('MYERR it failed')", [], []],
  ["an error table", "return {err='CODE some text'}", [], []],
  [
    "redis.call replies",
    `redis.call('DEL', KEYS[1], KEYS[2])
     redis.call('HSET', KEYS[1], 'a', '1', 'b', '')
     redis.call('RPUSH', KEYS[2], 'x', 'y')
     local h = redis.call('HMGET', KEYS[1], 'a', 'missing', 'b')
     local s = redis.call('SET', KEYS[3], 'v')
     return {h[1], type(h[2]), tostring(h[2]), h[3], type(s), s.ok,
       type(redis.call('GET', 'missing')), redis.call('HLEN', KEYS[1]),
       redis.call('LRANGE', KEYS[2], 0, -1), redis.call('PING')}`,
    ["{p}h", "{p}l", "{p}s"],
    [],
  ],
  [
    "a number argument keeps its digits",
    `redis.call('SET', KEYS[1], 0.1) local a = redis.call('GET', KEYS[1])
     redis.call('SET', KEYS[1], 1e21) local b = redis.call('GET', KEYS[1])
     redis.call('SET', KEYS[1], 9007199254740991) local c = redis.call('GET', KEYS[1])
     redis.call('SET', KEYS[1], -17) local d = redis.call('GET', KEYS[1])
     return {a, b, c, d}`,
    ["n"],
    [],
  ],
  [
    "redis.pcall gives an error table",
    `redis.call('SET', KEYS[1], 'text')
     local r = redis.pcall('INCR', KEYS[1])
     return {type(r), r.err}`,
    ["t"],
    [],
  ],
  [
    "a redis.call error fails the script",
    "redis.call('SET', KEYS[1], 'x') return redis.call('INCR', KEYS[1])",
    ["t"],
    [],
  ],
  ["a wrong argument to redis.call", "return redis.pcall('GET', {})", [], []],
  ["redis.call without a command", "return redis.pcall()", [], []],
  ["a script error", "error('boom')", [], []],
  ["a global read", "return undefined_global", [], []],
  ["a global write", "x = 1 return x", [], []],
  ["a command not allowed in scripts", "return redis.pcall('WAIT', 0, 0)", [], []],
  ["an unknown command", "return redis.pcall('NOSUCHCOMMAND')", [], []],
  ["KEYS and ARGV", "return {#KEYS, #ARGV, KEYS[1], ARGV[1], ARGV[2]}", ["k1"], ["a1", "a2"]],
  [
    "cjson.encode",
    `return {
       cjson.encode({'OK', false, 'a/b"\\\\', 1.5, 123456789012345, 0.1, -3}),
       cjson.encode(string.char(0, 1, 8, 9, 10, 12, 13, 31, 32, 127, 200, 255)),
       cjson.encode({}), cjson.encode({a = 'x'}), cjson.encode({[1] = 'a', [3] = 'c'}),
       cjson.encode({{}, {{}}}), cjson.encode(true), cjson.encode(cjson.null)}`,
    [],
    [],
  ],
  ["cjson.encode of a sparse array", "return cjson.encode({[20] = 1})", [], []],
  ["cjson.encode of a function", "return cjson.encode({type})", [], []],
  ["cjson.encode of NaN", "return cjson.encode(0/0)", [], []],
  [
    "cjson.decode",
    `local t = cjson.decode('[ "a", "\\\\u00e9\\\\ud83d\\\\ude00\\\\n", 1.5, true, false, null, {"k": "v", "1": "one"}, [] ]')
     return {t[1], t[2], tostring(t[3]), tostring(t[4]), tostring(t[5]), tostring(t[6] == cjson.null),
       t[7].k, t[7]['1'], tostring(t[7][1]), #t[8], #t}`,
    [],
    [],
  ],
  [
    "cjson.decode of a lone surrogate",
    "return tostring((pcall(cjson.decode, '\"\\\\ud800\"')))",
    [],
    [],
  ],
  ["cjson.decode of bad JSON", "return tostring((pcall(cjson.decode, '[1,')))", [], []],
  [
    "cjson round trip",
    "return cjson.encode(cjson.decode(ARGV[1]))",
    [],
    ['["x","\\u0000\\u001f","\\ud83d\\ude00","日本",null,[],{}]'],
  ],
  ["redis.sha1hex", "return redis.sha1hex('abc')", [], []],
  [
    "string and table functions the store's scripts use",
    `local a, d = string.match('12:att:em:pt:dig', '^%d+:(.*):([^:]*)$')
     local t = {'b', 'c'}
     table.insert(t, 1, 'a')
     local u = {unpack({'x', 'y', 'z'}, 2, 3)}
     return {a, d, string.find('id r123', ' ', 1, true), string.byte('id r1', 4), string.sub('c:id', 3),
       string.format('%d', 1765000000000 + 1), tostring(#t), t[1], u[1], u[2],
       tostring(math.min(3, 2)), tostring(math.floor(2.9)), tostring(math.huge > 1e308)}`,
    [],
    [],
  ],
  ["no-writes refuses a write", "#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], 'v')", [
    "w",
  ], []],
  ["no-writes reads", "#!lua flags=no-writes\nreturn redis.call('EXISTS', KEYS[1])", ["w"], []],
  ["Redis flags pass", "#!lua flags=allow-oom,allow-stale,no-cluster\nreturn 7", [], []],
  ["no flags", "#!lua\nreturn 8", [], []],
  ["an unknown flag", "#!lua flags=allow-key-locking\nreturn 1", [], []],
  ["another engine", "#!python\nreturn 1", [], []],
  ["an unknown option", "#!lua name=x\nreturn 1", [], []],
  ["a shebang keeps line numbers", "#!lua\n\nerror('line three')", [], []],
];

Deno.test("gopher-lua engine: every probe script answers as on redis-server (conversions, cjson, errors, flags)", async () => {
  await withEngines(async (redis, gopher) => {
    const differ: unknown[] = [];
    for (const [name, source, keys, args] of PROBES) {
      const command = ["EVAL", source, String(keys.length), ...keys, ...args];
      const expected = plain(await redis.command(command));
      const actual = plain(await gopher.command(command));
      try {
        assert.deepEqual(actual, expected);
      } catch {
        differ.push({ name, redis: expected, gopher: actual });
      }
    }
    assert.deepEqual(differ, []);
    // EVAL_RO refuses writes, also in a script without flags.
    const readOnly = ["EVAL_RO", "return redis.call('SET', KEYS[1], 'v')", "1", "k"];
    const refused = await gopher.command(readOnly);
    assert.ok(refused instanceof RespError, "EVAL_RO wrote");
    assert.deepEqual(plain(refused), plain(await redis.command(readOnly)));
  });
});

/**
 * What the VM itself does differently from redis-server's Lua 5.1: [expression, its text on
 * redis-server, its text on gopher-lua]. The store's scripts never depend on any of these (see
 * docs/upstash.md, "Under gopher-lua"); the rows that agree show where the scripts stay.
 */
const VM: [string, string, string][] = [
  // tonumber reads decimal integers within int64 and decimals with a point; nothing else.
  ["tonumber('1765000000000')", "1765000000000", "1765000000000"],
  ["tonumber('-17')", "-17", "-17"],
  ["tonumber('2.5')", "2.5", "2.5"],
  ["tonumber('')", "nil", "nil"],
  ["tonumber('1e3')", "1000", "nil"],
  ["tonumber('5e-7')", "5e-07", "nil"],
  ["tonumber('10\\r')", "10", "nil"],
  ["tonumber('99999999999999999999')", "1e+20", "nil"],
  ["tonumber('-0')", "-0", "0"],
  // A number as text: %.14g on Lua 5.1; every digit of an integer, and Go's shortest form.
  ["99999999999999", "99999999999999", "99999999999999"],
  ["1e15", "1e+15", "1000000000000000"],
  ["2^53", "9.007199254741e+15", "9007199254740992"],
  ["1/3", "0.33333333333333", "0.3333333333333333"],
  ["'' .. 1e15", "1e+15", "1000000000000000"],
  ["string.format('%d', 2^53)", "9007199254740992", "9007199254740992"],
  ["string.format('%d', 1765000000000 + 1)", "1765000000001", "1765000000001"],
  // math.huge is the largest float, not infinity.
  ["math.huge", "inf", "1.7976931348623157e+308"],
  ["math.huge > 2^1023", "true", "true"],
];

Deno.test("gopher-lua engine: the VM's own differences from Lua 5.1, which the store's scripts avoid", async () => {
  await withEngines(async (redis, gopher) => {
    for (const [expression, onRedis, onGopher] of VM) {
      const command = ["EVAL", `return tostring(${expression})`, "0"];
      assert.equal(plain(await redis.command(command)), onRedis, `${expression} on redis-server`);
      assert.equal(plain(await gopher.command(command)), onGopher, `${expression} on gopher-lua`);
    }
    // The VM's own error texts differ; the codes and positions agree.
    for (
      const [source, prefix] of [["return 1 + nil", "ERR user_script:1: "], [
        "return (",
        "ERR Error compiling script (new function): ",
      ]] as const
    ) {
      const [onRedis, onGopher] = [
        await redis.command(["EVAL", source, "0"]),
        await gopher.command(["EVAL", source, "0"]),
      ];
      assert.ok(onRedis instanceof RespError && onGopher instanceof RespError, source);
      assert.ok(onRedis.text.startsWith(prefix), onRedis.text);
      assert.ok(onGopher.text.startsWith(prefix), onGopher.text);
      assert.notEqual(plain(onGopher), plain(onRedis), source);
    }
  });
});

Deno.test("gopher-lua engine: SCRIPT LOAD, EXISTS, FLUSH, EVALSHA and NOSCRIPT as on redis-server", async () => {
  await withEngines(async (redis, gopher) => {
    const source = "return ARGV[1] .. '!'";
    for (const conn of [redis, gopher]) {
      const sha = plain(await conn.command(["SCRIPT", "LOAD", source])) as string;
      assert.match(sha, /^[0-9a-f]{40}$/);
      assert.deepEqual(plain(await conn.command(["EVALSHA", sha, "0", "hi"])), "hi!");
      assert.deepEqual(plain(await conn.command(["EVALSHA", sha.toUpperCase(), "0", "x"])), "x!");
      assert.deepEqual(plain(await conn.command(["EVALSHA_RO", sha, "0", "ro"])), "ro!");
      assert.deepEqual(plain(await conn.command(["SCRIPT", "EXISTS", sha, "0".repeat(40)])), [
        1,
        0,
      ]);
      assert.deepEqual(plain(await conn.command(["SCRIPT", "FLUSH"])), { status: "OK" });
      assert.deepEqual(plain(await conn.command(["EVALSHA", sha, "0", "x"])), {
        error: "NOSCRIPT No matching script. Please use EVAL.",
      });
      assert.deepEqual(plain(await conn.command(["SCRIPT", "EXISTS", sha])), [0]);
      // EVAL knows the script again by its SHA-1.
      assert.deepEqual(plain(await conn.command(["EVAL", source, "0", "y"])), "y!");
      assert.deepEqual(plain(await conn.command(["EVALSHA", sha, "0", "z"])), "z!");
    }
    for (
      const command of [
        ["EVAL", "return 1", "2", "k"],
        ["EVAL", "return 1", "-1"],
        ["EVAL", "return 1", "x"],
        ["EVAL", "return 1"],
        ["SCRIPT", "LOAD", "return ("],
      ]
    ) {
      const [expected, actual] = [await redis.command(command), await gopher.command(command)];
      assert.ok(expected instanceof RespError && actual instanceof RespError, command.join(" "));
      assert.equal(actual.text.split(":")[0], expected.text.split(":")[0], command.join(" "));
    }
  });
});

Deno.test("gopher-lua engine: a script is atomic against other scripts and plain commands; MULTI queues scripts", async () => {
  await withEngines(async (redis, gopher, connectGopher) => {
    // Read-modify-write in a script (no INCR): a lost update would show if anything interleaved.
    const bump = "local v = tonumber(redis.call('GET', KEYS[1]) or '0') " +
      "for i = 1, 2000 do end redis.call('SET', KEYS[1], string.format('%d', v + 1)) return v + 1";
    const conns = [gopher, ...await Promise.all([1, 2, 3].map(connectGopher))];
    try {
      await Promise.all(
        conns.map(async (conn, i) => {
          for (let n = 0; n < 50; n++) {
            const reply = i === 3
              ? await conn.command(["INCR", "counter"])
              : await conn.command(["EVAL", bump, "1", "counter"]);
            assert.equal(typeof reply, "number");
          }
        }),
      );
    } finally {
      for (const conn of conns.slice(1)) await conn.close();
    }
    assert.equal(plain(await redis.command(["GET", "counter"])), "200");

    // MULTI ... EXEC with a script inside, and EXECABORT for a command refused while queuing.
    const transaction = [
      ["MULTI"],
      ["EVAL", "return redis.call('INCR', KEYS[1])", "1", "tx"],
      ["INCR", "tx"],
      ["EXEC"],
    ];
    // Both reach the same redis-server: each starts from no key.
    await redis.command(["DEL", "tx"]);
    const expected = (await redis.commands(transaction)).map(plain);
    await redis.command(["DEL", "tx"]);
    assert.deepEqual((await gopher.commands(transaction)).map(plain), expected);
    const aborted = [["MULTI"], ["INCR", "tx"], ["NOSUCHCOMMAND"], ["GET"], ["EXEC"]];
    const refusals = (await redis.commands(aborted)).map((r) => r instanceof RespError);
    const replies = await gopher.commands(aborted);
    assert.deepEqual(replies.map((r) => r instanceof RespError), refusals);
    assert.match((replies[4] as RespError).text, /^EXECABORT/);
    assert.equal(plain(await redis.command(["GET", "tx"])), "2", "a discarded one ran nothing");
  });
});

Deno.test("gopher-lua engine: the store's scripts run on it; redis-server's Lua never gets one", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const tool = defineTool({
      name: "lookup",
      readOnly: true,
      execute: () => ({ found: true }),
      project: () => ({ evidence: "EVIDENCE_FOUND", scope: "s", content: { found: true } }),
    });
    const boundary = new ToolBoundary({ store, tools: [tool] });
    const stopMonitor = await fixture.monitor();
    const run = await boundary.startRun({ runId: "engine-run" });
    const result = await boundary.invoke(run, {
      toolCallId: "call_1",
      runId: run.runId,
      toolName: "lookup",
      input: {},
    });
    assert.equal(result.status, "READY");
    await boundary.endRun(run);
    const lines = await stopMonitor();
    const sent = fixture.endpoint.commands().map((command) => command[0]!.toUpperCase());
    assert.ok(sent.includes("EVALSHA") && sent.includes("EVAL"), sent.join(" "));
    // The scripts' commands reach redis-server from a plain client, never from its Lua.
    assert.ok(lines.some((line) => line.includes('"HMGET"')), "the scripts' commands ran");
    assert.ok(!lines.some((line) => / "EVAL(SHA)?(_RO)?" /i.test(line)), "no script reached it");
    assert.ok(!lines.some((line) => line.includes(" lua] ")), "redis-server's Lua ran nothing");
    const shas = await Promise.all(SCRIPTS.map((script) => sha1Hex(script.source)));
    assert.ok(
      (await fixture.direct(["SCRIPT", "EXISTS", ...shas]) as number[]).every((n) => n === 0),
      "redis-server holds none of the store's scripts",
    );
    const known = await fixture.createRedis().scriptExists(...shas);
    assert.ok(known.some((n) => n === 1), "the engine holds the scripts the run used");
  }, { engine: "gopher-lua" });
});

Deno.test("gopher-lua engine: without Go on PATH, the build fails naming the Debian packages", async () => {
  const cache = await Deno.makeTempDir({ prefix: "tool-boundary-no-go-" });
  try {
    const script = `import { gopherLuaBinary } from ${
      JSON.stringify(new URL("../support/gopher_lua.ts", import.meta.url).href)
    };
try { await gopherLuaBinary(); console.log("built"); } catch (error) { console.log(error.message); }`;
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--config", new URL("../../deno.dev.json", import.meta.url).pathname, script],
      env: { PATH: "/nonexistent", TMPDIR: cache },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    assert.match(text, /go was not found on PATH/, new TextDecoder().decode(output.stderr));
    assert.match(text, /apt-get install golang-go golang-github-yuin-gopher-lua-dev/);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("gopher-lua engine: a run of 3,000 tool budgets (HSET and HMGET of 2,000 fields at once through unpack) starts, reads and repeats", async () => {
  await withUpstashFixture(async (fixture) => {
    const store = new UpstashStore({ redis: fixture.createRedis() });
    const now = Date.now();
    const perTool: Record<string, number> = {};
    for (let i = 0; i < 3_000; i++) perTool[`tool_${i}`] = i + 1;
    const request = {
      runId: "wide-run",
      deadline: now + 600_000,
      budget: { calls: 5_000, perTool },
      ttlMs: 1_200_000,
      attemptId: "start-1",
      now,
    };
    assert.equal((await store.startRun(request)).ok, true);
    assert.deepEqual((await store.getRun("wide-run"))?.budget.perTool, perTool);
    const again = await store.startRun(request);
    assert.ok(again.ok);
    assert.deepEqual(again.run.budget.perTool, perTool);
  }, { engine: "gopher-lua" });
});
