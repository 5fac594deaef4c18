/**
 * The Upstash-compatible test endpoint speaks the protocol the client expects: auth, one
 * command, pipeline, multi-exec, base64 at every depth, error statuses, fault injection.
 */
import assert from "node:assert/strict";
import { startUpstashFixture, type UpstashFixture } from "./support/upstash_fixture.ts";

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
