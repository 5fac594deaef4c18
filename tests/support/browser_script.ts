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
  const dir = await Deno.makeTempDir({ prefix: "tb-script-" });
  try {
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      // Not strict: a script without annotations has many loose types; only its names matter.
      JSON.stringify({ compilerOptions: { lib: ["dom", "esnext"], checkJs: true, strict: false } }),
    );
    await Deno.writeTextFile(`${dir}/script.js`, source);
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
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
