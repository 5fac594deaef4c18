/**
 * `verifyRun` for the proof tests, which also writes down each bundle it is given when
 * `TOOL_BOUNDARY_BUNDLES` names a file: one JSON line per verification (`{ bundle, key, options }`,
 * PEM for DER certificates), so that tests/proof/python_test.ts can give every bundle the proof
 * tests make, clean or tampered, to docs/verify.py as well. A bundle that is not JSON data (the
 * hostile inputs) is not written.
 *
 * @module
 */
import { type RunVerdict, type VerifyOptions, verifyRun as verify } from "../../src/verify/mod.ts";

const file = Deno.env.get("TOOL_BOUNDARY_BUNDLES");

/** PEM of DER certificate bytes. */
export function pemOf(der: Uint8Array): string {
  const base64 = btoa(String.fromCharCode(...der)).replace(/.{64}/g, "$&\n");
  return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
}

/** `verifyRun`, and the case written down when `TOOL_BOUNDARY_BUNDLES` is set. */
export async function verifyRun(
  bundle: unknown,
  publicKey: JsonWebKey,
  options: VerifyOptions = {},
): Promise<RunVerdict> {
  const verdict = await verify(bundle, publicKey, options);
  if (file !== undefined) {
    let line: string | undefined;
    try {
      const text = JSON.stringify(bundle);
      // Only JSON data that reads back as itself.
      if (text !== undefined && JSON.stringify(JSON.parse(text)) === text) {
        line = JSON.stringify({
          bundle: JSON.parse(text),
          key: publicKey,
          options: {
            ...(options.keyId === undefined ? {} : { keyId: options.keyId }),
            ...(options.run === undefined ? {} : { run: options.run }),
            ...(options.tsaCertificates === undefined ? {} : {
              tsaCertificates: options.tsaCertificates.map((c) =>
                typeof c === "string" ? c : pemOf(c)
              ),
            }),
          },
        });
      }
    } catch {
      // Not JSON data: not a bundle another verifier could be given.
    }
    if (line !== undefined) await Deno.writeTextFile(file, line + "\n", { append: true });
  }
  return verdict;
}
