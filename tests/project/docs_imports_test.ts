/**
 * The docs import what exists: every `import { ... } from "@tool-boundary/<package>[/<entry>]"`
 * (type imports too) in README.md, docs/, the packages' READMEs and examples/ names an entry that
 * exists and only what it exports, as the type checker sees it. Each import is checked alone, in
 * a module of its own, with the workspace's configuration (a package by its name, the core's
 * entries from deno.json). The README's figures: its Performance section points to
 * BENCHMARKS.md and repeats none, and every ratio it states elsewhere is one of BENCHMARKS.md's
 * summary table.
 */
import assert from "node:assert/strict";
import { ROOT, WORKSPACE_CONFIG } from "../runtime/process.ts";

/** One import of a doc, where it stands. */
interface DocImport {
  /** `file:line`, from the root. */
  at: string;
  /** The statement, as written. */
  statement: string;
  /** The specifier. */
  from: string;
}

/** A terminal colour code (ESC `[` ... `m`). */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

const IMPORT = /\bimport\s+(?:type\s+)?\{[^}]*\}\s*from\s*"(@tool-boundary\/[^"]+)"/g;

/** The imports of `@tool-boundary/...` in a module's text (or a Markdown file's code blocks). */
export function importsOf(path: string, text: string): DocImport[] {
  const found: DocImport[] = [];
  const scan = (code: string, offset: number) => {
    for (const match of code.matchAll(IMPORT)) {
      const line = text.slice(0, offset + match.index!).split("\n").length;
      found.push({ at: `${path}:${line}`, statement: `${match[0]};`, from: match[1]! });
    }
  };
  if (!path.endsWith(".md")) {
    scan(text, 0);
    return found;
  }
  for (
    const block of text.matchAll(
      /^```(?:ts|js|tsx|typescript|javascript)\b[^\n]*\n([\s\S]*?)^```/gm,
    )
  ) {
    scan(block[1]!, block.index! + block[0].indexOf("\n") + 1);
  }
  return found;
}

/** The specifiers the workspace resolves: the core's entries and each package's. */
async function knownSpecifiers(): Promise<Set<string>> {
  const known = new Set<string>();
  const add = (config: { name: string; exports: string | Record<string, string> }) => {
    const keys = typeof config.exports === "string" ? ["."] : Object.keys(config.exports);
    for (const key of keys) known.add(key === "." ? config.name : `${config.name}${key.slice(1)}`);
  };
  add(JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)));
  for await (const entry of Deno.readDir(`${ROOT}packages`)) {
    if (entry.isDirectory) {
      add(JSON.parse(await Deno.readTextFile(`${ROOT}packages/${entry.name}/deno.json`)));
    }
  }
  return known;
}

/**
 * Checks the imports: each in a module of its own under a temporary folder, type-checked in one
 * run. Answers what is wrong, one line each: an entry that does not exist, or a name it does not
 * export.
 */
