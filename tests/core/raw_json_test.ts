/**
 * The text path: an executor that returns `rawJson(text)` or a `Response`, on MemoryStore and on
 * UpstashStore (real redis-server behind the Upstash-compatible endpoint). The text is parsed
 * once and the record stores what was parsed, written out again, so the record means exactly
 * what the projector saw: `-0` as `0`, numbers past double precision as the double they parsed
 * to, a member name given twice as its last value, lone surrogates escaped, no whitespace. A text
 * that is not JSON, too deep or too large is refused, as any raw response; a `Response`'s body is
 * read within `rawBytes` (one past it is never read whole), under the tool's stop, through the
 * runtime's own accessors.
 */
import assert from "node:assert/strict";
import {
  type BoundaryResult,
  defineTool,
  type JsonObject,
  type JsonValue,
  RawJson,
  rawJson,
  ToolBoundary,
  type ToolDefinition,
  toolError,
} from "../../src/mod.ts";
import type { CanonicalRecord, Limits } from "../../src/harness/mod.ts";
import type { Store, StoredRecord } from "../../src/store/mod.ts";
import { CANARY_SECRET } from "../../src/testing/mod.ts";
import { STORES, uniqueId } from "../support/stores.ts";

type Execute = ToolDefinition<JsonObject, JsonValue>["execute"];

interface Outcome {
  result: BoundaryResult;
  record: CanonicalRecord | null;
  stored: StoredRecord | null;
  /** What the projector was given, each time it ran. */
  projected: unknown[];
}

interface CallOptions {
  limits?: Partial<Limits>;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Runs in the projector with what it was given; its answer is the content. */
  project?: (raw: JsonValue) => unknown;
}

