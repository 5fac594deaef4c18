/**
 * The run inspector in a real browser (Debian's chromium through playwright-core), against the
 * dev server's app served on a loopback port: tokens, the timeline, every call's payloads, the
 * keyboard, hostile payloads, a call held open while the page loads, and an ENDED run's facts.
 * All of it twice: with the page as Deno serves it, and with the page and script as a Worker
 * bundled as wrangler deploys it serves them (`deno bundle`, then esbuild with keepNames on),
 * whose script must be the very same text.
 * A screenshot of each state goes to .artifacts/inspector/ (gitignored; the bundle's run to
 * .artifacts/inspector/wrangler-bundle/); with UPDATE_DOCS_SCREENSHOT=1 the README's
 * docs/inspector.png is taken again too.
 */
import assert from "node:assert/strict";
import { ERROR_MESSAGES, type ErrorCode } from "../../src/mod.ts";
import { utf8ByteLength } from "../../src/store/mod.ts";
import { bundle } from "../runtime/setup.ts";
import { unresolvedNames } from "../support/browser_script.ts";
import { launch, type Page, wranglerBundle } from "./browser.ts";
import {
  AGENT_TOKEN,
  CALLS,
  CONSOLE_CALLS,
  CONSOLE_RUN_ID,
  consoleRun,
  COST_RUN_ID,
  costRun,
  DOCS_RUN_ID,
  docsRun,
  HARNESS_TOKEN,
  HOSTILE,
  inspectorApp,
  RUN_ID,
  scriptedRun,
  THROWN,
} from "./scenario.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ARTIFACTS = `${ROOT}.artifacts/inspector`;
const LISTED = CALLS.filter((call) => call.status !== null);
const STATUS_TEXT = {
  READY: "✓ READY",
  ERROR: "✕ ERROR",
  PROJECTING: "… PROJECTING",
} as const;

type Json = Record<string, unknown>;
/** What the page's own globals look like to the functions evaluated in it. */
type PageGlobals = typeof globalThis & {
  __xss?: unknown;
  __csp?: string[];
  document: {
    cookie: string;
    activeElement: { id?: string; dataset?: Record<string, string> } | null;
    querySelectorAll(selector: string): { length: number };
    querySelector(selector: string): { matches(selector: string): boolean } | null;
    scripts: ArrayLike<{ src: string }>;
  };
  localStorage: { length: number };
  sessionStorage: { length: number };
};

const harness = { authorization: `Bearer ${HARNESS_TOKEN}` };

async function record(base: string, id: string): Promise<Json> {
  const res = await fetch(`${base}/v1/runs/${RUN_ID}/tool-calls/${id}`, { headers: harness });
  assert.equal(res.status, 200);
  return await res.json();
}

const bytes = (value: unknown) => utf8ByteLength(JSON.stringify(value));
const grouped = (n: number) => n.toLocaleString("en-US");

/** The agent view the page must show: what invoke returned to the agent for this record. */
function agentView(rec: Json): Json | undefined {
  if (rec.status === "READY") {
    return { status: "READY", toolCallId: rec.toolCallId, ...(rec.agentResult as Json) };
  }
  if (rec.status === "ERROR") {
    const code = rec.errorCode as ErrorCode;
    return { status: "ERROR", toolCallId: rec.toolCallId, code, message: ERROR_MESSAGES[code] };
  }
  return undefined;
}

async function saveShot(page: Page, path: string): Promise<string> {
  await page.screenshot({ path, fullPage: true });
  return path;
}

async function load(page: Page, token: string, runId = RUN_ID): Promise<void> {
  await page.fill("#token", token);
  await page.fill("#run-id", runId);
  await page.click("#load");
}

/** The page shows nothing of any run: the state after a refusal. */
async function assertNoData(page: Page): Promise<void> {
  assert.equal(await page.locator("#run").isVisible(), false);
  assert.equal(await page.locator("#workspace").isVisible(), false);
  assert.equal(await page.locator("#facts").isVisible(), false);
  assert.equal(await page.locator("#timeline li").count(), 0);
  const text = await page.locator("body").innerText();
  for (const call of CALLS) assert.ok(!text.includes(call.toolCallId), call.toolCallId);
}

async function select(page: Page, id: string): Promise<void> {
  await page.click(`#timeline button[data-tool-call-id="${id}"]`);
  await page.locator("#detail .panes, #detail .notice.expired").first().waitFor();
  assert.match(await page.locator("#detail-title").innerText(), new RegExp(`^Call ${id}\\b`));
}

