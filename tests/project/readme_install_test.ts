/**
 * Every package README's install lines (Deno's and Node.js's) add what its own examples import: a
 * user who runs one and then an example never meets `Import "X" not a dependency`.
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (specifier: string) => {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
};

/** The name in an install argument: `jsr:@a/b` is `@a/b`, `npm:c@~1` and `c@~1` are `c`. */
const nameOf = (token: string) => {
  const name = token.replace(/^(jsr|npm):/, "");
  const at = name.indexOf("@", 1);
  return at === -1 ? name : name.slice(0, at);
};

/**
 * Packages each install line of the README adds: the Deno line (`deno add ...`) and the Node.js
 * line (`npx jsr add ... && npm install ...`), by the runtime the line is for.
 */
function added(readme: string): Map<string, Set<string>> {
  const lines = new Map<string, Set<string>>();
  for (const [runtime, start] of [["Deno", "deno add "], ["Node.js", "npx jsr add "]]) {
    const line = readme.split("\n").find((text) => text.startsWith(start!));
    assert.ok(line !== undefined, `no ${start}line`);
    const commands = line.split("#")[0]!.split("&&").map((command) => command.trim().split(/\s+/));
    const names = commands.flatMap((words) =>
      // The arguments follow `deno add`, `npm install` (two words) and `npx jsr add` (three).
      words.slice(words[0] === "npx" ? 3 : 2).map(nameOf)
    );
    lines.set(runtime!, new Set(names));
  }
  return lines;
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

Deno.test("the parser reads both install lines and an example's imports", () => {
  const readme = [
    "deno add jsr:@a/core npm:@b/api@~1.9 npm:c   # Deno",
    "npx jsr add @a/core && npm install @b/api@~1.9 c   # Node.js",
    "```ts",
    'import x from "@a/core/sub";',
    'import "c";',
    'import { y } from "npm:d";',
    'import { z } from "node:assert";',
    'import { w } from "e/deep/path.js";',
    "```",
  ].join("\n");
  const lines = added(readme);
  assert.deepEqual([...lines.get("Deno")!], ["@a/core", "@b/api", "c"]);
  assert.deepEqual([...lines.get("Node.js")!], ["@a/core", "@b/api", "c"]);
  assert.deepEqual([...imported(readme)], ["@a/core", "c", "e"]);
  assert.throws(() => added("deno add npm:c"), /no npx jsr add line/);
});

for await (const entry of Deno.readDir(new URL("packages/", root))) {
  if (!entry.isDirectory) continue;
  Deno.test(`packages/${entry.name}/README.md: both install lines add every import of its examples`, async () => {
    const readme = await Deno.readTextFile(new URL(`packages/${entry.name}/README.md`, root));
    const imports = imported(readme);
    assert.ok(imports.size > 0, "no example imports anything");
    for (const [runtime, adds] of added(readme)) {
      const missing = [...imports].filter((name) => !adds.has(name));
      assert.deepEqual(missing, [], `not in the ${runtime} install line: ${missing.join(", ")}`);
    }
  });
}
