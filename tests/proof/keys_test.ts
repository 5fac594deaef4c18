/**
 * `deno task keys`: a ledger key pair written to two files, never over an existing one.
 */
import assert from "node:assert/strict";
import { ToolBoundary } from "../../src/mod.ts";
import { ROOT } from "../runtime/process.ts";
import { CALLS, lookup } from "./_run.ts";
import { verifyRun } from "./_verify.ts";

async function keys(dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", "edge/keys.ts", dir],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("deno task keys writes a key pair the boundary signs with and verifyRun checks, and never overwrites", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-keys-" });
  try {
    const first = await keys(dir);
    assert.equal(first.code, 0, first.stderr);
    const privateText = await Deno.readTextFile(`${dir}/ledger-private.jwk`);
    const publicText = await Deno.readTextFile(`${dir}/ledger-public.jwk`);
    const privateKey = JSON.parse(privateText), publicKey = JSON.parse(publicText);
    assert.deepEqual(Object.keys(publicKey).sort(), ["crv", "kty", "x"]);
    assert.equal(privateKey.x, publicKey.x);
    assert.equal(typeof privateKey.d, "string");
    assert.equal((await Deno.stat(`${dir}/ledger-private.jwk`)).mode! & 0o777, 0o600);
    assert.ok(first.stdout.includes(publicText.trim()));
    assert.ok(!first.stdout.includes(privateKey.d));
    // The pair works: a run signed with the private key verifies with the public one.
    const boundary = new ToolBoundary({ tools: [lookup], ledgerKey: privateKey });
    const run = await boundary.startRun();
    for (const { toolCallId, key } of CALLS) {
      await boundary.invoke(run, {
        toolCallId,
        runId: run.runId,
        toolName: "lookup",
        input: { key },
      });
    }
    await boundary.endRun(run);
    assert.deepEqual(await verifyRun(await boundary.exportRun(run.runId), publicKey), {
      ok: true,
      sealed: true,
      calls: CALLS.length,
    });
    // Again: refused, both files as they were.
    const again = await keys(dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /ledger-private\.jwk exists; refusing to overwrite/);
    assert.equal(await Deno.readTextFile(`${dir}/ledger-private.jwk`), privateText);
    assert.equal(await Deno.readTextFile(`${dir}/ledger-public.jwk`), publicText);
    // Only the public file there: still refused, and no private file written.
    await Deno.remove(`${dir}/ledger-private.jwk`);
    const half = await keys(dir);
    assert.equal(half.code, 1);
    assert.match(half.stderr, /ledger-public\.jwk exists/);
    await assert.rejects(Deno.stat(`${dir}/ledger-private.jwk`), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(`${dir}/ledger-public.jwk`), publicText);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
