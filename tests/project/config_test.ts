/**
 * The two configurations of this repository. deno.json is the core package as published, with
 * the core's own dependencies only, so that `deno task` (which installs every npm package its
 * configuration and lockfile name before it runs a task) fetches no more than the dev server
 * needs. deno.dev.json is the workspace (the core, packages/ and examples/) with the test
 * dependencies. These tests keep the two from drifting apart.
 */
import assert from "node:assert/strict";
import { ROOT } from "../runtime/process.ts";

type Config = Record<string, unknown> & { imports?: Record<string, string> };

const read = async (path: string): Promise<Config> =>
  JSON.parse(await Deno.readTextFile(`${ROOT}${path}`));

/**
 * The bare specifiers the modules under `dir` import (doc comment examples aside), leaving out
 * the files `skip` matches.
 */
async function bareImports(dir: string, skip = /^$/): Promise<Set<string>> {
  const found = new Set<string>();
  for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (skip.test(path)) continue;
    if (entry.isDirectory) {
      for (const name of await bareImports(path, skip)) found.add(name);
    } else if (entry.name.endsWith(".ts")) {
      const text = await Deno.readTextFile(`${ROOT}${path}`);
      for (const [, specifier] of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm)) {
        if (!specifier!.startsWith(".")) found.add(specifier!);
      }
    }
  }
  return found;
}

/** The import map key a specifier resolves through: the package name, without its subpath. */
const packageOf = (specifier: string): string =>
  specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

Deno.test("deno.dev.json is deno.json plus the workspace, the test imports and its own lockfile", async () => {
  const core = await read("deno.json");
  const dev = await read("deno.dev.json");
  for (const [key, value] of Object.entries(core)) {
    if (key === "tasks") continue;
    if (key === "imports") {
      for (const [name, target] of Object.entries(value as Record<string, string>)) {
        assert.equal(dev.imports?.[name], target, `deno.dev.json maps ${name} as deno.json does`);
      }
      continue;
    }
    assert.deepEqual(dev[key], value, `deno.dev.json has deno.json's "${key}"`);
  }
  assert.equal("tasks" in dev, false, "the tasks live in deno.json alone");
  assert.deepEqual(dev.lock, { path: "./deno.dev.lock" });
  assert.deepEqual(dev.workspace, ["./examples", "./packages/*"]);
});

Deno.test("deno.json imports exactly what src/ and the dev server's edge/ entries import", async () => {
  const core = await read("deno.json");
  const name = core.name as string;
  // The gateway entries need packages/mcp: they run under deno.dev.json (`task dev:gateway`).
  const edge = await bareImports("edge", /^edge\/gateway_/);
  const used = new Set(
    [...await bareImports("src"), ...edge]
      .filter((specifier) => !specifier.startsWith("node:") && packageOf(specifier) !== name)
      .map(packageOf),
  );
  assert.deepEqual(new Set(Object.keys(core.imports ?? {})), used);
});

Deno.test("deno.lock pins deno.json's imports and nothing else", async () => {
  const core = await read("deno.json");
  const lock = JSON.parse(await Deno.readTextFile(`${ROOT}deno.lock`)) as {
    specifiers: Record<string, string>;
    workspace: { dependencies: string[] };
  };
  const imports = Object.values(core.imports ?? {}).sort();
  assert.deepEqual([...lock.workspace.dependencies].sort(), imports);
  assert.deepEqual(Object.keys(lock.specifiers).sort(), imports);
});

Deno.test("every package depends on the core by its JSR name and version", async () => {
  const core = await read("deno.json");
  const [major, minor] = (core.version as string).split(".");
  for await (const entry of Deno.readDir(`${ROOT}packages`)) {
    if (!entry.isDirectory) continue;
    const config = await read(`packages/${entry.name}/deno.json`);
    assert.equal(
      config.imports?.[core.name as string],
      `jsr:${core.name}@^${major}.${minor}.0`,
      `packages/${entry.name}/deno.json`,
    );
  }
});