/** The three panes of the detail: title -> the JSON shown, or `undefined` when absent. */
async function panes(page: Page): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const boxes = page.locator("#detail .pane");
  assert.equal(await boxes.count(), 3);
  for (let i = 0; i < 3; i++) {
    const box = boxes.nth(i);
    const title = (await box.locator("h3").innerText()).trim();
    const pre = box.locator("pre");
    out[title] = await pre.count() === 0 ? undefined : JSON.parse((await pre.textContent())!);
  }
  return out;
}

/** Where the page's own responses (`/inspect` and below) come from, and where its shots go. */
interface Variant {
  /** Screenshot folder. */
  artifacts: string;
  /** Serves `/inspect*`; the JSON API stays the scenario's. Without it, the scenario app's own. */
  page?: (request: Request) => Promise<Response>;
}

/** The whole scenario, in one browser, against one server. */
async function drive(t: Deno.TestContext, variant: Variant): Promise<void> {
  await Deno.mkdir(variant.artifacts, { recursive: true });
  const shot = (page: Page, name: string) => saveShot(page, `${variant.artifacts}/${name}.png`);
  const browser = await launch();
  const { fetch: app, gate } = inspectorApp();
  const { page: own } = variant;
  const serve = own === undefined
    ? app
    : (request: Request) =>
      new URL(request.url).pathname.startsWith("/inspect") ? own(request) : app(request);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, serve);
  const base = `http://127.0.0.1:${server.addr.port}`;
  const screenshots: string[] = [];
  let releaseHeld = gate.release;
  try {
    const { held } = await scriptedRun(base);
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const dialogs: string[] = [];
    const problems: string[] = [];
    const requests: { method: string; url: string; authorization: string | undefined }[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.type());
      void dialog.dismiss();
    });
    page.on("console", (message) => {
      // The refusals the test asks for are logged as failed loads; every response is checked
      // below instead.
      if (message.text().startsWith("Failed to load resource: the server responded")) return;
      if (message.type() === "error" || message.type() === "warning") {
        problems.push(`console ${message.type()}: ${message.text()}`);
      }
    });
    const responses: string[] = [];
    page.on("response", (response) => responses.push(`${response.status()} ${response.url()}`));
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("request", (request) => {
      requests.push({
        method: request.method(),
        url: request.url(),
        authorization: request.headers().authorization,
      });
    });
    // Any policy violation means something tried to load or run that the page did not ship.
    await page.addInitScript(
      `document.addEventListener("securitypolicyviolation", (e) => {
        (window.__csp ||= []).push(e.violatedDirective + " " + e.blockedURI);
      });`,
    );
    await page.goto(`${base}/inspect`);
    assert.equal(await page.locator("h1").innerText(), "Run inspector");

    await t.step("a missing token shows a clear message and no data", async () => {
      await load(page, "");
      assert.equal(
        await page.locator("#message").innerText(),
        "Enter the harness token first: the inspector reads runs with it.",
      );
      assert.equal(await page.locator("#message").getAttribute("role"), "alert");
      await assertNoData(page);
      assert.deepEqual(requests.filter((r) => r.url.includes("/v1/")), []);
      screenshots.push(await shot(page, "01-token-missing"));
    });

    await t.step("a wrong token shows 401 UNAUTHENTICATED and no data", async () => {
      await load(page, "wrong-token-0123456789abcdef");
      await page.locator("#message.bad").waitFor();
      assert.equal(
        await page.locator("#message").innerText(),
        "The token was refused (401 UNAUTHENTICATED): enter the harness token and load again.",
      );
      await assertNoData(page);
      screenshots.push(await shot(page, "02-token-wrong"));
    });

    await t.step("the agent token shows 403 FORBIDDEN and no data", async () => {
      await load(page, AGENT_TOKEN);
      await page.locator("#message >> text=403 FORBIDDEN").waitFor();
      assert.match(await page.locator("#message").innerText(), /needs the harness token/);
      await assertNoData(page);
      screenshots.push(await shot(page, "03-token-agent"));
    });

    await t.step("an unknown run shows RUN_NOT_FOUND and no data", async () => {
      await load(page, HARNESS_TOKEN, "run-nobody-started");
      await page.locator("#message >> text=RUN_NOT_FOUND").waitFor();
      assert.equal(
        await page.locator("#message").innerText(),
        "No run run-nobody-started (404 RUN_NOT_FOUND): it does not exist or has expired.",
      );
      await assertNoData(page);
    });

    await t.step(
      "the timeline lists the begun calls in begin order, status and evidence as colour and text",
      async () => {
        await load(page, HARNESS_TOKEN);
        await page.locator("#timeline button").first().waitFor();
        // Sizes come from each record; wait until every row has them.
        await page.locator("#timeline >> text=sizes loading").first().waitFor({ state: "hidden" });
        assert.equal(
          await page.locator("#message").innerText(),
          `Run ${RUN_ID}: ${LISTED.length} calls begun, status ACTIVE.`,
        );
        const rows = page.locator("#timeline button.call");
        assert.equal(await rows.count(), LISTED.length);
        for (const [index, call] of LISTED.entries()) {
          const row = rows.nth(index);
          assert.equal(await row.getAttribute("data-tool-call-id"), call.toolCallId);
          assert.equal(await row.getAttribute("data-status"), call.status);
          // Colour: the row's class; text: its badges.
          assert.match((await row.getAttribute("class"))!, new RegExp(`\\bst-${call.status}\\b`));
          const texts = await Promise.all(
            Array.from(
              { length: await row.locator(".badge").count() },
              (_, i) => row.locator(".badge").nth(i).innerText(),
            ),
          );
          const classes = await Promise.all(
            Array.from(
              { length: texts.length },
              (_, i) => row.locator(".badge").nth(i).getAttribute("class"),
            ),
          );
          const expected: string[] = [STATUS_TEXT[call.status!]];
          const expectedClasses = [`badge b-${call.status}`];
          if (call.evidence === "ERROR") {
            expected.push("evidence: ERROR");
            expectedClasses.push("badge b-ERROR");
          } else if (call.evidence !== null) {
            expected.push(call.evidence);
            expectedClasses.push(`badge b-${call.evidence}`);
          } else {
            expected.push("evidence pending");
            expectedClasses.push("badge b-none");
          }
          if (call.code !== null) {
            expected.push(call.code);
            expectedClasses.push("badge b-code");
          }
          assert.deepEqual(texts, expected, call.toolCallId);
          assert.deepEqual(classes, expectedClasses, call.toolCallId);
          const rec = await record(base, call.toolCallId);
          const meta = await row.locator(".meta").innerText();
          const duration = call.status === "PROJECTING"
            ? "running, no duration yet"
            : `${grouped((rec.updatedAt as number) - (rec.createdAt as number))} ms`;
          const raw = "raw" in rec ? `raw ${grouped(bytes(rec.raw))} B` : "no raw";
          const agent = rec.agentResult === null
            ? "no agent result"
            : `agent result ${grouped(bytes(rec.agentResult))} B`;
          assert.equal(
            meta,
            `${duration} · request ${grouped(bytes(rec.request))} B · ${raw} · ${agent}`,
            call.toolCallId,
          );
        }
        // The refused call was never begun.
        assert.equal(await page.locator(`[data-tool-call-id="call_write"]`).count(), 0);
        assert.equal(await page.locator("#run-status").innerText(), "ACTIVE");
        assert.equal(await page.locator("#run-used").innerText(), `${LISTED.length} of 20`);
        // No cost budget and no call of a tool with a cost: no cost shown.
        assert.equal(await page.locator("#run-cost").count(), 0);
        assert.equal(
          await page.locator("#per-tool tbody tr:has-text('search_logs')").innerText(),
          "search_logs\t1\t3",
        );
        // The token is held by the script only: the field is emptied once it is read.
        assert.equal(await page.locator("#token").inputValue(), "");
        screenshots.push(await shot(page, "04-timeline"));
      },
    );

    await t.step(
      "selecting a call shows its request, agent view and raw response as recorded",
      async () => {
        for (const call of LISTED) {
          await select(page, call.toolCallId);
          const rec = await record(base, call.toolCallId);
          const shown = await panes(page);
          assert.deepEqual(shown.Request, rec.request, call.toolCallId);
          assert.deepEqual(shown["Agent view"], agentView(rec), call.toolCallId);
          assert.deepEqual(shown["Raw response"], rec.raw, call.toolCallId);
          assert.equal(
            await page.locator(`#timeline button[data-tool-call-id="${call.toolCallId}"]`)
              .getAttribute("aria-current"),
            "true",
          );
          const notice = await page.locator("#detail .notice").first().innerText();
          const result = rec.agentResult as Json | null;
          if (call.evidence === "NO_EVIDENCE") {
            assert.equal(notice, `Nothing found in: ${result!.scope}`);
          } else if (call.evidence === "EVIDENCE_FOUND") {
            assert.equal(notice, `Evidence found in: ${result!.scope}`);
          } else if (call.status === "ERROR") {
            assert.equal(notice, `ERROR ${call.code}: ${ERROR_MESSAGES[call.code as ErrorCode]}`);
          } else {
            assert.match(notice, /^Still running \(PROJECTING\)/);
          }
          screenshots.push(await shot(page, `05-call-${call.toolCallId}`));
        }
      },
    );

    await t.step(
      "payloads with <script>, <img onerror> and javascript: links render as text and run nothing",
      async () => {
        await select(page, "call_markup");
        const raw = await page.locator("#detail .pane >> nth=2").locator("pre").textContent();
        for (const markup of Object.values(HOSTILE)) {
          assert.ok(raw!.includes(JSON.stringify(markup).slice(1, -1)), markup);
        }
        // Clicking the link text does nothing: it is text in a <pre>.
        await page.locator("#detail pre >> text=open the runbook").first().click();
        assert.equal(page.url(), `${base}/inspect`);
        const globals = await page.evaluate(() => {
          const g = globalThis as PageGlobals;
          return {
            xss: g.__xss ?? null,
            csp: g.__csp ?? [],
            links: g.document.querySelectorAll("a").length,
            images: g.document.querySelectorAll("img, iframe, object, embed").length,
            scripts: Array.from(g.document.scripts, (script) => script.src),
            cookie: g.document.cookie,
            storage: g.localStorage.length + g.sessionStorage.length,
          };
        });
        assert.deepEqual(globals, {
          xss: null,
          csp: [],
          links: 0,
          images: 0,
          scripts: [`${base}/inspect/app.js`],
          cookie: "",
          storage: 0,
        });
        assert.deepEqual(dialogs, []);
        assert.deepEqual(problems, []);
        screenshots.push(await shot(page, "06-hostile-payloads"));
      },
    );

    await t.step("the timeline works with the keyboard, with a visible focus", async () => {
      await page.locator("#timeline button.call").first().focus();
      await page.keyboard.press("Home");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Enter");
      await page.locator("#detail-title >> text=call_large").waitFor();
      const focus = await page.evaluate(() => {
        const g = globalThis as PageGlobals;
        const active = g.document.activeElement;
        return {
          id: active?.dataset?.toolCallId ?? null,
          visible: g.document.querySelector(":focus")?.matches(":focus-visible") ?? false,
        };
      });
      assert.deepEqual(focus, { id: "call_large", visible: true });
      await page.keyboard.press("End");
      await page.keyboard.press(" ");
      await page.locator("#detail-title >> text=call_held").waitFor();
      screenshots.push(await shot(page, "07-keyboard"));
    });

    await t.step("a call held open shows PROJECTING, then its outcome after Refresh", async () => {
      await select(page, "call_held");
      assert.equal(
        await page.locator("#detail .pane >> nth=1").locator(".absent").innerText(),
        "Nothing yet: the call has not returned.",
      );
      releaseHeld();
      releaseHeld = () => {};
      const answered = await held as Json;
      assert.equal(answered.status, "READY");
      await page.click("#refresh");
      await page.locator(`#timeline button[data-tool-call-id="call_held"][data-status="READY"]`)
        .waitFor();
      await page.locator("#detail .notice.found").waitFor();
      const rec = await record(base, "call_held");
      const shown = await panes(page);
      assert.deepEqual(shown.Request, rec.request);
      assert.deepEqual(shown["Agent view"], agentView(rec));
      assert.deepEqual(shown["Raw response"], rec.raw);
      screenshots.push(await shot(page, "08-held-call-finished"));
    });

    await t.step(
      "an ENDED run shows the facts it ended with; the page ends no run itself",
      async () => {
        // Until here the run was ACTIVE: the page never asked to end it.
        assert.deepEqual(requests.filter((r) => r.method === "POST"), []);
        const ended = await fetch(`${base}/v1/runs/${RUN_ID}/end`, {
          method: "POST",
          headers: harness,
        });
        assert.equal(ended.status, 200);
        const report = await ended.json() as { facts: Json[]; omitted: number };
        assert.deepEqual(
          report.facts.map((fact) => [fact.toolCallId, fact.kind]),
          [
            ["call_found", "EVIDENCE"],
            ["call_none", "NEGATIVE_OBSERVATION"],
            ["call_markup", "EVIDENCE"],
            ["call_held", "EVIDENCE"],
          ],
        );
        await page.click("#refresh");
        await page.locator("#facts").waitFor({ state: "visible" });
        assert.equal(await page.locator("#run-status").innerText(), "ENDED");
        const items = page.locator("#facts li");
        assert.equal(await items.count(), report.facts.length);
        for (const [index, fact] of report.facts.entries()) {
          const text = await items.nth(index).innerText();
          assert.ok(text.includes(fact.toolCallId as string), text);
          assert.ok(text.includes(fact.kind as string), text);
          const scope = fact.kind === "NEGATIVE_OBSERVATION" ? "Nothing found in: " : "Scope: ";
          assert.ok(text.includes(`${scope}${fact.scope}`), text);
          assert.deepEqual(
            JSON.parse((await items.nth(index).locator("pre").textContent())!),
            fact.content,
          );
        }
        // The selected call says where it stands among the facts.
        await page.locator("#detail >> text=In the facts the run ended with: fact 4, EVIDENCE.")
          .waitFor();
        await select(page, "call_failed");
        await page.locator("#detail >> text=Not among the facts the run ended with.").waitFor();
        // Exactly one end request per load of the ENDED run, each only after it had ended.
        const posts = requests.filter((r) => r.method === "POST");
        assert.deepEqual(posts.map((r) => r.url), [`${base}/v1/runs/${RUN_ID}/end`]);
        screenshots.push(await shot(page, "09-ended-run-facts"));
        await select(page, "call_none");
        screenshots.push(await shot(page, "10-ended-run-no-evidence"));
      },
    );

    await t.step(
      "the token never left in a URL, and every data request carried it as a bearer header",
      async () => {
        assert.ok(
          requests.every((r) => !r.url.includes(HARNESS_TOKEN) && !r.url.includes("token")),
        );
        assert.ok(requests.every((r) => r.url.startsWith(`${base}/`)), "no other origin");
        const data = requests.filter((r) => r.url.includes("/v1/"));
        assert.ok(data.length > LISTED.length);
        const allowed = new Set([
          "Bearer wrong-token-0123456789abcdef",
          `Bearer ${AGENT_TOKEN}`,
          `Bearer ${HARNESS_TOKEN}`,
        ]);
        assert.ok(data.every((r) => allowed.has(r.authorization ?? "")));
        assert.equal(await page.locator("#token").getAttribute("value"), null);
        // Every answer that was not 200 was one of the refusals asked for above.
        assert.deepEqual(responses.filter((line) => !line.startsWith("200 ")), [
          `401 ${base}/v1/runs/${RUN_ID}`,
          `403 ${base}/v1/runs/${RUN_ID}`,
          `404 ${base}/v1/runs/run-nobody-started`,
        ]);
        assert.ok(responses.includes(`200 ${base}/inspect/icon.svg`), responses.join("\n"));
        assert.deepEqual(dialogs, []);
        assert.deepEqual(problems, []);
      },
    );

    await t.step(
      "the run list shows the recent runs newest first with their counts, filtered by status",
      async () => {
        await consoleRun(base);
        await page.click("#list-runs");
        await page.locator(`#runs-table tr[data-run-id="${CONSOLE_RUN_ID}"]`).waitFor();
        const listed = await (await fetch(`${base}/v1/runs`, { headers: harness })).json() as {
          runs: { runId: string; status: string; calls: number; errors: number }[];
        };
        assert.deepEqual(listed.runs.map((run) => run.runId), [CONSOLE_RUN_ID, RUN_ID]);
        const rows = page.locator("#runs-table tbody tr");
        assert.equal(await rows.count(), 2);
        for (const [index, run] of listed.runs.entries()) {
          const row = rows.nth(index);
          assert.equal(await row.getAttribute("data-run-id"), run.runId);
          const cells = (await row.innerText()).split("\t").map((cell) => cell.trim());
          assert.deepEqual(
            [cells[0], cells[1], cells[4], cells[5]],
            [run.runId, run.status, String(run.calls), String(run.errors)],
          );
        }
        assert.deepEqual(listed.runs.map((run) => [run.status, run.errors]), [
          ["ACTIVE", 3],
          ["ENDED", 3],
        ]);
        const shownRuns = async () => {
          const count = await page.locator("#runs-table tr[data-run-id]").count();
          return await Promise.all(
            Array.from(
              { length: count },
              (_, i) =>
                page.locator("#runs-table tr[data-run-id]").nth(i).getAttribute("data-run-id"),
            ),
          );
        };
        await page.selectOption("#runs-status", "ENDED");
        assert.deepEqual(await shownRuns(), [RUN_ID]);
        await page.selectOption("#runs-status", "ACTIVE");
        assert.deepEqual(await shownRuns(), [CONSOLE_RUN_ID]);
        await page.selectOption("#runs-status", "errors");
        assert.deepEqual(await shownRuns(), [CONSOLE_RUN_ID, RUN_ID]);
        await page.selectOption("#runs-status", "");
        assert.equal(await page.locator("#runs-more").isVisible(), false, "one page only");
        screenshots.push(await shot(page, "11-run-list"));
        // A row opens its run.
        await page.click(`#runs-table tr[data-run-id="${CONSOLE_RUN_ID}"] button`);
        await page.locator(`#run-name >> text=${CONSOLE_RUN_ID}`).waitFor();
        assert.equal(await page.locator("#runs").isVisible(), true, "the list stays");
      },
    );

    await t.step(
      "the waterfall draws each call from createdAt to updatedAt, marks overlaps, and the filters narrow the calls",
      async () => {
        await page.locator("#waterfall li").first().waitFor();
        const listing = await (await fetch(`${base}/v1/runs/${CONSOLE_RUN_ID}`, {
          headers: harness,
        })).json() as { calls: { toolCallId: string; createdAt: number; updatedAt: number }[] };
        const first = Math.min(...listing.calls.map((call) => call.createdAt));
        const last = Math.max(...listing.calls.map((call) => call.updatedAt));
        const items = page.locator("#waterfall li");
        assert.equal(await items.count(), CONSOLE_CALLS.length);
        let overlapping = 0;
        for (const [index, call] of listing.calls.entries()) {
          const item = items.nth(index);
          assert.equal(await item.getAttribute("data-tool-call-id"), call.toolCallId);
          const style = await item.locator(".wf-bar").getAttribute("style");
          const left = Number(/left: ([\d.]+)%/.exec(style ?? "")?.[1]);
          const width = Number(/width: ([\d.]+)%/.exec(style ?? "")?.[1]);
          const span = Math.max(1, last - first);
          assert.ok(Math.abs(left - (call.createdAt - first) / span * 100) < 0.01, style!);
          assert.ok(
            Math.abs(width - (call.updatedAt - call.createdAt) / span * 100) < 0.01,
            style!,
          );
          const overlaps = listing.calls.filter((other) =>
            other !== call && other.createdAt < call.updatedAt && call.createdAt < other.updatedAt
          ).length;
          assert.equal(await item.getAttribute("data-overlaps"), String(overlaps), call.toolCallId);
          if (overlaps > 0) {
            overlapping++;
          }
        }
        // Submitted at once, the slow call (its 200 ms timeout) overlaps the others.
        assert.ok(overlapping >= 2, `overlapping calls: ${overlapping}`);
        assert.match(
          await items.first().locator(".wf-note").innerText(),
          /ms from \+\d+ ms · overlaps \d other call/,
        );
        const visible = async (selector: string) => {
          const all = page.locator(selector);
          const out: string[] = [];
          for (let i = 0; i < await all.count(); i++) {
            if (await all.nth(i).isVisible()) {
              out.push((await all.nth(i).getAttribute("data-tool-call-id"))!);
            }
          }
          return out;
        };
        const both = async () => [
          await visible("#waterfall li"),
          await visible("#timeline button.call"),
        ];
        await page.selectOption("#filter-tool", "trace_lookup");
        assert.deepEqual(await both(), [["call_slow"], ["call_slow"]]);
        assert.equal(await page.locator("#filter-count").innerText(), "Showing 1 of 4 calls.");
        await page.selectOption("#filter-tool", "");
        await page.selectOption("#filter-code", "EXECUTION_FAILED");
        assert.deepEqual(await both(), [
          ["call_threw", "call_metrics"],
          ["call_threw", "call_metrics"],
        ]);
        await page.selectOption("#filter-status", "READY");
        assert.deepEqual(await both(), [[], []]);
        await page.selectOption("#filter-code", "");
        assert.deepEqual(await both(), [["call_book"], ["call_book"]]);
        await page.selectOption("#filter-status", "");
        assert.equal(await page.locator("#filter-count").innerText(), "Showing 4 of 4 calls.");
        screenshots.push(await shot(page, "12-waterfall"));
      },
    );

    await t.step(
      "a tool that threw shows its failure as text: the name replaced, the message whole, none of it run",
      async () => {
        await select(page, "call_threw");
        const failure = page.locator("#detail .failure");
        assert.equal(await failure.locator("strong").innerText(), "The tool threw Error");
        assert.equal(await failure.locator("pre").textContent(), THROWN.message);
        const rec = await (await fetch(
          `${base}/v1/runs/${CONSOLE_RUN_ID}/tool-calls/call_threw`,
          { headers: harness },
        )).json();
        assert.deepEqual(rec.failure, { name: "Error", message: THROWN.message });
        // The agent view shows only the code and its fixed message.
        const shown = await panes(page);
        assert.deepEqual(shown["Agent view"], agentView(rec));
        const globals = await page.evaluate(() => {
          const g = globalThis as PageGlobals;
          return {
            xss: g.__xss ?? null,
            csp: g.__csp ?? [],
            links: g.document.querySelectorAll("a").length,
            images: g.document.querySelectorAll("img, iframe, object, embed").length,
          };
        });
        assert.deepEqual(globals, { xss: null, csp: [], links: 0, images: 0 });
        screenshots.push(await shot(page, "13-failure"));
        await select(page, "call_metrics");
        const metrics = await (await fetch(
          `${base}/v1/runs/${CONSOLE_RUN_ID}/tool-calls/call_metrics`,
          { headers: harness },
        )).json();
        assert.equal(
          await page.locator("#detail .failure strong").innerText(),
          `The tool threw ${metrics.failure.name}`,
        );
        assert.equal(
          await page.locator("#detail .failure pre").textContent(),
          metrics.failure.message,
        );
        // A call that did not throw has no failure.
        await select(page, "call_slow");
        assert.equal(await page.locator("#detail .failure").count(), 0);
      },
    );

    await t.step(
      "replays are not marked: a replayed call adds nothing, and the page says so",
      async () => {
        // The recorded result given again (recall): nothing runs, nothing is written.
        const again = await fetch(`${base}/v1/runs/${CONSOLE_RUN_ID}/recall`, {
          method: "POST",
          headers: { ...harness, "content-type": "application/json" },
          body: JSON.stringify({
            toolCallId: "call_book",
            toolName: "search_runbook",
            input: { query: "disk full" },
          }),
        });
        assert.equal((await again.json()).replayed, true);
        await page.click("#refresh");
        await page.locator("#waterfall li").first().waitFor();
        assert.equal(await page.locator("#waterfall li").count(), CONSOLE_CALLS.length);
        assert.match(
          await page.locator("#waterfall-panel .help").first().innerText(),
          /Replays are not marked: .* \(none shown\)\./,
        );
      },
    );

    await t.step(
      "the proof state of an unsigned server says unsigned, and the export downloads as a file",
      async () => {
        await page.click("#proof");
        await page.locator("#proof-state[data-state]").waitFor();
        assert.equal(
          await page.locator("#proof-state").innerText(),
          "Unsigned: the server has no ledger key and no record carries a proof. " +
            "To sign runs, give the boundary a ledger key: the ledgerKey option, or LEDGER_KEY " +
            "(a private JWK, e.g. from `deno task keys`) for the edge servers (docs/proof.md).",
        );
        assert.equal(await page.locator("#proof-state").getAttribute("data-state"), "unsigned");
        await page.locator("#proof-verdict[data-verdict]").waitFor();
        assert.equal(
          await page.locator("#proof-verdict").innerText(),
          "Verdict: unsigned (the server has no ledger key to verify with).",
        );
        assert.equal(await page.locator("#proof-verdict").getAttribute("data-verdict"), "unsigned");
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.click("#export-link"),
        ]);
        assert.equal(download.suggestedFilename(), `${CONSOLE_RUN_ID}.json`);
        const saved = JSON.parse(await Deno.readTextFile(await download.path()));
        const exported = await (await fetch(`${base}/v1/runs/${CONSOLE_RUN_ID}/export`, {
          headers: harness,
        })).json();
        assert.deepEqual(saved, exported);
        assert.equal(exported.receipt, null);
        assert.match((await page.locator("#export-link").getAttribute("href"))!, /^blob:/);
        screenshots.push(await shot(page, "14-proof-export"));
        assert.deepEqual(dialogs, []);
        assert.deepEqual(problems, []);
      },
    );

    await t.step(
      "a run with a cost budget shows what it spent and holds reserved of it, and each call its cost",
      async () => {
        await costRun(base);
        await load(page, HARNESS_TOKEN, COST_RUN_ID);
        await page.locator(`#run-name >> text=${COST_RUN_ID}`).waitFor();
        const run = (await (await fetch(`${base}/v1/runs/${COST_RUN_ID}`, { headers: harness }))
          .json()).run;
        assert.deepEqual([run.budget.cost, run.cost], [10, { reserved: 0, spent: 7 }]);
        assert.equal(
          await page.locator("#run-cost").innerText(),
          "7 spent · 0 reserved · budget 10",
        );
        // The refused call was never begun: three calls listed.
        assert.equal(await page.locator("#timeline button.call").count(), 3);
        await select(page, "call_settled");
        assert.equal(
          await page.locator("#detail .cost").innerText(),
          "cost 5 reserved · 2 spent · 3 given back to the budget",
        );
        screenshots.push(await shot(page, "15-cost"));
        await select(page, "call_full");
        assert.equal(await page.locator("#detail .cost").innerText(), "cost 5 reserved · 5 spent");
        await select(page, "call_free");
        assert.equal(await page.locator("#detail .cost").count(), 0);
        // The run list: the cost run's spend, none for the runs without a cost.
        await page.click("#list-runs");
        await page.locator(`#runs-table tr[data-run-id="${COST_RUN_ID}"]`).waitFor();
        const spent = async (runId: string) =>
          (await page.locator(`#runs-table tr[data-run-id="${runId}"]`).innerText())
            .split("\t").map((cell) => cell.trim())[6];
        assert.equal(await spent(COST_RUN_ID), "7");
        assert.equal(await spent(RUN_ID), "—");
        assert.deepEqual(dialogs, []);
        assert.deepEqual(problems, []);
      },
    );

    await t.step("on a narrow screen the console is one column with nothing cut off", async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      const overflow = await page.evaluate(() => {
        const g = globalThis as unknown as {
          innerWidth: number;
          document: { documentElement: { scrollWidth: number } };
        };
        return g.document.documentElement.scrollWidth - g.innerWidth;
      });
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
      screenshots.push(await shot(page, "16-narrow"));
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    if (variant.page === undefined && Deno.env.get("UPDATE_DOCS_SCREENSHOT") === "1") {
      const selected = await docsRun(base);
      const docs = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await docs.goto(`${base}/inspect`);
      await docs.fill("#token", HARNESS_TOKEN);
      await docs.click("#list-runs");
      await docs.locator(`#runs-table tr[data-run-id="${DOCS_RUN_ID}"]`).waitFor();
      await load(docs, HARNESS_TOKEN, DOCS_RUN_ID);
      await docs.locator("#timeline >> text=sizes loading").first().waitFor({ state: "hidden" });
      await select(docs, selected);
      await docs.screenshot({ path: `${ROOT}docs/inspector.png`, fullPage: true });
      screenshots.push(`${ROOT}docs/inspector.png`);
    }
    console.log(`inspector screenshots:\n  ${screenshots.join("\n  ")}`);
  } finally {
    releaseHeld();
    await browser.close();
    await server.shutdown();
  }
}

