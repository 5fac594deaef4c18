/**
 * docs/verify.py, the Python verifier, agrees with `verifyRun` on every bundle the proof tests
 * make, clean and tampered: those tests run again in a child process that writes down each
 * bundle it verifies (tests/proof/_verify.ts), and each is given to both verifiers. Also the
 * canonical JSON of both on RFC 8785's cases and on random numbers, and the program's exit codes.
 * Python 3 and its `cryptography` package must be installed (Debian: python3-cryptography): the
 * test fails, saying so, when they are not.
 */
import assert from "node:assert/strict";
import { canonicalJson, type JsonValue } from "../../src/core/json.ts";
import { verifyRun } from "../../src/verify/mod.ts";
import { ROOT, WORKSPACE_CONFIG } from "../runtime/process.ts";

/** Debian's python3 (where python3-cryptography installs), else the one on PATH. */
const PYTHON = Deno.env.get("PYTHON") ??
  (await Deno.stat("/usr/bin/python3").then(() => "/usr/bin/python3", () => "python3"));
const SCRIPT = `${ROOT}docs/verify.py`;
const FILES = [
  "tests/proof/bundle_tamper_test.ts",
  "tests/proof/store_tamper_test.ts",
  "tests/proof/http_cli_test.ts",
  "tests/proof/timestamp_test.ts",
  "tests/proof/keys_test.ts",
  "tests/proof/archive_test.ts",
  "tests/proof/cost_test.ts",
];

/**
 * Reads one JSON document per line of stdin and answers one per line: `{"canon": value}` gives
 * its canonical JSON; `{"bundle", "key", "options"}` the verdict, or `{"error": "BadInput"}`.
 */
const DRIVER = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("verify", sys.argv[1])
verify = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verify)
for line in sys.stdin:
    case = verify.parse_json(line, "case")
    if "canon" in case:
        print(json.dumps(verify.canonical_json(case["canon"])))
        continue
    options = case["options"]
    try:
        answer = verify.verify_run(case["bundle"], case["key"], options.get("keyId"),
                                   options.get("run"), options.get("tsaCertificates"))
    except verify.BadInput:
        answer = {"error": "BadInput"}
    print(json.dumps(answer))
