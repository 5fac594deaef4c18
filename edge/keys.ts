/**
 * `deno task keys [dir]`: makes a ledger key pair (Ed25519, `generateLedgerKeys`) and writes it
 * to `ledger-private.jwk` (mode 0600) and `ledger-public.jwk` in `dir` (default: the current
 * folder). It refuses, writing nothing, when either file exists. Give the private JWK to the
 * boundary (`LEDGER_KEY="$(cat ledger-private.jwk)"`), the public one to auditors (docs/proof.md).
 *
 * @module
 */
import { generateLedgerKeys } from "@tool-boundary/core";

const PRIVATE = "ledger-private.jwk";
const PUBLIC = "ledger-public.jwk";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** Writes the pair into `dir`; sets `Deno.exitCode` (1 when a file exists, 2 for bad usage). */
export async function main(args: readonly string[] = Deno.args): Promise<void> {
  if (args.length > 1) {
    console.error("usage: deno task keys [dir]");
    Deno.exitCode = 2;
    return;
  }
  const dir = (args[0] ?? ".").replace(/\/+$/, "") || "/";
  const privatePath = `${dir}/${PRIVATE}`, publicPath = `${dir}/${PUBLIC}`;
  for (const path of [privatePath, publicPath]) {
    if (await exists(path)) {
      console.error(`keys: ${path} exists; refusing to overwrite a key (nothing written)`);
      Deno.exitCode = 1;
      return;
    }
  }
  const { privateKey, publicKey } = await generateLedgerKeys();
  // createNew: a file made meanwhile is still never overwritten.
  await Deno.writeTextFile(privatePath, JSON.stringify(privateKey) + "\n", {
    createNew: true,
    mode: 0o600,
  });
  await Deno.writeTextFile(publicPath, JSON.stringify(publicKey) + "\n", { createNew: true });
  console.log(`wrote ${privatePath} (secret: the boundary's LEDGER_KEY) and ${publicPath}
  public JWK: ${JSON.stringify(publicKey)}
  use it:     LEDGER_KEY="$(cat ${privatePath})" npx -y deno@2 task dev
  verify:     npx -y deno@2 run --allow-read src/verify/mod.ts bundle.json ${publicPath}`);
}

if (import.meta.main) await main();
