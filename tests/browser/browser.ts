/**
 * A real browser for the inspector test: Debian's chromium, driven by playwright-core from npm
 * (installed into npm/node_modules by the test itself; playwright-core downloads no browser). A
 * missing chromium fails the test with the command that installs it; nothing is skipped.
 *
 * Only the few Playwright calls the test makes are typed here, so `deno check` does not need the
 * npm folder installed.
 */
import { createRequire } from "node:module";
import { run } from "../runtime/process.ts";

const HERE = new URL("./npm/", import.meta.url).pathname;

/** The parts of a Playwright `Locator` the test uses. */
export interface Locator {
  click(): Promise<void>;
  count(): Promise<number>;
  textContent(): Promise<string | null>;
  innerText(): Promise<string>;
  getAttribute(name: string): Promise<string | null>;
  inputValue(): Promise<string>;
  isVisible(): Promise<boolean>;
  nth(index: number): Locator;
  first(): Locator;
  locator(selector: string): Locator;
  focus(): Promise<void>;
  waitFor(options?: { state?: "attached" | "visible" | "hidden" }): Promise<void>;
}

/** The parts of a Playwright `Page` the test uses. */
export interface Page {
  goto(url: string): Promise<unknown>;
  url(): string;
  fill(selector: string, value: string): Promise<void>;
  click(selector: string): Promise<void>;
  locator(selector: string): Locator;
  keyboard: { press(key: string): Promise<void> };
  evaluate<T>(fn: string | (() => T)): Promise<T>;
  waitForFunction(fn: string, arg?: unknown, options?: { timeout?: number }): Promise<unknown>;
  screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown>;
  selectOption(selector: string, value: string): Promise<unknown>;
  setViewportSize(size: { width: number; height: number }): Promise<void>;
  waitForEvent(event: "download"): Promise<Download>;
  addInitScript(script: string): Promise<void>;
  on(
    event: "dialog",
    listener: (dialog: { type(): string; dismiss(): Promise<void> }) => void,
  ): void;
  on(event: "console", listener: (message: { type(): string; text(): string }) => void): void;
  on(event: "pageerror", listener: (error: Error) => void): void;
  on(event: "response", listener: (response: { status(): number; url(): string }) => void): void;
  on(
    event: "request",
    listener: (
      request: { method(): string; url(): string; headers(): Record<string, string> },
    ) => void,
  ): void;
}

/** The parts of a Playwright `Download` the test uses. */
export interface Download {
  suggestedFilename(): string;
  path(): Promise<string>;
}

/** The parts of a Playwright `Browser` the test uses. */
export interface Browser {
  newPage(options?: { viewport?: { width: number; height: number } }): Promise<Page>;
  version(): string;
  close(): Promise<void>;
}

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** The system chromium, or an error that says how to install it. */
export async function chromiumPath(): Promise<string> {
  for (const path of CANDIDATES) {
    try {
      if ((await Deno.stat(path)).isFile) return path;
    } catch {
      // Not there; try the next.
    }
  }
  throw new Error(
    "chromium not found (looked for /usr/bin/chromium): the inspector's browser test needs it; " +
      "install it with `apt-get install -y chromium` (.ci/run does so when it is missing)",
  );
}

/** Installs playwright-core (a no-op when up to date) and launches one headless chromium. */
export async function launch(): Promise<Browser> {
  const executablePath = await chromiumPath();
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: HERE });
  // playwright-core is CommonJS: loaded with require, as Node would.
  const playwright = createRequire(HERE)("playwright-core") as {
    chromium: {
      launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<
        Browser
      >;
    };
  };
  return await playwright.chromium.launch({
    executablePath,
    headless: true,
    // One renderer, no GPU: the machine is shared.
    args: ["--disable-gpu", "--disable-dev-shm-usage", "--renderer-process-limit=1"],
  });
}

/**
 * Bundles a JavaScript file again as wrangler does when it deploys a Worker whose `main` is a
 * built file: esbuild (the version wrangler pins) with keepNames on (wrangler's default), ESM,
 * ES2022, the workerd conditions. keepNames adds `__name(fn, "name")` calls around the functions
 * of the bundle, which is what a script sent as a function's own source cannot survive.
 *
 * @param entry The built file, e.g. the `deno bundle` of edge/cloudflare.ts.
 * @param outfile Where the bundle goes.
 */
export async function wranglerBundle(entry: string, outfile: string): Promise<void> {
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: HERE });
  const esbuild = createRequire(HERE)("esbuild") as {
    build(options: Record<string, unknown>): Promise<{ errors: unknown[] }>;
  };
  const result = await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    target: "es2022",
    keepNames: true,
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    logLevel: "silent",
  });
  if (result.errors.length > 0) throw new Error(JSON.stringify(result.errors));
}
