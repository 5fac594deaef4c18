/**
 * Whether a classic browser script stands alone: `deno check` reads it as a JavaScript file of its
 * own, with the DOM's and the language's globals only (no Deno, no module around it), and every
 * name it cannot resolve is one the script would miss at run time, on any path, run or not.
 */
import assert from "node:assert/strict";

/** TypeScript's "Cannot find name" diagnostics (with and without a suggestion). */
const UNRESOLVED =
  /TS(?:2304|2552|2580|2582|2591|2662|2663) \[ERROR\]: Cannot find name '([^']+)'/g;

/**
 * The names a script uses that neither it nor a browser declares.
 *
 * @param source The script's text.
 * @returns The unresolved names, sorted, each once; empty when it stands alone.
 */
export async function unresolvedNames(source: string): Promise<string[]> {
  // Not strict: a script without annotations has many loose types; only its names matter.
  const config = JSON.stringify({
    compilerOptions: { lib: ["dom", "esnext"], checkJs: true, strict: false },
  });
  // A folder named by what it holds, kept: deno check remembers a clean check of a file by its
  // path and text, so the same script at the same path is answered from that (a script with
  // errors is checked each time).
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/tb-script-${await digest(config, source)}`;
  await Deno.mkdir(dir, { recursive: true });
  await writeWhole(`${dir}/deno.json`, config);
  await writeWhole(`${dir}/script.js`, source);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--quiet", "script.js"],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  // A failure must be type errors, never a script that does not even parse.
  if (!out.success) assert.match(text, /TS\d+ \[ERROR\]/, text);
  return [...new Set([...text.matchAll(UNRESOLVED)].map((match) => match[1]!))].sort();
}

async function digest(...parts: string[]): Promise<string> {
  const bytes = new TextEncoder().encode(parts.join("\0"));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Writes a file by renaming a finished one into place: another run may be reading it. */
async function writeWhole(path: string, text: string): Promise<void> {
  const part = `${path}.${crypto.randomUUID()}`;
  await Deno.writeTextFile(part, text);
  await Deno.rename(part, path);
}
