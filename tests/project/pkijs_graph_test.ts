/**
 * `pkijs` and `asn1js` (the ASN.1 and CMS of RFC 3161 timestamps) load only with the entries that
 * check or ask for timestamps, `./timestamp` and `./verify`: never with the core's `.`, nor with
 * the stores, the HTTP API or the console, whose `/verdict` checks no timestamp.
 */
import assert from "node:assert/strict";
import { ROOT, WORKSPACE_CONFIG } from "../runtime/process.ts";

/** The npm packages in the module graph of one entry, as `deno info` resolves it. */
async function npmPackagesOf(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", ...WORKSPACE_CONFIG, `${ROOT}${entry}`],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const { modules } = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string }[];
  };
  return modules.map((m) => m.specifier).filter((s) => s.startsWith("npm:"))
    .map((s) => s.replace(/^npm:\/?/, "").replace(/@[^@/]+$/, ""));
}

const ASN1 = ["pkijs", "asn1js"];

Deno.test("the core's '.' entry, the stores, './hono' and './inspector' never load pkijs or asn1js", async () => {
  const { exports } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as {
    exports: Record<string, string>;
  };
  const without = Object.entries(exports).filter(([name]) =>
    name !== "./timestamp" && name !== "./verify"
  );
  assert.ok(without.some(([name]) => name === "."));
  for (const [name, path] of without) {
    const packages = await npmPackagesOf(path.replace(/^\.\//, ""));
    for (const banned of ASN1) assert.ok(!packages.includes(banned), `${name} loads ${banned}`);
  }
});

Deno.test("'./timestamp' and './verify' bring pkijs and asn1js", async () => {
  for (const entry of ["src/timestamp/mod.ts", "src/verify/mod.ts"]) {
    const packages = await npmPackagesOf(entry);
    for (const name of ASN1) assert.ok(packages.includes(name), `${entry} lacks ${name}`);
  }
});