export async function wrongImports(imports: DocImport[]): Promise<string[]> {
  const known = await knownSpecifiers();
  const wrong = imports.filter((found) => !known.has(found.from))
    .map((found) => `${found.at}: ${found.from} is no entry`);
  const checked = imports.filter((found) => known.has(found.from));
  if (checked.length === 0) return wrong;
  const dir = await Deno.makeTempDir({ prefix: "docs_imports_" });
  try {
    const files = [];
    for (const [i, found] of checked.entries()) {
      files.push(`${dir}/import_${i}.ts`);
      await Deno.writeTextFile(files[i]!, `${found.statement}\n`);
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", ...WORKSPACE_CONFIG, ...files],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    // Plain text, also where the caller's environment forces colours.
    const report = new TextDecoder().decode(out.stderr).replace(ANSI, "");
    const errors = [
      ...report.matchAll(/TS\d+ \[ERROR\]: ([^\n]*)[\s\S]*?at file:\/\/\S*\/import_(\d+)\.ts/g),
    ];
    for (const [, message, index] of errors) {
      wrong.push(`${checked[Number(index)]!.at}: ${message}`);
    }
    if (!out.success && errors.length === 0) wrong.push(`deno check failed: ${report}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return wrong;
}

/** The docs whose imports are checked, from the root. */
async function docs(): Promise<string[]> {
  const paths = ["README.md"];
  for await (const entry of Deno.readDir(`${ROOT}docs`)) {
    if (entry.name.endsWith(".md")) paths.push(`docs/${entry.name}`);
  }
  for await (const entry of Deno.readDir(`${ROOT}packages`)) {
    if (entry.isDirectory) paths.push(`packages/${entry.name}/README.md`);
  }
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory && !["node_modules", "dist", ".wrangler"].includes(entry.name)) {
        await walk(path);
      } else if (entry.isFile && /\.(ts|md)$/.test(entry.name)) paths.push(path);
    }
  };
  await walk("examples");
  return paths.sort();
}

Deno.test("every import of @tool-boundary/... in the docs and examples names only what its entry exports", async () => {
  const imports: DocImport[] = [];
  for (const path of await docs()) {
    imports.push(...importsOf(path, await Deno.readTextFile(`${ROOT}${path}`)));
  }
  assert.ok(imports.length >= 40, `${imports.length} imports found`);
  for (const from of ["@tool-boundary/core", "@tool-boundary/core/memory", "@tool-boundary/mcp"]) {
    assert.ok(imports.some((found) => found.from === from), `an import of ${from}`);
  }
  assert.deepEqual(await wrongImports(imports), []);
});

Deno.test("the import check finds a name an entry does not export, and an entry that does not exist", async () => {
  const readme = [
    'Text with `import { Nothing } from "@tool-boundary/core"` outside a block is prose.',
    "```ts",
    'import { MemoryStore, ToolBoundary } from "@tool-boundary/core";',
    "import type {",
    "  CallSummary,",
    "  RunState,",
    '} from "@tool-boundary/core/harness";',
    "```",
    "```ts ignore",
    'import { requestDigest } from "@tool-boundary/core/stores";',
    "```",
  ].join("\n");
  const imports = importsOf("README.md", readme);
  assert.deepEqual(imports.map((found) => [found.at, found.from]), [
    ["README.md:3", "@tool-boundary/core"],
    ["README.md:4", "@tool-boundary/core/harness"],
    ["README.md:10", "@tool-boundary/core/stores"],
  ]);
  const wrong = await wrongImports(imports);
  assert.equal(wrong.length, 2, wrong.join("\n"));
  assert.match(wrong[0]!, /^README\.md:10: @tool-boundary\/core\/stores is no entry$/);
  assert.match(wrong[1]!, /^README\.md:3: .*has no exported member.*'MemoryStore'/);
});

/** A figure of speed or size: a ratio (`2.7x`), a duration or an amount of data. */
const FIGURE = /\b\d[\d,]*(?:\.\d+)?(?:x\b| ?(?:ms|us|µs|s|MiB|MB|KiB|GiB)\b)/g;

/** The text of the README section under `heading`, to the next heading of its level. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  assert.notEqual(start, -1, heading);
  const level = heading.split(" ")[0]!;
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^${level} `, "m"));
  return end === -1 ? rest : rest.slice(0, end);
}

Deno.test("the README's Performance section points to BENCHMARKS.md and repeats no figure; every ratio it states elsewhere is in BENCHMARKS.md's summary", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const benchmarks = await Deno.readTextFile(`${ROOT}BENCHMARKS.md`);
  const performance = section(readme, "## Performance");
  assert.match(performance, /BENCHMARKS\.md/);
  // Commands aside (`deno@2`): prose only.
  const prose = performance.replace(/`[^`]*`/g, "");
  assert.deepEqual(prose.match(FIGURE) ?? [], [], "figures in the Performance section");
  const summary = benchmarks.slice(0, benchmarks.indexOf("\n## "));
  for (const ratio of readme.match(/\b\d+(?:\.\d+)?x\b/g) ?? []) {
    assert.ok(summary.includes(ratio), `${ratio} is not in BENCHMARKS.md's summary`);
  }
});

Deno.test("the figure check sees ratios, durations and sizes", () => {
  const text =
    "2.7x faster, 1.37x of two PINGs, 13 s, 250 MB, 4.4 MiB, 30 ms; deno@2, 2 round trips";
  assert.deepEqual(text.match(FIGURE), ["2.7x", "1.37x", "13 s", "250 MB", "4.4 MiB", "30 ms"]);
});
