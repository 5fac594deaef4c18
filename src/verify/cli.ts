/**
 * The `verify` program: `deno run --allow-read jsr:@tool-boundary/core/verify bundle.json
 * public.jwk`. The key file holds the public JWK, or `{ keyId, publicKey }` as
 * `GET /v1/ledger-key` answers it. Exit 0 when the bundle verifies, 1 printing the verdict when
 * not, 2 when the files cannot be read or are not a bundle and a key.
 *
 * @module
 */
import { verifyRun } from "./verify.ts";

/** Runs the program on `Deno.args`; sets `Deno.exitCode`. */
export async function main(args: readonly string[] = Deno.args): Promise<void> {
  if (args.length !== 2) {
    console.error("usage: verify <bundle.json> <public.jwk>");
    Deno.exitCode = 2;
    return;
  }
  let verdict;
  try {
    const bundle = JSON.parse(await Deno.readTextFile(args[0]!));
    const key = JSON.parse(await Deno.readTextFile(args[1]!));
    const wrapped = key !== null && typeof key === "object" && "publicKey" in key;
    verdict = await verifyRun(
      bundle,
      wrapped ? key.publicKey : key,
      wrapped && typeof key.keyId === "string" ? { keyId: key.keyId } : {},
    );
  } catch (error) {
    console.error(`verify: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exitCode = 2;
    return;
  }
  console.log(JSON.stringify(verdict));
  Deno.exitCode = verdict.ok ? 0 : 1;
}
