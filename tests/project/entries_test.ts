/**
 * The core's entries: each `./x` is the folder `src/x/` with its `mod.ts` (the root `.` is
 * `src/mod.ts`), each name is exported by one entry only, and each entry keeps to the name
 * budget the README's API section writes down (the table "Entries and their budgets"), which also
 * gives its count of names now. The README's page of the root lists exactly the root's names.
 * Names are counted as `deno doc --json` lists them: values and types alike.
 */
import assert from "node:assert/strict";
import { ROOT } from "../runtime/process.ts";

/** The entries of deno.json: `.` or `./x` -> the path of its module. */
async function entries(): Promise<Record<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  return config.exports as Record<string, string>;
}

/** The names each entry exports, by entry, read with one `deno doc --json` of them all. */
async function namesByEntry(exports: Record<string, string>): Promise<Map<string, string[]>> {
  const paths = Object.values(exports).map((path) => `${ROOT}${path.slice(2)}`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...paths],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const { nodes } = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    nodes: Record<string, { symbols: { name: string }[] }>;
  };
  const names = new Map<string, string[]>();
  for (const [entry, path] of Object.entries(exports)) {
    const node = nodes[`file://${ROOT}${path.slice(2)}`];
    assert.ok(node, `deno doc read ${path}`);
    names.set(entry, [...new Set(node.symbols.map((symbol) => symbol.name))].sort());
  }
  return names;
}

/** A row of the README's budget table. */
interface BudgetRow {
  entry: string;
  budget: number;
  count: number;
}

/**
 * The rows of the table under the README's heading "Entries and their budgets":
 * `| \`./x\` | what | budget | names |`.
 */
function budgetTable(readme: string): BudgetRow[] {
  const start = readme.indexOf("### Entries and their budgets");
  assert.notEqual(start, -1, 'README.md has a section "Entries and their budgets"');
  const section = readme.slice(start).split(/\n#{2,3} /)[0]!;
  const rows: BudgetRow[] = [];
  for (const line of section.split("\n")) {
    const match = line.match(/^\| `(\.[^`]*)` +\|.*\| +(\d+) +\| +(\d+) +\|$/);
    if (match) rows.push({ entry: match[1]!, budget: Number(match[2]), count: Number(match[3]) });
  }
  return rows;
}

/** The names of the README's ```ts block that imports everything an entry exports. */
function pageNames(readme: string, specifier: string): string[] {
  for (const [, block = ""] of readme.matchAll(/```ts[^\n]*\n([\s\S]*?)```/g)) {
    if (!block.includes("// Every name of")) continue;
    for (const [, names = "", from] of block.matchAll(/import \{([^}]*)\} from "([^"]+)";/g)) {
      if (from !== specifier) continue;
      return names.replace(/\/\/[^\n]*/g, "").split(",")
        .map((name) => name.replace(/^\s*type\s+/, "").trim())
        .filter((name) => name !== "").sort();
    }
  }
  throw new Error(`README.md has no block that imports every name of ${specifier}`);
}

Deno.test("every entry is a folder with its mod.ts: ./x -> ./src/x/mod.ts, . -> ./src/mod.ts", async () => {
  for (const [entry, path] of Object.entries(await entries())) {
    const expected = entry === "." ? "./src/mod.ts" : `./src/${entry.slice(2)}/mod.ts`;
    assert.match(entry, /^\.(\/[a-z]+)?$/, entry);
    assert.equal(path, expected, entry);
  }
});

Deno.test("each entry keeps to its budget, the README's table gives every entry its count, and no name has two entries", async () => {
  const exports = await entries();
  const names = await namesByEntry(exports);
  const table = budgetTable(await Deno.readTextFile(`${ROOT}README.md`));
  assert.deepEqual(table.map((row) => row.entry).sort(), Object.keys(exports).sort());
  for (const { entry, budget, count } of table) {
    const exported = names.get(entry)!;
    assert.ok(
      exported.length <= budget,
      `${entry} exports ${exported.length} names, over its budget of ${budget}: ${exported}`,
    );
    assert.equal(count, exported.length, `README.md's table counts ${entry}'s names`);
  }
  const entryOf = new Map<string, string>();
  for (const [entry, list] of names) {
    for (const name of list) {
      assert.equal(
        entryOf.get(name),
        undefined,
        `${name} is exported by ${entryOf.get(name)} and ${entry}`,
      );
      entryOf.set(name, entry);
    }
  }
  // The page keeps room for what comes next.
  assert.ok(table.find((row) => row.entry === ".")!.budget <= 40);
});

Deno.test("the README's page lists every name of the root and of ./harness, and nothing else", async () => {
  const names = await namesByEntry(await entries());
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  assert.deepEqual(pageNames(readme, "@tool-boundary/core"), names.get("."));
  assert.deepEqual(pageNames(readme, "@tool-boundary/core/harness"), names.get("./harness"));
});

Deno.test("the budget table and page readers read what they are given, and refuse what is not there", () => {
  const readme = [
    "### Entries and their budgets",
    "",
    "| entry | what | budget | names |",
    "| --- | --- | --- | --- |",
    "| `.` | the page | 40 | 35 |",
    "| `./store` | for store authors | 47 | 47 |",
    "",
    "## Next",
    "| `./later` | not in the section | 1 | 1 |",
    "```ts",
    "// Every name of the page",
    "import {",
    "  // the first, the second",
    '  b, type A } from "@tool-boundary/core";',
    "```",
  ].join("\n");
  assert.deepEqual(budgetTable(readme), [
    { entry: ".", budget: 40, count: 35 },
    { entry: "./store", budget: 47, count: 47 },
  ]);
  assert.deepEqual(pageNames(readme, "@tool-boundary/core"), ["A", "b"]);
  assert.throws(() => pageNames(readme, "@tool-boundary/core/harness"), /no block/);
  assert.throws(() => budgetTable("# nothing"), /Entries and their budgets/);
});
