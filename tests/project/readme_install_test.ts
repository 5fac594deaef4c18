/**
 * Every package README's install line adds what its own examples import: a user who runs the
 * `deno add` line and then an example never meets `Import "X" not a dependency`.
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (specifier: string) => {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
};

/** Packages the README's `deno add` line adds (`jsr:@a/b`, `npm:c@~1`: `@a/b`, `c`). */
function added(readme: string): Set<string> {
  const line = readme.split("\n").find((text) => text.startsWith("deno add "));
  assert.ok(line !== undefined, "no deno add line");
  const names = line.split("#")[0]!.trim().split(/\s+/).slice(2).map((token) => {
    const name = token.replace(/^(jsr|npm):/, "");
    const at = name.indexOf("@", 1);
    return at === -1 ? name : name.slice(0, at);
  });
  return new Set(names);
}

/** Bare specifiers imported by the README's TypeScript blocks. */
function imported(readme: string): Set<string> {
  const specifiers = new Set<string>();
  for (const [, block = ""] of readme.matchAll(/```ts\n([\s\S]*?)```/g)) {
    for (const [, specifier = ""] of block.matchAll(/(?:from|import)\s+"([^"]+)"/g)) {
      if (/^(node:|npm:|jsr:|\.{1,2}\/)/.test(specifier)) continue;
      specifiers.add(packageOf(specifier));
    }
  }
  return specifiers;
}

Deno.test("the parser reads an install line and an example's imports", () => {
  const readme = [
    "deno add jsr:@a/core npm:@b/api@~1.9 npm:c   # Deno",
    "```ts",
    'import x from "@a/core/sub";',
    'import "c";',
    'import { y } from "npm:d";',
    'import { z } from "node:assert";',
    'import { w } from "e/deep/path.js";',
    "```",
  ].join("\n");
  assert.deepEqual([...added(readme)], ["@a/core", "@b/api", "c"]);
  assert.deepEqual([...imported(readme)], ["@a/core", "c", "e"]);
});

for await (const entry of Deno.readDir(new URL("packages/", root))) {
  if (!entry.isDirectory) continue;
  Deno.test(`packages/${entry.name}/README.md: the install line adds every import of its examples`, async () => {
    const readme = await Deno.readTextFile(new URL(`packages/${entry.name}/README.md`, root));
    const adds = added(readme);
    const imports = imported(readme);
    assert.ok(imports.size > 0, "no example imports anything");
    const missing = [...imports].filter((name) => !adds.has(name));
    assert.deepEqual(missing, [], `not in the install line: ${missing.join(", ")}`);
  });
}
