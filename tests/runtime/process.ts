/**
 * Child processes for the runtime tests: start, wait for a line, stop. Output is drained all the
 * time (a full pipe would block the child) and kept for error messages.
 */

/** A started child process. */
export interface Child {
  /** Everything printed so far, stdout and stderr interleaved. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects on exit or timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The exit status, once it exits. */
  readonly status: Promise<Deno.CommandStatus>;
  /** Closes stdin (if piped) or sends SIGTERM, and waits for the exit. */
  stop(): Promise<Deno.CommandStatus>;
}

/**
 * Spawns a command.
 *
 * @param command Executable.
 * @param args Arguments.
 * @param options Working directory, environment, and whether stdin stays open as a stop signal.
 */
export function start(
  command: string,
  args: string[],
  options: {
    cwd?: string;
    env?: Record<string, string>;
    stdinStops?: boolean;
  } = {},
): Child {
  const process = new Deno.Command(command, {
    args,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
    stdin: options.stdinStops ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
    }
  };
  const drained = Promise.all([drain(process.stdout), drain(process.stderr)]);
  let exited = false;
  const status = process.status.then(async (status) => {
    exited = true;
    await drained;
    return status;
  });
  return {
    output: () => text,
    status,
    async waitFor(pattern, timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const match = text.match(pattern);
        if (match) return match;
        if (exited) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(
        `${command} ${exited ? "exited" : "timed out"} before printing ${pattern}:\n${text}`,
      );
    },
    async stop() {
      if (!exited) {
        if (options.stdinStops) await process.stdin.close();
        else process.kill("SIGTERM");
      }
      return await status;
    },
  };
}

/** Runs a command to its end; throws with its output when it fails. */
export async function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const out = await new Deno.Command(command, {
    args,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  if (!out.success) {
    throw new Error(
      `${command} ${args.join(" ")} failed (${out.code}):\n${text}`,
    );
  }
  return text;
}

/** A TCP port that was free a moment ago. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** The repository root. */
export const ROOT: string = new URL("../../", import.meta.url).pathname;

/**
 * `--config` for a child `deno` that runs this repository's files with the workspace's
 * configuration (the core, packages/ and the test dependencies), as the tests themselves run.
 */
export const WORKSPACE_CONFIG: readonly string[] = ["--config", `${ROOT}deno.dev.json`];

/**
 * Serves an entry of edge/ with Deno on a free loopback port, and resolves with the child and its
 * base URL once it listens. A module with a default `fetch` export runs under `deno serve`; one
 * that calls `Deno.serve` itself (PORT, HOST) under `deno run`.
 *
 * @param entry Path from the repository root, e.g. `edge/deno.ts`.
 * @param env Its environment (on top of this process's).
 * @param mode `serve` or `run`. @default "serve"
 */
export async function serveDeno(
  entry: string,
  env: Record<string, string>,
  mode: "serve" | "run" = "serve",
): Promise<[Child, string]> {
  const args = mode === "run"
    ? ["run", ...WORKSPACE_CONFIG, "--allow-net", "--allow-env", entry]
    : [
      "serve",
      ...WORKSPACE_CONFIG,
      ...["--allow-net", "--allow-env", "--host", "127.0.0.1", "--port", "0", entry],
    ];
  const child = start(Deno.execPath(), args, {
    cwd: ROOT,
    env: { ...env, HOST: "127.0.0.1", PORT: "0" },
  });
  try {
    const [, base] = await child.waitFor(/Listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
    return [child, base!];
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** Whether a process runs (not gone, and not a zombie waiting for its parent). Linux only. */
export async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return false;
  }
}

/** Waits until a process is gone; throws after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (await alive(pid)) {
    if (Date.now() >= until) throw new Error(`process ${pid} still runs`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
