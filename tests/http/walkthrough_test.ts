/**
 * docs/http.md's "Walkthrough with curl", run as written: the dev server started as the doc starts
 * it, each `curl` command of the section run by bash, and each answer compared with the one the doc
 * shows under it (`...` stands for any text, the run ID for the run's, a 13-digit number for any
 * time).
 */
import assert from "node:assert/strict";
import { freePort, ROOT, start } from "../runtime/process.ts";

const DOC = `${ROOT}docs/http.md`;

/** One command of the walkthrough and the answer the doc shows for it (`null`: none shown). */
interface Step {
  command: string;
  answer: string | null;
}

/** The section's shell blocks: the first sets up, the others hold the steps. */
function walkthrough(text: string): { setup: string; steps: Step[] } {
  const start = text.indexOf("## Walkthrough with curl");
  assert.ok(start >= 0, "docs/http.md has the walkthrough");
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  assert.ok(blocks.length >= 5, `${blocks.length} blocks`);
  const steps: Step[] = [];
  for (const block of blocks.slice(1)) {
    const lines = block.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("curl ")) continue;
      let command = lines[i]!;
      while (command.endsWith("\\")) command = `${command}\n${lines[++i]}`;
      const answer: string[] = [];
      while (lines[i + 1]?.startsWith("# ")) answer.push(lines[++i]!.slice(2).trim());
      steps.push({ command, answer: answer.length === 0 ? null : answer.join("") });
    }
  }
  return { setup: blocks[0]!, steps };
}

/** The doc's answer as a pattern over the compact JSON the server sends. */
function pattern(answer: string, runId: string): RegExp {
  const escaped = answer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    .replaceAll("\\.\\.\\.", ".*?")
    .replaceAll("run-1", runId)
    .replace(/\b\d{13}\b/g, "\\d{13}");
  return new RegExp(`^${escaped}$`);
}

Deno.test("docs/http.md's curl walkthrough answers as the doc shows, step by step", async () => {
  const { setup, steps } = walkthrough(await Deno.readTextFile(DOC));
  // The tokens the doc sets, and a port of this test's own.
  const agent = /AGENT_TOKEN=(\S+)/.exec(setup)![1]!;
  const harness = /HARNESS_TOKEN=(\S+)/.exec(setup)![1]!;
  assert.match(setup, new RegExp(`export TB=\\S+ AGENT=${agent} HARNESS=${harness}`));
  assert.match(setup, /^RUN=run-\$\(date \+%s\)$/m);
  const port = freePort();
  const child = start(
    Deno.execPath(),
    ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-run", "edge/dev.ts"],
    {
      cwd: ROOT,
      env: {
        AGENT_TOKEN: agent,
        HARNESS_TOKEN: harness,
        SERVER_SECRET: "",
        UPSTASH_REDIS_REST_URL: "",
        UPSTASH_REDIS_REST_TOKEN: "",
        PORT: String(port),
      },
    },
  );
  try {
    await child.waitFor(/dev server on http:\/\/127\.0\.0\.1:\d+/);
    const runId = `run-${Math.floor(Date.now() / 1000)}`;
    const env = { TB: `http://127.0.0.1:${port}`, AGENT: agent, HARNESS: harness, RUN: runId };
    const shown: string[] = [];
    // Files the doc writes (bundle.json, public.jwk) land in a folder of the test's own.
    const cwd = await Deno.makeTempDir();
    for (const step of steps) {
      const out = await new Deno.Command("bash", {
        args: ["-c", step.command],
        cwd,
        env,
        stdin: "null",
      }).output();
      const body = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, `${step.command}\n${new TextDecoder().decode(out.stderr)}`);
      if (step.answer === null) {
        // Not shown: still an answer, on stdout or in the file the command writes.
        const file = /> (\S+)$/.exec(step.command)?.[1];
        JSON.parse(file === undefined ? body : await Deno.readTextFile(`${cwd}/${file}`));
      } else {
        assert.match(body, pattern(step.answer, runId), `${step.command}\n=> ${body}`);
      }
      shown.push(step.command.split("\n").at(-1)!.slice(0, 90));
    }
    await Deno.remove(cwd, { recursive: true });
    // Every demo tool the walkthrough names is called in it, with an input.
    for (const tool of ["search_runbook", "search_logs", "export_traces", "trace_lookup"]) {
      assert.ok(steps.some((step) => step.command.includes(`"toolName":"${tool}"`)), tool);
    }
    assert.ok(steps.length >= 12, `${steps.length} steps`);
  } finally {
    await child.stop();
  }
});