/** One call of a tool whose executor is `execute`, on a fresh boundary over `store`. */
async function callOnce(
  store: Store,
  execute: Execute,
  options: CallOptions = {},
): Promise<Outcome> {
  const projected: unknown[] = [];
  const tool = defineTool({
    name: "text_tool",
    readOnly: true,
    execute,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    project: (raw: JsonValue) => {
      projected.push(raw);
      const content = options.project?.(raw) ?? null;
      return { evidence: "EVIDENCE_FOUND", scope: "the text", content };
    },
  });
  const boundary = new ToolBoundary({
    store,
    tools: [tool],
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  const run = await boundary.startRun({ ttlMs: 60_000 });
  const toolCallId = uniqueId("call");
  const result = await boundary.invoke(
    run,
    { toolCallId, runId: run.runId, toolName: "text_tool", input: {} },
    options.signal === undefined ? undefined : { signal: options.signal },
  );
  return {
    result,
    record: await boundary.inspect(run.runId, toolCallId),
    stored: await store.get(run.runId, toolCallId),
    projected,
  };
}

/** The call ended READY, the record holds `raw` as `text`, and the projector saw exactly `raw`. */
function assertStored(outcome: Outcome, raw: JsonValue, text: string): void {
  assert.equal(outcome.result.status, "READY", JSON.stringify(outcome.result));
  assert.equal(outcome.stored?.rawJson, text);
  assert.deepEqual(outcome.record?.raw, raw);
  assert.equal(outcome.projected.length, 1);
  assert.deepEqual(outcome.projected[0], raw);
}

/** The call ended ERROR `code`, the record keeps `raw` (none when undefined), no projector ran. */
function assertFailed(outcome: Outcome, code: string, raw?: JsonValue): void {
  assert.equal(outcome.result.status === "ERROR" && outcome.result.code, code);
  assert.equal(outcome.record?.status, "ERROR");
  assert.equal(outcome.record?.errorCode, code);
  if (raw === undefined) assert.equal(outcome.stored?.rawJson, null);
  else assert.deepEqual(outcome.record?.raw, raw);
  assert.deepEqual(outcome.projected, []);
}

/** Every path in `value` that holds `-0`. */
function negativeZeros(value: unknown, path = "$"): string[] {
  if (Object.is(value, -0)) return [path];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => negativeZeros(item, `${path}.${key}`));
}

const encoder = new TextEncoder();

/** A JSON response of `chunks`, enqueued one per pull; `after` runs at each pull. */
function streamed(
  chunks: (string | Uint8Array | unknown)[],
  init: ResponseInit = { headers: { "content-type": "application/json" } },
  after?: (pull: number, controller: ReadableStreamDefaultController<unknown>) => void,
): Response {
  let pull = 0;
  const stream = new ReadableStream<unknown>({
    pull(controller) {
      const chunk = chunks[pull];
      after?.(pull, controller);
      pull++;
      if (chunk === undefined) controller.close();
      else controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
    },
  }, { highWaterMark: 0 });
  return new Response(stream as ReadableStream<Uint8Array>, init);
}

const JSON_HEADERS = { headers: { "content-type": "application/json" } };

// --- rawJson(text) ---------------------------------------------------------------------------

async function textIsParsedOnceAndStoredAsWhatWasParsed(store: Store) {
  const text = ' {\n  "hits": ["12:01 timeout", "12:02 retry"],\n  "secret": "' + CANARY_SECRET +
    '",\n  "n": 1.50 }\n';
  const outcome = await callOnce(store, () => rawJson(text), {
    project: (raw) => (raw as { hits: string[] }).hits,
  });
  const raw = { hits: ["12:01 timeout", "12:02 retry"], secret: CANARY_SECRET, n: 1.5 };
  assertStored(outcome, raw, JSON.stringify(raw));
  assert.deepEqual(
    outcome.result.status === "READY" && outcome.result.content,
    ["12:01 timeout", "12:02 retry"],
  );
}

async function negativeZeroIsZero(store: Store) {
  const outcome = await callOnce(
    store,
    () => rawJson('{"a":-0,"b":[-0.0,-0e5,{"c":-0}],"d":-1e-400}'),
  );
  const raw = { a: 0, b: [0, 0, { c: 0 }], d: 0 };
  assertStored(outcome, raw, '{"a":0,"b":[0,0,{"c":0}],"d":0}');
  assert.deepEqual(negativeZeros(outcome.projected[0]), [], "the projector saw no -0");
  assert.deepEqual(negativeZeros(outcome.record?.raw), []);
  const top = await callOnce(store, () => rawJson("-0"));
  assertStored(top, 0, "0");
  assert.ok(Object.is(top.projected[0], 0));
}

async function hugeNumbersAreTheDoubleTheProjectorSaw(store: Store) {
  const outcome = await callOnce(
    store,
    () => rawJson('{"big":12345678901234567890,"long":0.1000000000000000055511151231257827}'),
  );
  const raw = { big: 12345678901234567000, long: 0.1 };
  assertStored(outcome, raw, '{"big":12345678901234567000,"long":0.1}');
  for (const text of ["1e400", '{"n":-1e400}', "[1,2,1E999]"]) {
    assertFailed(await callOnce(store, () => rawJson(text)), "SERIALIZATION_FAILED");
  }
}

async function duplicateNamesKeepTheLastAsParsed(store: Store) {
  const outcome = await callOnce(store, () => rawJson('{"a":1,"b":{"c":1,"c":[2]},"a":"last"}'));
  assertStored(outcome, { a: "last", b: { c: [2] } }, '{"a":"last","b":{"c":[2]}}');
}

async function loneSurrogatesAreEscaped(store: Store) {
  // One escaped in the text, one as a lone UTF-16 unit of the string itself.
  const outcome = await callOnce(store, () => rawJson('{"escaped":"\\ud800x","bare":"\udc00y"}'));
  assertStored(
    outcome,
    { escaped: "\ud800x", bare: "\udc00y" },
    '{"escaped":"\\ud800x","bare":"\\udc00y"}',
  );
}

async function prototypeNamesStayOwnMembers(store: Store) {
  const outcome = await callOnce(store, () => rawJson('{"__proto__":{"polluted":1},"x":1}'));
  assert.equal(outcome.result.status, "READY");
  assert.equal(outcome.stored?.rawJson, '{"__proto__":{"polluted":1},"x":1}');
  const seen = outcome.projected[0] as Record<string, unknown>;
  assert.ok(Object.hasOwn(seen, "__proto__"));
  assert.equal(Object.getPrototypeOf(seen), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
}

async function textThatIsNotJsonIsRefused(store: Store) {
  for (const text of ["", "{", "undefined", "{'a':1}", '{"a":1}x', "NaN", "[1,]"]) {
    assertFailed(await callOnce(store, () => rawJson(text)), "SERIALIZATION_FAILED");
  }
}

async function textTooDeepIsRefused(store: Store) {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  const limits = { rawDepth: 8 };
  assert.equal((await callOnce(store, () => rawJson(deep(8)), { limits })).result.status, "READY");
  assertFailed(await callOnce(store, () => rawJson(deep(9)), { limits }), "SERIALIZATION_FAILED");
  assertFailed(await callOnce(store, () => rawJson(deep(100_000))), "SERIALIZATION_FAILED");
}

async function rawBytesAreExactOnTheTextGivenAndStored(store: Store) {
  const limits = { rawBytes: 64 };
  // 64 UTF-8 bytes exactly: two quotes and 31 two-byte characters.
  const fits = `"${"é".repeat(31)}"`;
  assertStored(await callOnce(store, () => rawJson(fits), { limits }), "é".repeat(31), fits);
  // The same value given with one space more: the text given passes the limit, unparsed.
  assertFailed(await callOnce(store, () => rawJson(` ${fits}`), { limits }), "RESULT_TOO_LARGE");
  // Not JSON, yet RESULT_TOO_LARGE: refused before it is parsed.
  assertFailed(
    await callOnce(store, () => rawJson("x".repeat(65)), { limits }),
    "RESULT_TOO_LARGE",
  );
  // A short text whose value is written out longer: the stored text is held to the limit.
  const short = `[${"1e20,".repeat(3)}1]`; // 17 bytes; stored as 67
  assertFailed(await callOnce(store, () => rawJson(short), { limits }), "RESULT_TOO_LARGE");
}

async function projectorChangesItsOwnValueOnly(store: Store) {
  const text = '{"hits":["a","b"],"meta":{"n":1}}';
  const outcome = await callOnce(store, () => rawJson(text), {
    project: (raw) => {
      const value = raw as { hits: string[]; meta: { n: number }; added?: boolean };
      value.hits.push("added by the projector");
      value.meta.n = 2;
      value.added = true;
      return value.hits.length;
    },
  });
  assert.equal(outcome.result.status === "READY" && outcome.result.content, 3);
  assert.equal(outcome.stored?.rawJson, text, "the record is what was parsed");
  assert.deepEqual(outcome.record?.raw, JSON.parse(text));
}

async function toolErrorKeepsRawText(store: Store) {
  const outcome = await callOnce(store, () => toolError(rawJson(' {"status": 503, "n": -0} ')));
  assertFailed(outcome, "EXECUTION_FAILED", { status: 503, n: 0 });
  assert.equal(outcome.stored?.rawJson, '{"status":503,"n":0}');
  const refused = await callOnce(store, () => toolError(rawJson("not json")));
  assertFailed(refused, "EXECUTION_FAILED");
}

async function rawJsonTakesOnlyAString(store: Store) {
  let coerced = 0;
  const hostile = [
    42,
    null,
    undefined,
    new String('{"a":1}'),
    { toString: () => (coerced++, '{"a":1}') },
    new Proxy({}, { get: () => (coerced++, '{"a":1}') }),
  ];
  for (const value of hostile) {
    assert.throws(() => rawJson(value as string), TypeError);
    const outcome = await callOnce(store, () => rawJson(value as string));
    assertFailed(outcome, "EXECUTION_FAILED");
    assert.equal(outcome.record?.failure?.name, "TypeError");
  }
  assert.equal(coerced, 0, "nothing was coerced to a string");
}

async function lookAlikesAreNoRawJson(store: Store) {
  const real = rawJson('{"a":1}');
  for (const fake of [{ text: '{"a":1}' }, Object.create(RawJson.prototype), new Proxy(real, {})]) {
    const outcome = await callOnce(store, () => fake as JsonValue);
    const expected = fake instanceof RawJson ? "SERIALIZATION_FAILED" : "READY";
    assert.equal(outcome.result.status === "ERROR" ? outcome.result.code : "READY", expected);
  }
  // A plain object with a `text` member is plain data, stored as such.
  const plain = await callOnce(store, () => ({ text: '{"a":1}' }));
  assertStored(plain, { text: '{"a":1}' }, '{"text":"{\\"a\\":1}"}');
}

async function prototypeToJSONRefusesText(store: Store) {
  // Given while the tool runs, taken back before the store is written to.
  const withToJSON = (proto: object) => () => {
    Object.defineProperty(proto, "toJSON", { configurable: true, value: () => "rewritten" });
    queueMicrotask(() => delete (proto as { toJSON?: unknown }).toJSON);
    return rawJson('{"a":[1]}');
  };
  for (const proto of [Object.prototype, Array.prototype]) {
    assertFailed(await callOnce(store, withToJSON(proto)), "SERIALIZATION_FAILED");
    assert.equal(Object.hasOwn(proto, "toJSON"), false);
  }
}

async function inheritedEnumerablesAreNoMembers(store: Store) {
  // Enumerable on Object.prototype while the tool runs: `for-in` would list them.
  const polluting = () => {
    Object.assign(Object.prototype, { inherited: Infinity, zero: 0 });
    queueMicrotask(() => {
      delete (Object.prototype as { inherited?: unknown }).inherited;
      delete (Object.prototype as { zero?: unknown }).zero;
    });
    return rawJson('{"a":-0,"b":{"c":[-0]}}');
  };
  const outcome = await callOnce(store, polluting);
  assertStored(outcome, { a: 0, b: { c: [0] } }, '{"a":0,"b":{"c":[0]}}');
  const seen = outcome.projected[0] as Record<string, unknown>;
  assert.deepEqual(Object.keys(seen), ["a", "b"]);
  assert.equal(Object.hasOwn(seen, "zero"), false, "no inherited key became a member");
}

// --- Response ---------------------------------------------------------------------------------

async function jsonResponseIsTheText(store: Store) {
  const outcome = await callOnce(
    store,
    () => streamed(['{"hits":["a",', ' "b"], "n": -0, "s": "', CANARY_SECRET, '"}']),
  );
  const raw = { hits: ["a", "b"], n: 0, s: CANARY_SECRET };
  assertStored(outcome, raw, JSON.stringify(raw));
  // A promise of one, as fetch gives, and Response.json() with its content type.
  const awaited = await callOnce(store, () => Promise.resolve(Response.json({ a: [1] })));
  assertStored(awaited, { a: [1] }, '{"a":[1]}');
  const typed = await callOnce(
    store,
    () => new Response('{"p":1}', { headers: { "content-type": "application/problem+json" } }),
  );
  assertStored(typed, { p: 1 }, '{"p":1}');
  // A byte order mark is dropped, as Response.json() does.
  const bom = await callOnce(store, () => streamed([new Uint8Array([0xef, 0xbb, 0xbf]), "[1]"]));
  assertStored(bom, [1], "[1]");
}

async function bodyPastTheLimitIsNeverReadWhole(store: Store) {
  let pulled = 0;
  let cancelled: unknown = "never";
  const endless = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++;
          controller.enqueue(encoder.encode(`[${"1,".repeat(500)}`)); // 1,001 bytes a pull
        },
        cancel(reason) {
          cancelled = reason;
        },
      }, { highWaterMark: 0 }),
      JSON_HEADERS,
    );
  const outcome = await callOnce(store, endless, { limits: { rawBytes: 10_000 } });
  assertFailed(outcome, "RESULT_TOO_LARGE");
  assert.equal(pulled, 10, "read up to the chunk that passed 10,000 bytes, and no further");
  assert.equal(cancelled, undefined, "the stream was cancelled");
  // A failure's body past the limit: EXECUTION_FAILED, with nothing kept.
  const failing = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull: (controller) => controller.enqueue(new Uint8Array(4096)),
      }, { highWaterMark: 0 }),
      { status: 500 },
    );
  assertFailed(
    await callOnce(store, failing, { limits: { rawBytes: 10_000 } }),
    "EXECUTION_FAILED",
  );
}

