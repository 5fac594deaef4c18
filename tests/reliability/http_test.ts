/**
 * HTTP abuse against the Hono app on the Upstash store: missing, wrong and other-role tokens;
 * oversized bodies refused before parsing; malformed JSON; wrong content types; unsafe IDs in
 * paths; methods not allowed. Each gets the right status and a safe JSON body, and nothing is
 * stored (redis-server's DBSIZE is unchanged). Every response (status, headers, body) is scanned
 * for the canary, the Upstash token and URL.
 */
import { ERROR_MESSAGES } from "../../src/mod.ts";
import { HTTP_ERROR_MESSAGES } from "../../src/hono/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import { check, checkEqual, figures, report } from "./figures.ts";
import { AGENT_TOKEN, HARNESS_TOKEN, jsonInit, startHttpSystem } from "./http.ts";

const MESSAGES: Record<string, string> = { ...ERROR_MESSAGES, ...HTTP_ERROR_MESSAGES };

Deno.test("http: abusive requests get the right status and a safe body, and store nothing", async () => {
  const f = figures("http-abuse", "upstash");
  const sys = await startHttpSystem(f);
  try {
    // One live run to aim at.
    const started = await sys.request(
      "/v1/runs",
      jsonInit(HARNESS_TOKEN, "POST", { runId: "run-http", ttlMs: 600_000, budget: { calls: 5 } }),
    );
    checkEqual(f, started.status, 201, "start run");
    const dbsize = async () => (await sys.fixture.direct(["DBSIZE"])) as number;
    const call = { toolCallId: "call_1", toolName: "t_found", input: { q: "x" } };
    const calls = "/v1/runs/run-http/tool-calls";
    const big = (n: number) => JSON.stringify({ ...call, input: { q: "x".repeat(n) } });
    let pulled = 0;
    const endless = () =>
      new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += 65_536;
          controller.enqueue(new Uint8Array(65_536).fill(0x20));
        },
      });
    const cases: [string, string, RequestInit, number, string][] = [
      ["no token", calls, jsonInit(null, "POST", call), 401, "UNAUTHENTICATED"],
      ["wrong token", calls, jsonInit("x".repeat(32), "POST", call), 401, "UNAUTHENTICATED"],
      ["canary as token", calls, jsonInit(CANARY_SECRET, "POST", call), 401, "UNAUTHENTICATED"],
      [
        "Basic scheme",
        calls,
        {
          ...jsonInit(null, "POST", call),
          headers: {
            "content-type": "application/json",
            authorization: `Basic ${btoa(`a:${AGENT_TOKEN}`)}`,
          },
        },
        401,
        "UNAUTHENTICATED",
      ],
      ["empty bearer", calls, jsonInit("", "POST", call), 401, "UNAUTHENTICATED"],
      [
        "agent token starts a run",
        "/v1/runs",
        jsonInit(AGENT_TOKEN, "POST", { ttlMs: 1_000 }),
        403,
        "FORBIDDEN",
      ],
      [
        "agent token reads a record",
        `${calls}/call_1`,
        jsonInit(AGENT_TOKEN, "GET"),
        403,
        "FORBIDDEN",
      ],
      [
        "agent token ends a run",
        "/v1/runs/run-http/end",
        jsonInit(AGENT_TOKEN, "POST"),
        403,
        "FORBIDDEN",
      ],
      ["agent token lists tools", "/v1/tools", jsonInit(AGENT_TOKEN, "GET"), 403, "FORBIDDEN"],
      [
        "no token starts a run",
        "/v1/runs",
        jsonInit(null, "POST", { ttlMs: 1_000 }),
        401,
        "UNAUTHENTICATED",
      ],
      ["no token reads a record", `${calls}/call_1`, jsonInit(null, "GET"), 401, "UNAUTHENTICATED"],
      [
        "no token ends a run",
        "/v1/runs/run-http/end",
        jsonInit(null, "POST"),
        401,
        "UNAUTHENTICATED",
      ],
      [
        "oversized tool call",
        calls,
        jsonInit(AGENT_TOKEN, "POST", big(4 * 4096 + 8192)),
        413,
        "REQUEST_TOO_LARGE",
      ],
      [
        "oversized invalid JSON",
        calls,
        jsonInit(AGENT_TOKEN, "POST", "{".repeat(30_000)),
        413,
        "REQUEST_TOO_LARGE",
      ],
      [
        "endless streamed body",
        calls,
        {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${AGENT_TOKEN}` },
          body: endless(),
        },
        413,
        "REQUEST_TOO_LARGE",
      ],
      [
        "oversized start run",
        "/v1/runs",
        jsonInit(HARNESS_TOKEN, "POST", { ttlMs: 1_000, pad: "x".repeat(70_000) }),
        413,
        "REQUEST_TOO_LARGE",
      ],
      [
        "malformed JSON call",
        calls,
        jsonInit(AGENT_TOKEN, "POST", '{"toolCallId":'),
        400,
        "INVALID_REQUEST",
      ],
      [
        "malformed JSON run",
        "/v1/runs",
        jsonInit(HARNESS_TOKEN, "POST", "{,}"),
        400,
        "INVALID_REQUEST",
      ],
      ["array body", calls, jsonInit(AGENT_TOKEN, "POST", [call]), 400, "INVALID_REQUEST"],
      ["null body", calls, jsonInit(AGENT_TOKEN, "POST", "null"), 400, "INVALID_REQUEST"],
      ["number body", "/v1/runs", jsonInit(HARNESS_TOKEN, "POST", "42"), 400, "INVALID_REQUEST"],
      ["empty body", calls, jsonInit(AGENT_TOKEN, "POST", ""), 400, "INVALID_REQUEST"],
      [
        "text/plain",
        calls,
        {
          ...jsonInit(AGENT_TOKEN, "POST", call),
          headers: { authorization: `Bearer ${AGENT_TOKEN}`, "content-type": "text/plain" },
        },
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      ],
      [
        "form body",
        calls,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${AGENT_TOKEN}`,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: "toolCallId=call_1",
        },
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      ],
      [
        "no content type",
        calls,
        {
          method: "POST",
          headers: { authorization: `Bearer ${AGENT_TOKEN}` },
          body: new Blob([JSON.stringify(call)]),
        },
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      ],
      [
        "json-ish type",
        "/v1/runs",
        {
          ...jsonInit(HARNESS_TOKEN, "POST", { ttlMs: 1_000 }),
          headers: {
            authorization: `Bearer ${HARNESS_TOKEN}`,
            "content-type": "application/jsonp",
          },
        },
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      ],
      [
        "braces in run path",
        "/v1/runs/%7Brun%7D/tool-calls",
        jsonInit(AGENT_TOKEN, "POST", call),
        400,
        "INVALID_RUN_ID",
      ],
      [
        "colon in run path",
        "/v1/runs/run:http/tool-calls",
        jsonInit(AGENT_TOKEN, "POST", call),
        400,
        "INVALID_RUN_ID",
      ],
      [
        "encoded slash in run path",
        "/v1/runs/run%2Fhttp/tool-calls",
        jsonInit(AGENT_TOKEN, "POST", call),
        400,
        "INVALID_RUN_ID",
      ],
      [
        "NUL in run path",
        "/v1/runs/run%00/tool-calls",
        jsonInit(AGENT_TOKEN, "POST", call),
        400,
        "INVALID_RUN_ID",
      ],
      [
        "Unicode run path",
        "/v1/runs/run-%C3%A9/tool-calls",
        jsonInit(AGENT_TOKEN, "POST", call),
        400,
        "INVALID_RUN_ID",
      ],
      [
        "129-character run path",
        `/v1/runs/${"r".repeat(129)}/tool-calls`,
        jsonInit(AGENT_TOKEN, "POST", call),
        400,
        "INVALID_RUN_ID",
      ],
      [
        "10,000-character run path",
        `/v1/runs/${"r".repeat(10_000)}/end`,
        jsonInit(HARNESS_TOKEN, "POST"),
        400,
        "INVALID_RUN_ID",
      ],
      [
        "space in call path",
        `${calls}/call%201`,
        jsonInit(HARNESS_TOKEN, "GET"),
        400,
        "INVALID_TOOL_CALL_ID",
      ],
      [
        "braces in call path",
        `${calls}/%7Bx%7D`,
        jsonInit(HARNESS_TOKEN, "GET"),
        400,
        "INVALID_TOOL_CALL_ID",
      ],
      [
        "unsafe ID in body",
        calls,
        jsonInit(AGENT_TOKEN, "POST", { ...call, toolCallId: "a{b}" }),
        400,
        "INVALID_TOOL_CALL_ID",
      ],
      [
        "number ID in body",
        calls,
        jsonInit(AGENT_TOKEN, "POST", { ...call, toolCallId: 12 }),
        400,
        "INVALID_TOOL_CALL_ID",
      ],
      [
        "other run in body",
        calls,
        jsonInit(AGENT_TOKEN, "POST", { ...call, runId: "run-other" }),
        400,
        "RUN_MISMATCH",
      ],
      [
        "unknown run",
        "/v1/runs/run-none/tool-calls",
        jsonInit(AGENT_TOKEN, "POST", call),
        404,
        "RUN_NOT_FOUND",
      ],
      [
        "__proto__ as tool",
        calls,
        jsonInit(AGENT_TOKEN, "POST", { ...call, toolName: "__proto__" }),
        404,
        "UNKNOWN_TOOL",
      ],
      [
        "input text of an array",
        calls,
        jsonInit(AGENT_TOKEN, "POST", { ...call, input: "[1]" }),
        400,
        "INVALID_INPUT",
      ],
      [
        "input over the request limit",
        calls,
        jsonInit(AGENT_TOKEN, "POST", big(5_000)),
        413,
        "REQUEST_TOO_LARGE",
      ],
      ["PUT on tool calls", calls, jsonInit(AGENT_TOKEN, "PUT", call), 405, "METHOD_NOT_ALLOWED"],
      [
        "DELETE a record",
        `${calls}/call_1`,
        jsonInit(HARNESS_TOKEN, "DELETE"),
        405,
        "METHOD_NOT_ALLOWED",
      ],
      ["PATCH a run", "/v1/runs", jsonInit(HARNESS_TOKEN, "PATCH", {}), 405, "METHOD_NOT_ALLOWED"],
      [
        "GET end",
        "/v1/runs/run-http/end",
        jsonInit(HARNESS_TOKEN, "GET"),
        405,
        "METHOD_NOT_ALLOWED",
      ],
      ["unknown route", "/v1/admin", jsonInit(HARNESS_TOKEN, "GET"), 404, "NOT_FOUND"],
      [
        "dot segments",
        "/v1/runs/../../etc/passwd",
        jsonInit(HARNESS_TOKEN, "GET"),
        404,
        "NOT_FOUND",
      ],
    ];
    for (const [name, path, init, status, code] of cases) {
      f.cases++;
      const before = await dbsize();
      const seen = await sys.request(path, init);
      checkEqual(f, [name, seen.status], [name, status], `${name}: status`);
      const body = seen.json as Record<string, unknown> | null;
      check(
        f,
        body !== null && typeof body === "object",
        `${name}: body is not JSON: ${seen.text.slice(0, 100)}`,
      );
      checkEqual(f, [name, body!.status, body!.code, body!.message], [
        name,
        "ERROR",
        code,
        MESSAGES[code],
      ], name);
      check(
        f,
        (seen.headers.get("content-type") ?? "").startsWith("application/json"),
        `${name}: content type`,
      );
      checkEqual(f, seen.headers.get("cache-control"), "no-store", `${name}: cache-control`);
      if (status === 401) {
        check(f, seen.headers.has("www-authenticate"), `${name}: WWW-Authenticate`);
      }
      if (status === 405) check(f, seen.headers.has("allow"), `${name}: Allow`);
      checkEqual(f, await dbsize(), before, `${name}: something was stored`);
    }
    // The endless body was refused after reading about the limit, not all of it.
    check(f, pulled <= 4 * 4096 + 8192 + 4 * 65_536, `read ${pulled} bytes of an endless body`);
    checkEqual(f, sys.executions.size, 0, "no tool ran");
    report(f, { responsesScanned: sys.scanned.responses });
  } finally {
    await sys.stop();
  }
});
