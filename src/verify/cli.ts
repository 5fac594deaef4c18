/**
 * The `verify` program: `deno run --allow-read jsr:@tool-boundary/core/verify bundle.json
 * public.jwk [--tsa cert.pem]... [--run-id ID [--started-at MS]]`. The key file holds the public
 * JWK, or `{ keyId, publicKey }` as `GET /v1/ledger-key` answers it; each `--tsa` file holds PEM
 * certificates of a trusted Time Stamping Authority (`tsaCertificates`); `--run-id` and
 * `--started-at` name the run instance expected (`run`). Exit 0 when the bundle verifies, 1
 * printing the verdict when not, 2 when the arguments or files are not a bundle, a key and
 * certificates (a file whose JSON names one member twice in an object is neither: `JSON.parse`
 * would keep the last and drop the rest).
 *
 * @module
 */
import type { VerifyOptions } from "./verify.ts";
import { verifyRun } from "./verify_run.ts";

const USAGE =
  "usage: verify <bundle.json> <public.jwk> [--tsa <cert.pem>]... [--run-id <id> [--started-at <ms>]]";

/** The arguments, read: the two files, the TSA certificate files, the run expected. */
interface Arguments {
  bundle: string;
  key: string;
  tsa: string[];
  runId: string | undefined;
  startedAt: number | undefined;
}

/**
 * Reads the program's arguments.
 *
 * @param args As the program got them.
 * @returns The two files, the `--tsa` files, the run expected; `null` when they are not the
 *   program's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readArguments } from "./cli.ts";
 * assert.deepEqual(readArguments(["b.json", "k.jwk", "--tsa", "ca.pem", "--run-id", "r1"]), {
 *   bundle: "b.json", key: "k.jwk", tsa: ["ca.pem"], runId: "r1", startedAt: undefined,
 * });
 * assert.equal(readArguments(["b.json", "k.jwk", "--started-at", "1"]), null);
 * ```
 */
export function readArguments(args: readonly string[]): Arguments | null {
  const files: string[] = [], tsa: string[] = [];
  let runId: string | undefined, startedAt: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--tsa" || arg === "--run-id" || arg === "--started-at") {
      const value = args[++i];
      if (value === undefined) return null;
      if (arg === "--tsa") tsa.push(value);
      else if (arg === "--run-id") runId = value;
      else if (/^(0|[1-9][0-9]{0,15})$/.test(value)) startedAt = Number(value);
      else return null;
    } else if (arg.startsWith("--")) {
      return null;
    } else {
      files.push(arg);
    }
  }
  if (files.length !== 2 || (startedAt !== undefined && runId === undefined)) return null;
  return { bundle: files[0]!, key: files[1]!, tsa, runId, startedAt };
}

/** Runs the program on `Deno.args`; sets `Deno.exitCode`. */
export async function main(args: readonly string[] = Deno.args): Promise<void> {
  const read = readArguments(args);
  if (read === null) {
    console.error(USAGE);
    Deno.exitCode = 2;
    return;
  }
  let verdict;
  try {
    const bundle = parseFile(read.bundle, await Deno.readTextFile(read.bundle));
    const key = parseFile(read.key, await Deno.readTextFile(read.key));
    const wrapped = key !== null && typeof key === "object" && "publicKey" in key
      ? key as { publicKey: JsonWebKey; keyId?: unknown }
      : null;
    const options: VerifyOptions = {};
    if (wrapped && typeof wrapped.keyId === "string") options.keyId = wrapped.keyId;
    if (read.tsa.length > 0) {
      options.tsaCertificates = await Promise.all(read.tsa.map((file) => Deno.readTextFile(file)));
    }
    if (read.runId !== undefined) {
      options.run = read.startedAt === undefined
        ? { runId: read.runId }
        : { runId: read.runId, startedAt: read.startedAt };
    }
    verdict = await verifyRun(bundle, wrapped ? wrapped.publicKey : key as JsonWebKey, options);
  } catch (error) {
    console.error(`verify: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exitCode = 2;
    return;
  }
  console.log(JSON.stringify(verdict));
  Deno.exitCode = verdict.ok ? 0 : 1;
}

/** A file's JSON, refused when an object in it names a member twice. */
function parseFile(path: string, text: string): unknown {
  const value = JSON.parse(text);
  const twice = duplicateMemberName(text);
  if (twice !== null) {
    throw new SyntaxError(`${path}: an object names the member ${JSON.stringify(twice)} twice`);
  }
  return value;
}

/**
 * The first member name an object of a JSON text holds twice, compared as the names `JSON.parse`
 * reads (so `"a"` and `"\u0061"` are one name), or `null` when there is none.
 *
 * @param text JSON text that `JSON.parse` accepts (anything else gives no useful answer).
 * @returns The repeated name, or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { duplicateMemberName } from "./cli.ts";
 * assert.equal(duplicateMemberName('{"a":1,"b":{"a":2}}'), null);
 * assert.equal(duplicateMemberName('{"a":1,"b":[{"c":1,"\\u0063":2}]}'), "c");
 * ```
 */
export function duplicateMemberName(text: string): string | null {
  // One entry per open object (its names so far) or array (`null`).
  const open: (Set<string> | null)[] = [];
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) { // '"': a string; past its end, skipping escapes
      let end = i + 1;
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c ? 2 : 1;
      const names = open.at(-1);
      if (nameNext && names) {
        const quoted = text.slice(i, end + 1);
        const name = quoted.includes("\\") ? JSON.parse(quoted) as string : quoted.slice(1, -1);
        if (names.has(name)) return name;
        names.add(name);
        nameNext = false;
      }
      i = end;
    } else if (c === 0x7b) { // '{'
      open.push(new Set());
      nameNext = true;
    } else if (c === 0x5b) { // '['
      open.push(null);
      nameNext = false;
    } else if (c === 0x7d || c === 0x5d) { // '}' or ']'
      open.pop();
      nameNext = false;
    } else if (c === 0x2c) { // ',': in an object, a name comes next
      nameNext = open.at(-1) != null;
    }
  }
  return null;
}