async function bodyAtTheLimitIsRead(store: Store) {
  const text = `"${"é".repeat(31)}"`; // 64 bytes
  const outcome = await callOnce(store, () => streamed([text.slice(0, 10), text.slice(10)]), {
    limits: { rawBytes: 64 },
  });
  assertStored(outcome, "é".repeat(31), text);
  const over = await callOnce(store, () => streamed([text, " "]), { limits: { rawBytes: 64 } });
  assertFailed(over, "RESULT_TOO_LARGE");
}

async function streamThatFailsMidwayIsExecutionFailed(store: Store) {
  const outcome = await callOnce(
    store,
    () =>
      streamed(['{"hits":["a",'], JSON_HEADERS, (pull, controller) => {
        if (pull === 1) controller.error(new RangeError("connection reset"));
      }),
  );
  assertFailed(outcome, "EXECUTION_FAILED");
  assert.deepEqual(outcome.record?.failure, { name: "RangeError", message: "connection reset" });
}

async function otherResponsesAreTheToolsFailure(store: Store) {
  const unavailable = await callOnce(
    store,
    () => new Response('{"error":"down"}', { status: 503, ...JSON_HEADERS }),
  );
  assertFailed(unavailable, "EXECUTION_FAILED", {
    status: 503,
    contentType: "application/json",
    body: '{"error":"down"}',
  });
  const html = await callOnce(
    store,
    () => new Response("<h1>Sign in</h1>", { headers: { "content-type": "text/html" } }),
  );
  assertFailed(html, "EXECUTION_FAILED", {
    status: 200,
    contentType: "text/html",
    body: "<h1>Sign in</h1>",
  });
  // new Response(text) is text/plain: JSON in it is still not a JSON response.
  const plain = await callOnce(store, () => new Response('{"a":1}'));
  assertFailed(plain, "EXECUTION_FAILED", {
    status: 200,
    contentType: "text/plain;charset=UTF-8",
    body: '{"a":1}',
  });
  // A failure's body that is not UTF-8 is kept as text, each bad byte U+FFFD.
  const bytes = await callOnce(
    store,
    () => new Response(new Uint8Array([0x61, 0xff, 0x62]), { status: 404 }),
  );
  assertFailed(bytes, "EXECUTION_FAILED", { status: 404, contentType: null, body: "a\ufffdb" });
}

