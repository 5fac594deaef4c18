/**
 * The speed tricks of `src/` and their plain twins, for measuring what each trick buys on a whole
 * invoke: {@linkcode plainTrees} copies `src/` once per trick, with that one file replaced by a
 * stub that keeps the file's exports but answers with the plain twin, so the copy runs the same
 * code without that trick alone. An unchanged copy ("as is") is made as well: copies are compared
 * with it, not with `src/` itself, as a second tree loaded in one process runs a little slower
 * than the first whatever its code (measured up to 4%).
 *
 * A stub re-exports the original file (in `src/`) and overrides only the names of the trick; a
 * module's own export hides a name of `export *`.
 *
 * @module
 */

/** A trick: the file it lives in, relative to `src/`, and the stub that replaces it. */
export interface PlainTwin {
  /** The trick, and the plain version the copy runs instead. */
  name: string;
  /** The file replaced in the copy, relative to `src/`. */
  file: string;
  /** The stub's source, given the `file:` URL of the original file. */
  stub(original: string): string;
}

/** Every speed trick of `src/` that has a plain twin. */
export const PLAIN_TWINS: readonly PlainTwin[] = [
  {
    name: "IdTable -> Map",
    file: "stores/id_table.ts",
    stub: (original) => `export * from "${original}";\nexport const IdTable = Map;\n`,
  },
  {
    name: "SHA-256 in JS -> WebCrypto",
    file: "core/sha256.ts",
    stub: () =>
      "export const SHORT_SHA256_BYTES = 0;\nexport function sha256Short() { return null; }\n",
  },
  {
    // With WebCrypto alone the digest cannot be taken later: this row keeps the SHA-256 in JS
    // and takes the digest at begin, as for any other store.
    name: "PendingDigest -> digest at begin",
    file: "core/digest.ts",
    stub: (original) =>
      `export * from "${original}";\nexport class PendingDigest { static of() { return null; } }\n`,
  },
  {
    name: "utf8ByteLength -> TextEncoder",
    file: "core/utf8.ts",
    stub: (original) =>
      `export * from "${original}";\nconst encoder = new TextEncoder();\n` +
      "export function utf8ByteLength(text) { return encoder.encode(text).length; }\n",
  },
  {
    name: "snapshotParsed -> snapshotJson",
    file: "core/json.ts",
    stub: (original) =>
      `export * from "${original}";\nimport { snapshotJson } from "${original}";\n` +
      "export function snapshotParsed(parsed, maxDepth) { return snapshotJson(parsed, maxDepth); }\n",
  },
];

/** A copy of `src/`: its name (`as is`, or a twin's) and the `file:` URL of its `src/`. */
export interface PlainTree {
  name: string;
  src: URL;
}

/**
 * Copies `src/` into a temporary directory: once as it is, then once per twin with its stub.
 *
 * @returns The copies, the unchanged one first, and a function that removes them all.
 */
export async function plainTrees(): Promise<{ trees: PlainTree[]; remove: () => Promise<void> }> {
  const source = new URL("../src/", import.meta.url);
  const root = await Deno.makeTempDir({ prefix: "plain_twins_" });
  const trees: PlainTree[] = [];
  for (const [index, twin] of [null, ...PLAIN_TWINS].entries()) {
    const dir = `${root}/${index}/src`;
    await copyDir(source.pathname, dir);
    if (twin !== null) {
      const original = new URL(twin.file, source).href;
      await Deno.readTextFile(new URL(twin.file, source)); // the file must exist
      await Deno.writeTextFile(`${dir}/${twin.file}`, twin.stub(original));
    }
    trees.push({ name: twin?.name ?? "as is", src: new URL(`file://${dir}/`) });
  }
  return { trees, remove: () => Deno.remove(root, { recursive: true }) };
}

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyDir(`${from}/${entry.name}`, `${to}/${entry.name}`);
    else if (entry.isFile) await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}