`;

async function run(
  command: string,
  args: string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    ...(options.env ? { env: options.env } : {}),
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** Fails, loudly, without Python 3 and `cryptography`. */
async function requirePython(): Promise<void> {
  let probe;
  try {
    probe = await run(PYTHON, ["-c", "import sys, cryptography; print(sys.version_info[0])"]);
  } catch (error) {
    throw new Error(
      `${PYTHON} was not found: docs/verify.py needs Python 3 and cryptography ` +
        "(apt-get install python3-cryptography)",
      { cause: error },
    );
  }
  assert.equal(
    probe.code,
    0,
    `docs/verify.py needs the cryptography package for ${PYTHON}: ` +
      `apt-get install python3-cryptography (Debian/Ubuntu)\n${probe.stderr}`,
  );
  assert.equal(probe.stdout.trim(), "3", `${PYTHON} is not Python 3`);
}

/** Each line's answer of the driver, in order. */
async function driver(lines: string[]): Promise<unknown[]> {
  const out = await run(PYTHON, ["-c", DRIVER, SCRIPT], { stdin: lines.join("\n") + "\n" });
  assert.equal(out.code, 0, out.stderr);
  const answers = out.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.equal(answers.length, lines.length);
  return answers;
}

Deno.test("docs/verify.py gives verifyRun's verdict on every bundle of the proof tests, clean and tampered", async () => {
  await requirePython();
  const dir = await Deno.makeTempDir({ prefix: "tb-bundles-" });
  try {
    const file = `${dir}/bundles.jsonl`;
    const tests = await run(
      Deno.execPath(),
      ["test", ...WORKSPACE_CONFIG, "--allow-all", ...FILES],
      { env: { TOOL_BOUNDARY_BUNDLES: file, NO_COLOR: "1" } },
    );
    assert.equal(tests.code, 0, tests.stdout.slice(-3000) + tests.stderr.slice(-3000));
    const passed = Number(/(\d+) passed/.exec(tests.stdout)?.[1]);
    assert.ok(passed >= 20, `the proof tests ran ${passed} tests`);
    const lines = [...new Set((await Deno.readTextFile(file)).trim().split("\n"))];
    const expected: unknown[] = [];
    for (const line of lines) {
      const { bundle, key, options } = JSON.parse(line);
      expected.push(
        await verifyRun(bundle, key, options).catch((error) => {
          assert.ok(error instanceof TypeError, String(error));
          return { error: "BadInput" };
        }),
      );
    }
    const answers = await driver(lines);
    let differ = 0;
    for (let i = 0; i < lines.length; i++) {
      if (JSON.stringify(answers[i]) !== JSON.stringify(expected[i])) {
        differ++;
        console.error(
          `case ${i}: verifyRun ${JSON.stringify(expected[i])}, verify.py ${
            JSON.stringify(answers[i])
          }\n  ${lines[i]!.slice(0, 400)}`,
        );
      }
    }
    assert.equal(differ, 0, `${differ} of ${lines.length} verdicts differ`);
    // Every verdict the proof tests make is among them, so none went untried.
    const seen = new Set(expected.map((v) => {
      const verdict = v as { ok?: boolean; reason?: string; timestampedAt?: number };
      return verdict.ok === true
        ? (verdict.timestampedAt === undefined ? "ok" : "ok timestamped")
        : verdict.reason ?? "error";
    }));
    for (
      const verdict of [
        "ok",
        "ok timestamped",
        "ALTERED",
        "MISSING",
        "INSERTED",
        "REORDERED",
        "BAD_SIGNATURE",
        "UNSIGNED",
        "FACTS_ALTERED",
        "OTHER_RUN",
        "BAD_TIMESTAMP",
      ]
    ) {
      assert.ok(seen.has(verdict), `no bundle with the verdict ${verdict}`);
    }
    assert.ok(lines.length >= 200, `only ${lines.length} bundles`);
    console.log(`verify.py agrees with verifyRun on ${lines.length} bundles`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/verify.py writes canonical JSON as canonicalJson does: RFC 8785's cases and random numbers", async () => {
  await requirePython();
  const values: JsonValue[] = [
    {
      "\u20ac": 1,
      "\r": 2,
      "\ufb33": 3,
      "1": 4,
      "\ud83d\ude00": 5,
      "\u0080": 6,
      "\u00f6": 7,
      "\ud800": 8,
      "\udfff\ud800": 9,
    },
    '\u20ac$\u000f\nA\'B"\\\\"/\b\f\t\r\u2028\u2029\u001f\u007f\ud800x\udc00',
    [0, -0, 5e-324, -5e-324, 1.7976931348623157e308, 9007199254740992, 295147905179352830000],
    [9.999999999999997e22, 1e23, 999999999999999700000, 1e21, 9.999999999999997e-7, 0.000001],
    [333333333.3333332, 0.1 + 0.2, 1e-7, 123e-20, 1.5e-7, 2e21, 1e20, 100, 1.25, -0.5, 4.35],
    { b: [1, { d: true, c: null }], a: "", nested: { z: [], y: {} } },
  ];
  // Random finite doubles of every exponent.
  const view = new DataView(new ArrayBuffer(8));
  const random: number[] = [];
  while (random.length < 3000) {
    crypto.getRandomValues(new Uint8Array(view.buffer));
    const n = view.getFloat64(0);
    if (Number.isFinite(n)) random.push(n);
  }
  values.push(random);
  // Through JSON.stringify, which writes each number so that it reads back as itself.
  const lines = values.map((canon) => JSON.stringify({ canon }));
  const answers = await driver(lines);
  values.forEach((value, i) =>
    assert.equal(answers[i], canonicalJson(value), lines[i]!.slice(0, 200))
  );
});

Deno.test("docs/verify.py exits as the verify command does: 0, 1 with the verdict, 2 for bad input", async () => {
  await requirePython();
  const dir = await Deno.makeTempDir({ prefix: "tb-verify-py-" });
  try {
    // A bundle of the by-hand test's kind: made here by the boundary.
    const { sealedRun, keys } = await import("./_run.ts");
    const { MemoryStore } = await import("../../src/memory/mod.ts");
    const { boundary, runId } = await sealedRun(new MemoryStore());
    const bundle = await boundary.exportRun(runId);
    await Deno.writeTextFile(`${dir}/public.jwk`, JSON.stringify(keys.publicKey));
    await Deno.writeTextFile(
      `${dir}/ledger-key.json`,
      JSON.stringify({ keyId: "not-the-key-id", publicKey: keys.publicKey }),
    );
    const both = async (bundleText: string, ...extra: string[]) => {
      await Deno.writeTextFile(`${dir}/bundle.json`, bundleText);
      const files = [`${dir}/bundle.json`, ...extra];
      const python = await run(PYTHON, [SCRIPT, ...files]);
      const deno = await run(Deno.execPath(), [
        "run",
        "--allow-read",
        "src/verify/mod.ts",
        ...files,
      ]);
      assert.equal(python.code, deno.code, `${extra.join(" ")}: ${python.stderr}`);
      assert.equal(python.stdout, deno.stdout);
      return python.code;
    };
    const text = JSON.stringify(bundle);
    assert.equal(await both(text, `${dir}/public.jwk`), 0);
    assert.equal(await both(text, `${dir}/ledger-key.json`), 1);
    const edited = structuredClone(bundle);
    edited.records[0]!.createdAt++;
    assert.equal(await both(JSON.stringify(edited), `${dir}/public.jwk`), 1);
    assert.equal(
      await both(text, `${dir}/public.jwk`, "--run-id", runId, "--started-at", "1"),
      1,
    );
    assert.equal(
      await both(
        text,
        `${dir}/public.jwk`,
        "--run-id",
        runId,
        "--started-at",
        String(bundle.run.startedAt),
      ),
      0,
    );
    for (
      const [bad, extra] of [
        ["not json", [`${dir}/public.jwk`]],
        ['{"format":"other"}', [`${dir}/public.jwk`]],
        [text.replace('"format":', '"format":"x","format":'), [`${dir}/public.jwk`]],
        [text.replace('"startedAt":', '"startedAt":NaN,"x":'), [`${dir}/public.jwk`]],
        [text, [`${dir}/missing.jwk`]],
        [text, [`${dir}/public.jwk`, "--tsa"]],
        [text, [`${dir}/public.jwk`, "--tsa", `${dir}/public.jwk`]],
        [text, [`${dir}/public.jwk`, "--started-at", "1"]],
        [text, []],
      ] as [string, string[]][]
    ) {
      assert.equal(await both(bad, ...extra), 2, `${bad.slice(0, 40)} ${extra.join(" ")}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