async function jsonResponseThatIsNotJsonIsRefused(store: Store) {
  for (const body of ["", "{", "<html>", "1e400"]) {
    const outcome = await callOnce(store, () => new Response(body, JSON_HEADERS));
    assertFailed(outcome, "SERIALIZATION_FAILED");
  }
  const empty = await callOnce(store, () => new Response(null, JSON_HEADERS));
  assertFailed(empty, "SERIALIZATION_FAILED");
  // Bytes that are not UTF-8 are U+FFFD, as Response.json() reads them: in a string, what the
  // projector saw and the record holds; past the end of the JSON, not JSON.
  const lone = await callOnce(
    store,
    () => new Response(new Uint8Array([0x22, 0x80, 0x22]), JSON_HEADERS),
  );
  assertStored(lone, "\ufffd", '"\ufffd"');
  const cut = await callOnce(
    store,
    () => new Response(new Uint8Array([0x22, 0x61, 0x22, 0xc3]), JSON_HEADERS),
  );
  assertFailed(cut, "SERIALIZATION_FAILED");
  const duplicate = await callOnce(store, () => new Response('{"a":1,"a":2}', JSON_HEADERS));
  assertStored(duplicate, { a: 2 }, '{"a":2}');
}

async function chunksAreReadOnce(store: Store) {
  // A chunk that is no Uint8Array fails the read, as Response.text() would.
  const bytes = encoder.encode("[1]");
  for (
    const chunk of [
      new String("[1]"),
      [...bytes],
      bytes.buffer,
      new DataView(bytes.buffer),
      new Int8Array(bytes.buffer),
    ]
  ) {
    const outcome = await callOnce(store, () => streamed([chunk]));
    assertFailed(outcome, "EXECUTION_FAILED");
    assert.equal(outcome.record?.failure?.name, "TypeError");
  }
  // A chunk the stream changes after it was handed over: whatever the read saw is the record,
  // and the projector saw the same.
  const first = encoder.encode('["aaaa",');
  const outcome = await callOnce(store, () =>
    streamed([first, '"b"]'], JSON_HEADERS, (pull) => {
      if (pull >= 1) first.fill(0x20); // spaces, were it read again
    }));
  assert.equal(outcome.result.status, "READY");
  assert.deepEqual(outcome.record?.raw, outcome.projected[0]);
  assert.equal(outcome.stored?.rawJson, JSON.stringify(outcome.projected[0]));
}