Deno.test("the run inspector shows every call of a run in a real browser, runs none of its payloads, and shows nothing for a wrong token", async (t) => {
  await drive(t, { artifacts: ARTIFACTS });
});

Deno.test("the run console renders the runs list from a Worker bundled as wrangler bundles it (keepNames on); every bundle serves the same script", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "tb-inspector-" });
  try {
    // As `deno task build:worker` makes it (minified), then as wrangler bundles that.
    const worker = await bundle("edge/cloudflare.ts", dir, undefined, { minify: true });
    const wrangled = `${dir}/wrangler-worker.js`;
    await wranglerBundle(worker, wrangled);
    // keepNames rewrote the server's functions: the bundle calls __name on them.
    assert.match(await Deno.readTextFile(wrangled), /__name\(\w+, "\w+"\)/);
    const env = { AGENT_TOKEN, HARNESS_TOKEN, INSPECTOR: "on" };
    const served = async (file: string) => {
      const { default: entry } = await import(`file://${file}`) as {
        default: { fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> };
      };
      return (request: Request) => entry.fetch(request, env, {});
    };
    const own = inspectorApp().fetch;
    const scriptOf = async (fetch: (request: Request) => Response | Promise<Response>) =>
      await (await fetch(new Request("http://bundle/inspect/app.js"))).text();
    const expected = await scriptOf(own);
    const page = await served(wrangled);
    // The script is text, not a function's source: no bundler has touched it.
    assert.equal(await scriptOf(await served(worker)), expected);
    assert.equal(await scriptOf(page), expected);
    assert.doesNotMatch(expected, /__name/);
    assert.deepEqual(await unresolvedNames(expected), []);
    const bun = await Deno.readTextFile(await bundle("edge/bun.ts", dir));
    assert.ok(!/\bfunction inspectorMain\(/.test(bun.replace(/"[^"\n]*"/g, "")), "Bun: text only");
    await drive(t, { artifacts: `${ARTIFACTS}/wrangler-bundle`, page });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
