/**
 * No module of the core (src/) or of a package (packages/) imports itself through others: every
 * import (static, dynamic, type-only) of every entry point's graph, as `deno info` resolves it,
 * forms no circle.
 */
import assert from "node:assert/strict";
import { ROOT, WORKSPACE_CONFIG } from "../runtime/process.ts";

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
}

/** The entry points of the package whose folder (from the root) is `dir`. */
async function entriesOf(dir: string): Promise<string[]> {
  const { exports } = JSON.parse(await Deno.readTextFile(`${ROOT}${dir}deno.json`)) as {
    exports: string | Record<string, string>;
  };
  return (typeof exports === "string" ? [exports] : Object.values(exports))
    .map((path) => `${ROOT}${dir}${path.replace(/^\.\//, "")}`);
}

/** Every module of the graphs of `entries`, with its imports. */
async function graphOf(entries: string[]): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const entry of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", ...WORKSPACE_CONFIG, entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const { modules } = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: InfoModule[];
    };
    for (const module of modules) {
      const edges = graph.get(module.specifier) ?? new Set<string>();
      for (const dependency of module.dependencies ?? []) {
        for (const target of [dependency.code?.specifier, dependency.type?.specifier]) {
          if (target !== undefined) edges.add(target);
        }
      }
      graph.set(module.specifier, edges);
    }
  }
  return graph;
}

/** The strongly connected components of more than one module, or of one that imports itself. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], onStack = new Set<string>(), found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

Deno.test("no import circle in src/ or packages/", async () => {
  const packages = [...Deno.readDirSync(`${ROOT}packages`)]
    .filter((entry) => entry.isDirectory)
    .map((entry) => `packages/${entry.name}/`);
  const entries = (await Promise.all(["", ...packages].map(entriesOf))).flat();
  const graph = await graphOf(entries);
  const local = `file://${ROOT}`;
  // Only this repository's modules: a circle inside an npm package is not ours to fix.
  const ours = new Map(
    [...graph].filter(([specifier]) => specifier.startsWith(local)).map((
      [specifier, edges],
    ) => [specifier, new Set([...edges].filter((target) => target.startsWith(local)))]),
  );
  assert.ok(ours.size > 100, `the graphs hold ${ours.size} of this repository's modules`);
  const strip = (specifier: string) => specifier.slice(local.length);
  assert.deepEqual(circles(ours).map((component) => component.map(strip)), []);
});

/**
 * The modules of `inside` whose graph reaches back into `inside` through a module outside it:
 * `[from, through, back]` for each such arrow.
 */
function arrowsBack(
  graph: Map<string, Set<string>>,
  inside: (module: string) => boolean,
): string[][] {
  const found: string[][] = [];
  for (const [start, edges] of graph) {
    if (!inside(start)) continue;
    const seen = new Set<string>();
    const stack = [...edges].filter((target) => !inside(target)).map((target) => [target, target]);
    while (stack.length > 0) {
      const [module, through] = stack.pop()!;
      if (seen.has(module!)) continue;
      seen.add(module!);
      for (const target of graph.get(module!) ?? []) {
        if (inside(target)) found.push([start, through!, target]);
        else stack.push([target, through!]);
      }
    }
  }
  return found;
}

Deno.test("the MCP route (src/hono/mcp/) imports the HTTP app's modules, and none of them imports it back", async () => {
  const local = `file://${ROOT}`;
  const graph = await graphOf([`${ROOT}src/hono/mod.ts`]);
  const mcp = `${local}src/hono/mcp/`;
  const strip = (specifier: string) => specifier.slice(local.length);
  assert.ok([...graph.keys()].some((module) => module.startsWith(mcp)), "the app loads the route");
  assert.ok(
    [...graph.get(`${mcp}server.ts`) ?? []].some((target) => target === `${local}src/hono/auth.ts`),
    "the route uses the app's token checks",
  );
  const back = arrowsBack(graph, (module) => module.startsWith(mcp));
  assert.deepEqual(back.map((arrow) => arrow.map(strip)), []);
});

Deno.test("the arrow finder finds a way back into a folder through another module", () => {
  const graph = new Map([
    ["in/a", new Set(["out/b"])],
    ["out/b", new Set(["out/c"])],
    ["out/c", new Set(["in/d"])],
    ["in/d", new Set<string>()],
    ["out/e", new Set(["in/a"])],
  ]);
  const inside = (module: string) => module.startsWith("in/");
  assert.deepEqual(arrowsBack(graph, inside), [["in/a", "out/b", "in/d"]]);
  graph.set("out/c", new Set());
  assert.deepEqual(arrowsBack(graph, inside), []);
});

Deno.test("the circle finder finds a circle and a self-import, and nothing in a chain", () => {
  const graph = new Map([
    ["a", new Set(["b"])],
    ["b", new Set(["c"])],
    ["c", new Set(["a", "d"])],
    ["d", new Set(["e"])],
    ["e", new Set<string>()],
    ["s", new Set(["s"])],
  ]);
  assert.deepEqual(circles(graph), [["a", "b", "c"], ["s"]]);
  assert.deepEqual(circles(new Map([["x", new Set(["y"])], ["y", new Set<string>()]])), []);
});