async function responseIsReadThroughItsOwnAccessors(store: Store) {
  let ran = 0;
  const response = Response.json({ real: true });
  for (const name of ["status", "headers", "body", "ok", "text", "json"]) {
    Object.defineProperty(response, name, {
      get() {
        ran++;
        throw new Error(`own ${name} read`);
      },
    });
  }
  assertStored(await callOnce(store, () => response), { real: true }, '{"real":true}');
  assert.equal(ran, 0, "no own property of the Response was read");
  // A Proxy whose traps throw is no Response, nor data.
  const trapped = new Proxy(Response.json({ a: 1 }), {
    get: () => {
      throw new Error("trap");
    },
    getPrototypeOf: () => {
      throw new Error("trap");
    },
  });
  assertFailed(await callOnce(store, () => trapped), "SERIALIZATION_FAILED");
  // Deno's brand check asks a Proxy through its traps: one that forwards is read as the Response
  // behind it, once.
  const forwarding = await callOnce(store, () => new Proxy(Response.json({ b: 2 }), {}));
  assertStored(forwarding, { b: 2 }, '{"b":2}');
  // A body read already, or locked by a reader of the tool's own: the read fails.
  const used = new Response('{"a":1}', JSON_HEADERS);
  await used.text();
  assertFailed(await callOnce(store, () => used), "EXECUTION_FAILED");
  const locked = new Response('{"a":1}', JSON_HEADERS);
  locked.body!.getReader();
  assertFailed(await callOnce(store, () => locked), "EXECUTION_FAILED");
}

