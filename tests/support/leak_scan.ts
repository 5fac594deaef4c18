/**
 * The suite-wide leak scan, preloaded into every test module by `deno task test`
 * (`--preload tests/support/leak_scan.ts`).
 *
 * A canary secret is planted in raw data, exception messages, store errors and Redis URLs and
 * tokens across the suite. This module searches everything agent-facing that any test produces
 * for it:
 * - every result of `ToolBoundary.invoke`, `endRun` and `endRunReport`;
 * - every HTTP response built in process (the Hono app under `app.request()` or `Deno.serve`),
 *   body and headers, as it is constructed;
 * - every response of the app's routes read over real HTTP (servers in other processes:
 *   `deno serve`, workerd, Bun), body and headers, as it is read.
 *
 * Canonical records read by the harness are exempt in their `raw`, `request` and `failure`
 * fields only: holding the raw response, the agent's own request and what the tool threw is what
 * a record is for (tests/core/failure_test.ts checks that a thrown canary lands there only). Traffic to the
 * Upstash-compatible test endpoint is store traffic, not agent-facing, and is not scanned.
 *
 * A leak throws where it is found (so the test that produced it fails) and, in case a caller
 * swallowed that, makes the module exit non-zero when it unloads.
 */
import { ToolBoundary } from "../../src/core/boundary.ts";
import { CANARY_SECRET } from "../../src/testing/fakes.ts";

/** Planted by tests/stores/upstash_store_test.ts in raw data and request payloads. */
const STORE_CANARY = "canary-7c1f-secret";
const CANARIES = [CANARY_SECRET, STORE_CANARY];
const APP_PATH = /^\/(v1\/|healthz|openapi\.json)/;

const seen = { results: 0, responses: 0, leaks: [] as string[] };

function scan(where: string, text: string): void {
  for (const canary of CANARIES) {
    if (text.includes(canary)) {
      const message = `leak scan: ${where} carries a canary secret: ${text.slice(0, 300)}`;
      seen.leaks.push(message);
      throw new Error(message);
    }
  }
}

/** A canonical record's raw response, request and failure are harness data by design. */
function withoutRecordPayloads(text: string): string {
  if (!text.includes('"expiresAt"') || !text.includes('"agentResult"')) return text;
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object" && "expiresAt" in parsed && "agentResult" in parsed) {
      const { raw: _raw, request: _request, failure: _failure, ...rest } = parsed;
      return JSON.stringify(rest);
    }
  } catch {
    // Not JSON: scanned as it is.
  }
  return text;
}

function headerText(headers: HeadersInit | Headers | undefined): string {
  if (headers === undefined) return "";
  const lines: string[] = [];
  new Headers(headers).forEach((value, name) => lines.push(`${name}: ${value}`));
  return lines.join("\n");
}

// Agent-facing results of the library.
for (const method of ["invoke", "endRun", "endRunReport"] as const) {
  const original = ToolBoundary.prototype[method] as (...args: unknown[]) => Promise<unknown>;
  Object.defineProperty(ToolBoundary.prototype, method, {
    configurable: true,
    writable: true,
    value: async function (this: ToolBoundary, ...args: unknown[]) {
      const result = await original.apply(this, args);
      seen.results++;
      scan(`ToolBoundary.${method}() result`, JSON.stringify(result));
      return result;
    },
  });
}

// HTTP responses built in this process.
const NativeResponse = globalThis.Response;
class ScannedResponse extends NativeResponse {
  constructor(body?: BodyInit | null, init?: ResponseInit) {
    if (typeof body === "string") {
      seen.responses++;
      scan("an HTTP response body", withoutRecordPayloads(body));
    }
    scan("HTTP response headers", headerText(init?.headers));
    super(body, init);
  }

  static override json(data: unknown, init?: ResponseInit): Response {
    return new ScannedResponse(JSON.stringify(data), {
      ...init,
      headers: {
        "content-type": "application/json",
        ...Object.fromEntries(new Headers(init?.headers)),
      },
    });
  }
}
globalThis.Response = ScannedResponse as typeof Response;

// Responses of the app's routes read over real HTTP.
const nativeText = NativeResponse.prototype.text;
NativeResponse.prototype.text = async function (this: Response): Promise<string> {
  const text = await nativeText.call(this);
  if (this.url !== "" && APP_PATH.test(new URL(this.url).pathname)) {
    seen.responses++;
    scan(`GET ${new URL(this.url).pathname} response body`, withoutRecordPayloads(text));
    scan("HTTP response headers", headerText(this.headers));
  }
  return text;
};
NativeResponse.prototype.json = async function (this: Response): Promise<unknown> {
  return JSON.parse(await this.text());
};

addEventListener("unload", () => {
  if (seen.leaks.length > 0) {
    console.error(`leak scan: ${seen.leaks.length} leak(s):\n${seen.leaks.join("\n")}`);
    Deno.exit(1);
  }
  if (seen.results + seen.responses > 0) {
    console.log(
      `LEAKSCAN ${JSON.stringify({ results: seen.results, responses: seen.responses, leaks: 0 })}`,
    );
  }
});
