/**
 * The Bun entry, bundled, running under Bun (npm package `bun`).
 */
import assert from "node:assert/strict";
import { AGENT_TOKEN, HARNESS_TOKEN, over, wholeRun } from "./flow.ts";
import { freePort, start } from "./process.ts";
import { bundle, npmBin } from "./setup.ts";

Deno.test("bun: the Bun bundle serves a whole run, and refuses to start without tokens", async () => {
  const bin = await npmBin();
  const dir = await Deno.makeTempDir({ prefix: "tb-bun-" });
  try {
    const entry = await bundle("edge/bun.ts", dir);
    const refused = start(`${bin}/bun`, [entry], {
      env: { AGENT_TOKEN, HARNESS_TOKEN: "" },
    });
    const status = await refused.status;
    assert.notEqual(status.code, 0);
    assert.match(
      refused.output(),
      /Refusing to start: AGENT_TOKEN and HARNESS_TOKEN/,
    );

    const port = freePort();
    const child = start(`${bin}/bun`, [entry], {
      env: {
        AGENT_TOKEN,
        HARNESS_TOKEN,
        PORT: String(port),
        HOST: "127.0.0.1",
      },
    });
    try {
      await child.waitFor(
        /memory store, listening on http:\/\/127\.0\.0\.1:\d+/,
      );
      const { steps } = await wholeRun(over(`http://127.0.0.1:${port}`));
      console.log(`bun: ${steps.join("; ")}`);
    } finally {
      await child.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
