import assert from "node:assert/strict";
import {
  isRunTokenForm,
  newSessionId,
  Signer,
  signRunToken,
  verifyRunToken,
  verifySessionId,
} from "../../src/hono/run_token.ts";

const SECRET = "server-secret-0123456789abcdef-0123";
const signer = new Signer(SECRET);

Deno.test("a run token names its run, the run's start and its deadline and is accepted until then, not at or after it", async () => {
  const token = await signRunToken(signer, { runId: "run-1", startedAt: 1_000, exp: 2_000 });
  assert.match(token, /^tbr\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.equal(isRunTokenForm(token), true);
  assert.deepEqual(await verifyRunToken(signer, token, 1_999), {
    runId: "run-1",
    startedAt: 1_000,
    exp: 2_000,
  });
  assert.equal(await verifyRunToken(signer, token, 2_000), null);
  assert.equal(await verifyRunToken(signer, token, 3_000), null);
});

Deno.test("a run token with any character changed, another secret's, or of another form is refused", async () => {
  const token = await signRunToken(signer, { runId: "run-1", startedAt: 1_000, exp: 2_000 });
  const [prefix, payload, mac] = token.split(".") as [string, string, string];
  const encode = (claims: unknown) => btoa(JSON.stringify(claims)).replace(/=+$/, "");
  const forgedPayload = encode({ runId: "run-2", startedAt: 1_000, exp: 2_000 });
  const forgedStart = encode({ runId: "run-1", startedAt: 999, exp: 2_000 });
  const flip = (text: string, i: number) =>
    text.slice(0, i) + (text[i] === "A" ? "B" : "A") + text.slice(i + 1);
  const refused = [
    `${prefix}.${forgedPayload}.${mac}`,
    `${prefix}.${forgedStart}.${mac}`,
    `${prefix}.${payload}.${flip(mac, 5)}`,
    `${prefix}.${flip(payload, 3)}.${mac}`,
    `${prefix}.${payload}.${mac}x`,
    `${prefix}.${payload}`,
    `tbx.${payload}.${mac}`,
    `${token}.extra`,
    await signRunToken(new Signer(`${SECRET}-other`), {
      runId: "run-1",
      startedAt: 1_000,
      exp: 2_000,
    }),
    "tbr.%%%.abc",
    "",
  ];
  for (const candidate of refused) {
    assert.equal(await verifyRunToken(signer, candidate, 1_000), null, candidate);
  }
});

Deno.test("a session ID is valid only for the run it was issued on, and two are never equal", async () => {
  const first = await newSessionId(signer, "run-1");
  const second = await newSessionId(signer, "run-1");
  assert.notEqual(first, second);
  assert.match(first, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
  assert.equal(await verifySessionId(signer, first, "run-1"), true);
  assert.equal(await verifySessionId(signer, first, "run-2"), false);
  assert.equal(await verifySessionId(new Signer(`${SECRET}-other`), first, "run-1"), false);
  assert.equal(
    await verifySessionId(signer, `${first.slice(0, -1)}A`, "run-1"),
    first.endsWith("A"),
  );
  assert.equal(await verifySessionId(signer, "abc", "run-1"), false);
});

Deno.test("a session ID's MAC is no run token, and a run token's MAC no session", async () => {
  const token = await signRunToken(signer, { runId: "run-1", startedAt: 1_000, exp: 2_000 });
  const session = await newSessionId(signer, "run-1");
  const [random, mac] = session.split(".") as [string, string];
  assert.equal(await verifyRunToken(signer, `tbr.${random}.${mac}`, 1_000), null);
  const [, payload, tokenMac] = token.split(".") as [string, string, string];
  assert.equal(await verifySessionId(signer, `${payload}.${tokenMac}`, "run-1"), false);
});

Deno.test("a server secret shorter than 32 characters is refused", () => {
  assert.throws(() => new Signer("x".repeat(31)), TypeError);
  new Signer("x".repeat(32));
});

Deno.test("a genuinely signed run token without a whole-ms start is refused", async () => {
  for (const startedAt of [undefined, null, "1000", 1_000.5, Number.MAX_SAFE_INTEGER + 2]) {
    const payload = btoa(JSON.stringify({ runId: "run-1", startedAt, exp: 2_000 }))
      .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    const signed = `tbr.${payload}`;
    const token = `${signed}.${await signer.mac(signed)}`;
    assert.equal(await verifyRunToken(signer, token, 1_000), null, String(startedAt));
  }
});
