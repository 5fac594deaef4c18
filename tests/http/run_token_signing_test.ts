import assert from "node:assert/strict";
import {
  isRunTokenForm,
  KNOWN_MACS,
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

Deno.test("a run token checked once is checked again at once, from the MAC the signer keeps, with the same answers", async () => {
  const fresh = new Signer(SECRET);
  const token = await signRunToken(new Signer(SECRET), {
    runId: "run-1",
    startedAt: 1_000,
    exp: 2_000,
  });
  // Signed elsewhere: the first check computes the MAC (a promise), the next ones do not.
  const first = verifyRunToken(fresh, token, 1_500);
  assert.ok(first instanceof Promise);
  const claims = { runId: "run-1", startedAt: 1_000, exp: 2_000 };
  assert.deepEqual(await first, claims);
  assert.equal(fresh.known, 1);
  const again = verifyRunToken(fresh, token, 1_600);
  assert.ok(!(again instanceof Promise));
  assert.deepEqual(again, claims);
  assert.ok(Object.isFrozen(again));
  // Another MAC on the kept text is refused at once; another text with the kept MAC is checked
  // by WebCrypto and refused.
  const [prefix, payload, mac] = token.split(".") as [string, string, string];
  const flip = (text: string, i: number) =>
    text.slice(0, i) + (text[i] === "A" ? "B" : "A") + text.slice(i + 1);
  assert.equal(verifyRunToken(fresh, `${prefix}.${payload}.${flip(mac, 7)}`, 1_600), null);
  const forged = btoa(JSON.stringify({ runId: "run-2", startedAt: 1_000, exp: 2_000 }))
    .replace(/=+$/, "");
  const other = verifyRunToken(fresh, `${prefix}.${forged}.${mac}`, 1_600);
  assert.ok(other instanceof Promise);
  assert.equal(await other, null);
  assert.equal(fresh.known, 1);
});

Deno.test("a kept run token is refused at its expiry and after, and its MAC is no longer kept", async () => {
  const kept = new Signer(SECRET);
  const token = await signRunToken(kept, { runId: "run-1", startedAt: 1_000, exp: 2_000 });
  assert.equal(kept.known, 1); // signed here: kept at once
  assert.deepEqual(verifyRunToken(kept, token, 1_999), {
    runId: "run-1",
    startedAt: 1_000,
    exp: 2_000,
  });
  assert.equal(verifyRunToken(kept, token, 2_000), null);
  assert.equal(kept.known, 0);
  // Past its expiry it is never admitted again, also when WebCrypto checks it anew.
  const checked = verifyRunToken(kept, token, 1_999);
  assert.ok(checked instanceof Promise);
  assert.equal((await checked)?.runId, "run-1");
  assert.equal(verifyRunToken(kept, token, 2_500), null);
  assert.equal(kept.known, 0);
});

Deno.test("a session ID issued or checked once is checked again at once, for its run only", async () => {
  const kept = new Signer(SECRET);
  const session = await newSessionId(kept, "run-1");
  assert.equal(verifySessionId(kept, session, "run-1"), true);
  const elsewhere = verifySessionId(kept, session, "run-2");
  assert.ok(elsewhere instanceof Promise);
  assert.equal(await elsewhere, false);
  const [random, mac] = session.split(".") as [string, string];
  assert.equal(
    verifySessionId(kept, `${random}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`, "run-1"),
    false,
  );
  // A signer that never saw it checks it with WebCrypto, and keeps it once found right.
  const other = new Signer(SECRET);
  const first = verifySessionId(other, session, "run-1");
  assert.ok(first instanceof Promise);
  assert.equal(await first, true);
  assert.equal(verifySessionId(other, session, "run-1"), true);
});

Deno.test("the signer keeps at most KNOWN_MACS MACs, the first kept leaving first, and never a wrong one", async () => {
  const kept = new Signer(SECRET);
  const texts = Array.from({ length: KNOWN_MACS + 1 }, (_, i) => `text-${i}`);
  const macs = [];
  for (const text of texts.slice(0, KNOWN_MACS)) macs.push(await kept.mac(text));
  assert.equal(kept.known, KNOWN_MACS);
  assert.equal(kept.verify(texts[0]!, macs[0]!), true);
  // One more: the first kept leaves, and is checked with WebCrypto again (then kept again, and
  // the second leaves).
  await kept.mac(texts[KNOWN_MACS]!);
  assert.equal(kept.known, KNOWN_MACS);
  const first = kept.verify(texts[0]!, macs[0]!);
  assert.ok(first instanceof Promise);
  assert.equal(await first, true);
  assert.equal(kept.known, KNOWN_MACS);
  assert.equal(kept.verify(texts[2]!, macs[2]!), true);
  const second = kept.verify(texts[1]!, macs[1]!);
  assert.ok(second instanceof Promise);
  assert.equal(await second, true);
  // A wrong MAC for a text not kept is refused and keeps nothing.
  const wrong = new Signer(SECRET);
  assert.equal(await wrong.verify("text-x", macs[0]!), false);
  assert.equal(wrong.known, 0);
});
