/**
 * The Upstash-compatible test endpoint speaks the protocol the client expects: auth, one
 * command, pipeline, multi-exec, base64 at every depth, error statuses, fault injection. And a
 * shared fixture hands each test the module's redis-server as empty as a fresh one.
 */
import assert from "node:assert/strict";
import { RespStatus } from "../support/resp.ts";
import { RoundTripDelay } from "../support/round_trip.ts";
import {
  startSharedUpstashFixture,
  startUpstashFixture,
  type UpstashFixture,
} from "../support/upstash_fixture.ts";

async function post(
  fixture: UpstashFixture,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${fixture.endpoint.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${fixture.endpoint.token}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

Deno.test("Upstash endpoint: REST protocol, base64 at every depth, errors and faults", async () => {
  const fixture = await startUpstashFixture();
  try {
    const b64 = { "Upstash-Encoding": "base64" };
    const enc = (text: string) => btoa(text);

    const unauthorized = await fetch(fixture.endpoint.url, {
      method: "POST",
      headers: { authorization: "Bearer wrong" },
      body: '["PING"]',
    });
    assert.equal(unauthorized.status, 401);
    assert.ok("error" in await unauthorized.json());

    assert.deepEqual(await post(fixture, "/", ["SET", "k", "日本", "PX", 60000]), {
      status: 200,
      body: { result: "OK" },
    });
    assert.deepEqual(await post(fixture, "/", ["GET", "k"]), {
      status: 200,
      body: { result: "日本" },
    });
    assert.deepEqual(await post(fixture, "/", ["RPUSH", "l", "a", 1, true]), {
      status: 200,
      body: { result: 3 },
    });
    assert.deepEqual(await post(fixture, "/", ["EVAL", "return {'x', {'y', 7}, false}", 0], b64), {
      status: 200,
      body: { result: [enc("x"), [enc("y"), 7], null] },
    });
    const wrong = await post(fixture, "/", ["LPOP", "k"]);
    assert.equal(wrong.status, 400);
    assert.match((wrong.body as { error: string }).error, /^WRONGTYPE/);

    assert.deepEqual(
      await post(fixture, "/pipeline", [["INCR", "n"], ["LPOP", "k"], ["GET", "k"]], b64),
      {
        status: 200,
        body: [
          { result: 1 },
          { error: "WRONGTYPE Operation against a key holding the wrong kind of value" },
          { result: enc(String.fromCharCode(...new TextEncoder().encode("日本"))) },
        ],
      },
    );
    assert.deepEqual(await post(fixture, "/multi-exec", [["INCR", "n"], ["INCR", "n"]]), {
      status: 200,
      body: [{ result: 2 }, { result: 3 }],
    });
    const aborted = await post(fixture, "/multi-exec", [["INCR", "n"], ["NOSUCHCOMMAND"]]);
    assert.equal(aborted.status, 400);
    assert.equal(await fixture.direct(["GET", "n"]), "3", "a discarded transaction ran nothing");

    // Through the client: base64 responses, pipelines and transactions decode exactly.
    const redis = fixture.createRedis({ automaticDeserialization: false });
    assert.equal(await redis.get("k"), "日本");
    const tx = redis.multi();
    tx.incr("n");
    tx.lrange("l", 0, -1);
    assert.deepEqual(await tx.exec(), [4, ["a", "1", "true"]]);

    // Faults: 5xx without running, dropped answers after running, delays.
    fixture.endpoint.reset();
    fixture.endpoint.failNext(2, 502);
    assert.equal((await post(fixture, "/", ["INCR", "n"])).status, 502);
    assert.equal((await post(fixture, "/", ["INCR", "n"])).status, 502);
    assert.equal(await fixture.direct(["GET", "n"]), "4", "failed requests did not run");
    // Deno's fetch itself resends once when a reused keep-alive connection closes unanswered;
    // two drops make it throw either way.
    const before = fixture.endpoint.requests;
    fixture.endpoint.dropNext(2);
    await assert.rejects(post(fixture, "/", ["INCR", "n"]), TypeError);
    const sent = fixture.endpoint.requests - before;
    fixture.endpoint.dropNext(0);
    assert.ok(sent === 1 || sent === 2, `sent ${sent}`);
    assert.equal(await fixture.direct(["GET", "n"]), String(4 + sent), "each dropped request ran");
    fixture.endpoint.setDelay(150);
    const started = Date.now();
    assert.equal((await post(fixture, "/", ["PING"])).status, 200);
    assert.ok(Date.now() - started >= 140);
    fixture.endpoint.setDelay(0);
    assert.equal(fixture.endpoint.requests, 3 + sent);
    assert.deepEqual(
      fixture.endpoint.commands().map((c) => c[0]),
      [...Array(sent).fill("INCR"), "PING"],
      "requests answered with an injected 5xx ran nothing and are not in the log",
    );

    // Redis gone: 5xx; back after a restart.
    await fixture.server.kill();
    assert.equal((await post(fixture, "/", ["PING"])).status, 503);
    await fixture.server.restart();
    assert.deepEqual(await post(fixture, "/", ["GET", "n"]), {
      status: 200,
      body: { result: null },
    });
  } finally {
    await fixture.stop();
  }
});

Deno.test("the endpoint's round trip: no hold ends before its deadline, and overlapping holds end in deadline order", async () => {
  const delay = new RoundTripDelay();
  const ended: number[] = [];
  const early: number[] = [];
  // Holds of 1 to 12 ms started together, as concurrent requests start them.
  const holds = Array.from({ length: 60 }, (_, i) => {
    const ms = 1 + ((i * 7) % 12);
    const deadline = performance.now() + ms;
    return delay.hold(ms).then(() => {
      if (performance.now() < deadline) early.push(i);
      ended.push(deadline);
    });
  });
  await Promise.all(holds);
  assert.deepEqual(early, [], "holds that ended before their deadline");
  assert.equal(ended.length, 60);
  // Released in the order of their deadlines, whatever the order they were started in (the
  // hold reads the clock a few microseconds after the test did: deadlines that close may swap).
  const outOfOrder = ended.filter((deadline, k) => k > 0 && deadline < ended[k - 1]! - 0.05);
  assert.deepEqual(outOfOrder, []);
  assert.ok(delay.lateness >= 0 && delay.lateness <= 5, `lateness ${delay.lateness}`);
  // 0 and less resolve at once, in the same turn as a resolved promise would.
  let zero = false;
  void delay.hold(0).then(() => (zero = true));
  await Promise.resolve();
  assert.equal(zero, true);
  // One after another (the benchmarks' case): every hold ends at or after its deadline.
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    await delay.hold(2);
    assert.ok(performance.now() - started >= 2);
  }
});

Deno.test("Upstash endpoint: concurrent large commands reach redis-server whole, each with its own reply", async () => {
  const fixture = await startUpstashFixture();
  try {
    // Each value is larger than one socket write, so unserialized writes would interleave.
    const size = 2 * 1024 * 1024;
    const values = Array.from({ length: 8 }, (_, i) => String.fromCharCode(97 + i).repeat(size));
    const answers = await Promise.all(
      values.map((value, i) => post(fixture, "/", ["SET", `big:${i}`, value])),
    );
    assert.deepEqual(answers, values.map(() => ({ status: 200, body: { result: "OK" } })));
    for (let i = 0; i < values.length; i++) {
      assert.equal(await fixture.direct(["STRLEN", `big:${i}`]), size);
      assert.equal(
        await fixture.direct(["GETRANGE", `big:${i}`, "0", "3"]),
        values[i]!.slice(0, 4),
      );
      assert.equal(
        await fixture.direct(["GETRANGE", `big:${i}`, String(size - 4), "-1"]),
        values[i]!.slice(0, 4),
      );
    }
  } finally {
    await fixture.stop();
  }
});

Deno.test("Upstash endpoint: a request over the max request size runs nothing and gets Upstash's error reply, once", async () => {
  const limit = 1024;
  const fixture = await startUpstashFixture({ maxRequestBytes: limit });
  try {
    const tooLarge = /^ERR max request size exceeded\. Limit: 1024 bytes, Actual: (\d+) bytes\./;
    // A body of exactly the limit runs.
    const fits = ["SET", "fits", ""];
    fits[2] = "v".repeat(limit - JSON.stringify(fits).length);
    assert.equal(JSON.stringify(fits).length, limit);
    assert.deepEqual(await post(fixture, "/", fits), { status: 200, body: { result: "OK" } });

    // One byte more does not, single command or pipeline.
    const over = ["SET", "over", fits[2] + "v"];
    const single = await post(fixture, "/", over);
    assert.equal(single.status, 400);
    const match = tooLarge.exec((single.body as { error: string }).error);
    assert.ok(match, JSON.stringify(single.body));
    assert.equal(Number(match[1]), limit + 1);
    const pipeline = await post(fixture, "/pipeline", [["INCR", "n"], over]);
    assert.equal(pipeline.status, 400);
    assert.match((pipeline.body as { error: string }).error, tooLarge);

    // A chunked body is counted the same way.
    const body = new TextEncoder().encode(JSON.stringify(["SET", "chunked", "c".repeat(3000)]));
    const chunked = await fetch(fixture.endpoint.url, {
      method: "POST",
      headers: { authorization: `Bearer ${fixture.endpoint.token}` },
      body: new ReadableStream({
        start(controller) {
          for (let at = 0; at < body.length; at += 700) {
            controller.enqueue(body.subarray(at, at + 700));
          }
          controller.close();
        },
      }),
    });
    assert.equal(chunked.status, 400);
    const chunkedMatch = tooLarge.exec((await chunked.json()).error);
    assert.equal(Number(chunkedMatch?.[1]), body.length);

    assert.equal(await fixture.direct(["EXISTS", "over", "n", "chunked"]), 0, "nothing ran");
    assert.deepEqual(fixture.endpoint.commands(), [["SET", "fits", fits[2]]], "only what ran");
    // The connection stays usable after the refusal.
    assert.deepEqual(await post(fixture, "/", ["GET", "fits"]), {
      status: 200,
      body: { result: fits[2] },
    });

    // The client gets an error at once: one request, no retry.
    const redis = fixture.createRedis();
    fixture.endpoint.reset();
    await assert.rejects(redis.set("client", "x".repeat(2 * limit)), (error: Error) => {
      assert.equal(error.name, "UpstashError");
      assert.match(error.message, /^ERR max request size exceeded\. Limit: 1024 bytes/);
      return true;
    });
    assert.equal(fixture.endpoint.requests, 1);
    assert.equal(await fixture.direct(["EXISTS", "client"]), 0);
  } finally {
    await fixture.stop();
  }
});

Deno.test("a shared fixture gets the module's redis-server as a fresh one: no keys in any database, no scripts, no other client", async () => {
  const first = await startSharedUpstashFixture();
  const port = first.server.port;
  const leftover = await first.server.connect();
  let sha: unknown;
  try {
    await first.createRedis().set("k", "v");
    await first.direct(["SELECT", "3"]);
    await first.direct(["SET", "k3", "v"]);
    sha = await first.direct(["SCRIPT", "LOAD", "return 1"]);
    // A client the test left open, with a write queued that its EXEC would make.
    assert.deepEqual(await leftover.command(["MULTI"]), new RespStatus("OK"));
    assert.deepEqual(await leftover.command(["SET", "late", "1"]), new RespStatus("QUEUED"));
  } finally {
    await first.stop();
  }
  const second = await startSharedUpstashFixture();
  try {
    assert.equal(second.server.port, port, "the same redis-server");
    assert.equal(await second.direct(["DBSIZE"]), 0);
    await second.direct(["SELECT", "3"]);
    assert.equal(await second.direct(["DBSIZE"]), 0);
    await second.direct(["SELECT", "0"]);
    assert.deepEqual(await second.direct(["SCRIPT", "EXISTS", String(sha)]), [0]);
    // The client left open was disconnected before the flush: its transaction never runs.
    await assert.rejects(leftover.command(["EXEC"]));
    assert.equal(await second.direct(["EXISTS", "late"]), 0);
    const clients = String(await second.direct(["CLIENT", "LIST"])).trim().split("\n");
    assert.equal(clients.length, 2, "the fixture's own connection and the one that emptied it");
    assert.equal(await second.createRedis().get("k"), null);
    // The server's process is not the fixture's to stop.
    assert.throws(() => second.server.pause(), /shared redis-server/);
    await assert.rejects(second.server.restart(), /shared redis-server/);
    // Taken while another holds it: a redis-server of its own, its process the fixture's.
    const other = await startSharedUpstashFixture();
    try {
      assert.notEqual(other.server.port, port);
      await other.createRedis().set("other", "1");
      other.server.pause();
      other.server.resume();
      assert.equal(await other.direct(["DBSIZE"]), 1);
    } finally {
      await other.stop();
    }
    assert.equal(await second.direct(["EXISTS", "other"]), 0);
  } finally {
    await second.stop();
    await leftover.close();
  }
});

Deno.test("a shared fixture that leaves the server's settings changed fails its stop, and the next gets a new server", async () => {
  const changed = await startSharedUpstashFixture();
  const port = changed.server.port;
  assert.equal(await changed.direct(["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]), "OK");
  await assert.rejects(changed.stop(), /settings changed/);
  const next = await startSharedUpstashFixture();
  try {
    assert.notEqual(next.server.port, port);
    assert.deepEqual(await next.direct(["CONFIG", "GET", "maxmemory-policy"]), [
      "maxmemory-policy",
      "noeviction",
    ]);
    // A user's rules count as settings too.
    assert.equal(await next.direct(["ACL", "SETUSER", "default", "-hset"]), "OK");
  } finally {
    await assert.rejects(next.stop(), /settings changed/);
  }
  const after = await startSharedUpstashFixture();
  try {
    assert.equal(await after.direct(["HSET", "h", "f", "v"]), 1);
  } finally {
    await after.stop();
  }
});

Deno.test("a shared fixture stopped twice releases the server once: the one that took it next keeps it alone", async () => {
  const first = await startSharedUpstashFixture();
  await first.stop();
  const holder = await startSharedUpstashFixture();
  try {
    await first.stop();
    const next = await startSharedUpstashFixture();
    try {
      assert.notEqual(next.server.port, holder.server.port);
    } finally {
      await next.stop();
    }
  } finally {
    await holder.stop();
  }
});
