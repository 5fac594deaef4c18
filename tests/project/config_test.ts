/**
 * The three configurations of this repository. deno.json is the core package as published, with
 * the core's own dependencies only, so that `deno task` (which installs every npm package its
 * configuration and lockfile name before it runs a task) fetches no more than the dev server
 * needs. deno.dev.json is the workspace (the core, packages/ and examples/) with the test
 * dependencies. deno.gateway.json is the core and packages/mcp alone, for the MCP gateway's tasks,
 * so that a first `task dev:gateway` fetches what the gateway needs and no other package's
 * dependencies. These tests keep the three from drifting apart.
 */
import assert from "node:assert/strict";
import { ROOT } from "../runtime/process.ts";

type Config = Record<string, unknown> & { imports?: Record<string, string> };

const read = async (path: string): Promise<Config> =>
  JSON.parse(await Deno.readTextFile(`${ROOT}${path}`));

/**
 * The bare specifiers the modules under `dir` import, leaving out the files `skip` matches; with
 * `examples`, also those the doc comment examples import (` * import ... from "x";` lines).
 */
async function bareImports(dir: string, skip = /^$/, examples = false): Promise<Set<string>> {
  const found = new Set<string>();
  for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (skip.test(path)) continue;
    if (entry.isDirectory) {
      for (const name of await bareImports(path, skip, examples)) found.add(name);
    } else if (entry.name.endsWith(".ts")) {
      const text = await Deno.readTextFile(`${ROOT}${path}`);
      const pattern = examples
        ? /^(?:\s*\*\s*)?(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm
        : /^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm;
      for (const [, specifier] of text.matchAll(pattern)) {
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

Deno.test("deno.json imports exactly what src/ (its doc examples too) and the dev server's edge/ entries import", async () => {
  const core = await read("deno.json");
  const name = core.name as string;
  // The gateway entries need packages/mcp: they run under deno.gateway.json (`task dev:gateway`).
  const edge = await bareImports("edge", /^edge\/gateway_/);
  const used = new Set(
    // @upstash/redis: only the Upstash entry's examples (UpstashStore takes its client; the edge
    // entries use the store's own UpstashRestClient).
    [...await bareImports("src", /^$/, true), ...edge]
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

/** deno.json without its tasks: what the other configurations repeat. */
function withoutTasks(config: Config): Config {
  const { tasks: _tasks, ...rest } = config;
  return rest;
}

Deno.test("deno.gateway.json is deno.json plus packages/mcp and its own lockfile, nothing else", async () => {
  const core = await read("deno.json");
  const gateway = await read("deno.gateway.json");
  assert.deepEqual(
    gateway,
    { ...withoutTasks(core), workspace: ["./packages/mcp"], lock: { path: "./deno.gateway.lock" } },
  );
});

Deno.test("deno.gateway.lock pins the core's and packages/mcp's imports alone, as deno.dev.lock does", async () => {
  const core = await read("deno.json");
  const mcp = await read("packages/mcp/deno.json");
  type Lock = {
    specifiers: Record<string, string>;
    npm: Record<string, unknown>;
    jsr?: Record<string, unknown>;
    workspace: { dependencies: string[]; members?: Record<string, { dependencies: string[] }> };
  };
  const lockOf = async (path: string): Promise<Lock> =>
    JSON.parse(await Deno.readTextFile(`${ROOT}${path}`));
  const lock = await lockOf("deno.gateway.lock");
  const coreImports = Object.values(core.imports ?? {}).sort();
  // The core is the workspace's own member, never fetched from JSR.
  const mcpImports = Object.entries(mcp.imports ?? {})
    .filter(([name]) => name !== core.name)
    .map(([, target]) => target);
  assert.deepEqual([...lock.workspace.dependencies].sort(), coreImports);
  assert.deepEqual(Object.keys(lock.workspace.members ?? {}), ["packages/mcp"]);
  assert.deepEqual(
    Object.keys(lock.specifiers).sort(),
    [...new Set([...coreImports, ...mcpImports])].sort(),
  );
  assert.equal(lock.jsr, undefined, "nothing from JSR");
  // The same versions as the workspace's lockfile, so the gateway runs what the tests test. A
  // resolution's peers may differ: the workspace resolves a package with the peers its wider
  // graph holds (@modelcontextprotocol/sdk with zod, which packages/cloudflare's agents brings),
  // the gateway's graph has no reason for them; the package and its version are the same.
  const dev = await lockOf("deno.dev.lock");
  // `1.32.2_@cfworker+json-schema@4.1.6` is version 1.32.2; `@scope/name@1.2.3_peer@1.0.0` is
  // `@scope/name@1.2.3`.
  const versionOf = (resolved: string) => resolved.split("_")[0];
  const packageOf = (key: string) => key.replace(/^(.[^@]*@[^_]+)_.*$/, "$1");
  for (const [specifier, version] of Object.entries(lock.specifiers)) {
    assert.equal(versionOf(version), versionOf(dev.specifiers[specifier] ?? ""), specifier);
  }
  const devPackages = new Set(Object.keys(dev.npm).map(packageOf));
  for (const name of Object.keys(lock.npm)) {
    assert.ok(devPackages.has(packageOf(name)), `${name} is in deno.dev.lock`);
  }
});

Deno.test("the gateway's tasks run under deno.gateway.json, and its entries import nothing beyond it", async () => {
  const core = await read("deno.json");
  const mcp = await read("packages/mcp/deno.json");
  const tasks = core.tasks as Record<string, string>;
  for (const task of ["dev:gateway", "build:gateway-worker", "build:gateway-bun"]) {
    assert.match(tasks[task]!, /^deno (run|bundle) --config deno\.gateway\.json /, task);
  }
  for (const [task, command] of Object.entries(tasks)) {
    if (!task.includes("gateway")) assert.doesNotMatch(command, /deno\.gateway\.json/, task);
  }
  const known = new Set([core.name as string, mcp.name as string, ...Object.keys(core.imports!)]);
  for (const dir of ["edge", "packages/mcp"]) {
    for (const specifier of await bareImports(dir, /^packages\/mcp\/tests$/)) {
      if (specifier.startsWith("node:")) continue;
      const name = packageOf(specifier);
      assert.ok(
        known.has(name) || (dir === "packages/mcp" && name in mcp.imports!),
        `${dir} imports ${specifier}, which deno.gateway.json does not map`,
      );
    }
  }
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