async function bodyReadIsUnderTheToolsStop(store: Store) {
  let cancelled: unknown = "never";
  const stalled = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode("[1,"));
        },
        cancel(reason) {
          cancelled = reason;
        },
      }),
      JSON_HEADERS,
    );
  const timedOut = await callOnce(store, stalled, { timeoutMs: 50 });
  assertFailed(timedOut, "TOOL_TIMEOUT");
  assert.equal(cancelled, "TOOL_TIMEOUT", "the body was cancelled");
  cancelled = "never";
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error("the caller gave up")), 20);
  const aborted = await callOnce(store, stalled, { signal: controller.signal });
  assertFailed(aborted, "CANCELLED");
  assert.equal(cancelled, "CANCELLED");
}

async function fetchedBodyOverHttp(store: Store) {
  const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ${"x".repeat(50)}`);
  let endlessCancelled: () => void = () => {};
  const endlessClosed = new Promise<void>((resolve) => endlessCancelled = resolve);
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/logs") return Response.json({ lines });
    if (path === "/down") return new Response("maintenance", { status: 503 });
    return new Response(
      new ReadableStream<Uint8Array>({
        pull: (controller) => controller.enqueue(encoder.encode(`[${"0,".repeat(8192)}`)),
        cancel: () => endlessCancelled(),
      }),
      JSON_HEADERS,
    );
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    const logs = await callOnce(store, (_, { signal }) => fetch(`${base}/logs`, { signal }));
    assertStored(logs, { lines }, JSON.stringify({ lines }));
    const down = await callOnce(store, (_, { signal }) => fetch(`${base}/down`, { signal }));
    assertFailed(down, "EXECUTION_FAILED", {
      status: 503,
      contentType: "text/plain;charset=UTF-8",
      body: "maintenance",
    });
    const endless = await callOnce(store, (_, { signal }) => fetch(`${base}/endless`, { signal }), {
      limits: { rawBytes: 100_000 },
    });
    assertFailed(endless, "RESULT_TOO_LARGE");
    await endlessClosed; // the server's stream was cancelled: the connection was let go
  } finally {
    await server.shutdown();
  }
}

const CASES: [string, (store: Store) => Promise<void>][] = [
  [
    "rawJson(text) is parsed once, and the record stores what was parsed",
    textIsParsedOnceAndStoredAsWhatWasParsed,
  ],
  ["rawJson: -0 in the text is 0 for the projector and the record", negativeZeroIsZero],
  [
    "rawJson: a number past double precision is stored as the double the projector saw; 1e400 is refused",
    hugeNumbersAreTheDoubleTheProjectorSaw,
  ],
  [
    "rawJson: a member name given twice keeps its last value, as parsed",
    duplicateNamesKeepTheLastAsParsed,
  ],
  ["rawJson: lone surrogates in the text are stored escaped", loneSurrogatesAreEscaped],
  ["rawJson: a __proto__ member stays an own member", prototypeNamesStayOwnMembers],
  ["rawJson: a text that is not JSON is SERIALIZATION_FAILED", textThatIsNotJsonIsRefused],
  ["rawJson: a text nested past rawDepth is SERIALIZATION_FAILED", textTooDeepIsRefused],
  [
    "rawJson: rawBytes holds exactly, on the text given (unparsed) and on the text stored",
    rawBytesAreExactOnTheTextGivenAndStored,
  ],
  [
    "rawJson: a projector that changes its value changes nothing recorded",
    projectorChangesItsOwnValueOnly,
  ],
  ["toolError(rawJson(text)) keeps what the text parsed to", toolErrorKeepsRawText],
  [
    "rawJson() takes a string primitive only, a String object neither, and coerces nothing",
    rawJsonTakesOnlyAString,
  ],
  [
    "only rawJson() itself counts: a look-alike or a Proxy of one is a raw response",
    lookAlikesAreNoRawJson,
  ],
  ["rawJson: an Object.prototype.toJSON refuses the text", prototypeToJSONRefusesText],
  [
    "rawJson: an enumerable key of Object.prototype is no member, nor a refusal",
    inheritedEnumerablesAreNoMembers,
  ],
  ["a 2xx JSON Response is its body's text, parsed once", jsonResponseIsTheText],
  [
    "a Response body past rawBytes is RESULT_TOO_LARGE, read no further than the limit",
    bodyPastTheLimitIsNeverReadWhole,
  ],
  ["a Response body of exactly rawBytes is read", bodyAtTheLimitIsRead],
  [
    "a Response whose body stream fails midway is EXECUTION_FAILED with what it threw",
    streamThatFailsMidwayIsExecutionFailed,
  ],
  [
    "a non-2xx or non-JSON Response is the tool's failure, keeping status, type and body",
    otherResponsesAreTheToolsFailure,
  ],
  [
    "a JSON Response whose body is not JSON is SERIALIZATION_FAILED; bad UTF-8 is U+FFFD",
    jsonResponseThatIsNotJsonIsRefused,
  ],
  ["a Response body's chunks are Uint8Arrays, each read once", chunksAreReadOnce],
  [
    "a Response is read through the runtime's accessors, never its own properties",
    responseIsReadThroughItsOwnAccessors,
  ],
  [
    "a Response body is read under the tool's stop: TOOL_TIMEOUT and CANCELLED cancel it",
    bodyReadIsUnderTheToolsStop,
  ],
  ["fetch() over HTTP: a JSON body, a 503, and an endless body let go", fetchedBodyOverHttp],
];

for (const { name, open } of STORES) {
  Deno.test(`${name}: the text path, rawJson(text) and Response`, async (t) => {
    const { store, close } = await open();
    try {
      for (const [label, fn] of CASES) await t.step(label, () => fn(store));
    } finally {
      await close();
    }
  });
}
