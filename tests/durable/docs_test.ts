/**
 * docs/durable.md shows the code the engine tests run (each block marked `ignore`, so that the doc
 * test runner leaves it to this check): every code block is found, as it is, in
 * the file the text before it links to.
 */
import assert from "node:assert/strict";

const DOC = new URL("../../docs/durable.md", import.meta.url);

Deno.test("docs/durable.md: every code block is the code of the test file it names", async () => {
  const text = await Deno.readTextFile(DOC);
  const blocks = [...text.matchAll(/```(?:ts|js) ignore\n([\s\S]*?)```/g)];
  assert.ok(blocks.length >= 5, `code blocks: ${blocks.length}`);
  for (const block of blocks) {
    const before = text.slice(0, block.index);
    const links = [...before.matchAll(/\]\(\.\.\/(tests\/durable\/[a-z_]+\.ts)\)/g)];
    const file = links.at(-1)?.[1];
    assert.ok(file !== undefined, `a link before the block at ${block.index}`);
    const source = await Deno.readTextFile(new URL(`../../${file}`, import.meta.url));
    assert.ok(source.includes(block[1]!), `${file} holds the block:\n${block[1]}`);
  }
});
