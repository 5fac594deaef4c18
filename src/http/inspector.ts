/**
 * The run inspector: a static page at `/inspect` that shows a run and every call it began, with
 * each call's request, agent view and raw response side by side. Served only when `createApp` is
 * given `inspector: true`.
 *
 * The page, its script, its styles and its icon are string constants (edge runtimes cannot read
 * files, and there is no build step). The page itself holds no data: it asks for the harness
 * token in a form, keeps it in a script variable only (never in the URL, a cookie or storage)
 * and sends it as a bearer header to the JSON API (`GET /v1/runs/{runId}`, the records, and the
 * facts of an ENDED run). Every payload is rendered with `textContent`, never as HTML, under a
 * Content-Security-Policy that allows only the page's own script, styles and icon.
 *
 * @module
 */
import type { Hono } from "hono";
import { ERROR_MESSAGES } from "../core/errors.ts";
import { RUN_ID_PATTERN } from "../core/ids.ts";
import type { AppEnv } from "./auth.ts";

/**
 * The Content-Security-Policy of the inspector's responses: nothing but the page's own script,
 * styles and icon, requests only to its own origin, no forms submitted, no framing.
 */
export const INSPECTOR_CSP: string = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// Relative URLs throughout, so the page also works when the app is mounted under a prefix.
const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Run inspector · tool-boundary</title>
<link rel="icon" href="inspect/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="inspect/app.css">
<script src="inspect/app.js" defer></script>
</head>
<body>
<header class="top">
  <h1>Run inspector</h1>
  <p>Every call of a run: what it asked, what it returned, what the model was shown.</p>
</header>
<main>
  <form id="connect" class="panel connect" autocomplete="off" novalidate>
    <div class="field">
      <label for="token">Harness token</label>
      <input id="token" type="password" autocomplete="off" spellcheck="false"
        aria-describedby="token-help">
      <p id="token-help" class="help">Kept in this page's memory only and sent as a bearer header;
        never stored, never in the URL. Reload the page to forget it.</p>
    </div>
    <div class="field">
      <label for="run-id">Run ID</label>
      <input id="run-id" type="text" autocomplete="off" spellcheck="false">
    </div>
    <div class="actions">
      <button type="submit" id="load">Load run</button>
      <button type="button" id="forget">Forget token</button>
    </div>
  </form>
  <p id="message" class="message" role="status" aria-live="polite"></p>
  <section id="run" class="panel" aria-labelledby="run-title" hidden>
    <div class="run-head">
      <h2 id="run-title">Run <code id="run-name"></code></h2>
      <span id="run-status" class="badge"></span>
      <button type="button" id="refresh">Refresh</button>
    </div>
    <div class="run-body">
      <dl id="run-facts" class="grid"></dl>
      <div>
        <table id="per-tool">
          <caption>Calls begun per tool</caption>
          <thead><tr><th scope="col">Tool</th><th scope="col" class="num">Used</th>
            <th scope="col" class="num">Budget</th></tr></thead>
          <tbody></tbody>
        </table>
        <p class="help">— : no budget of its own, only the run's.</p>
      </div>
    </div>
  </section>
  <div id="workspace" class="workspace" hidden>
    <section class="panel timeline-panel" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Calls in begin order</h2>
      <p class="help">Arrow keys move between calls, Enter shows one. Refused calls were never
        begun and are not listed.</p>
      <ol id="timeline" class="timeline"></ol>
    </section>
    <section id="detail" class="panel detail" aria-labelledby="detail-title">
      <h2 id="detail-title">No call selected</h2>
      <div id="detail-body"><p class="help">Select a call to see its request, the agent view and
        the raw response.</p></div>
    </section>
  </div>
  <section id="facts" class="panel" aria-labelledby="facts-title" hidden>
    <h2 id="facts-title">Facts the run ended with</h2>
    <div id="facts-body"></div>
  </section>
</main>
</body>
</html>
`;

const CSS = `:root {
  color-scheme: light;
  --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --panel: #ffffff; --page: #f6f8fa;
  --focus: #0969da;
  --ready: #116329; --ready-bg: #dafbe1; --error: #a40e26; --error-bg: #ffebe9;
  --pending: #7d4e00; --pending-bg: #fff8c5; --expired: #424a53; --expired-bg: #eaeef2;
  --found: #0550ae; --found-bg: #ddf4ff; --none: #6639ba; --none-bg: #fbefff;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; color: var(--ink); background: var(--page); }
.top { padding: 14px 24px; background: #24292f; color: #fff; }
.top h1 { margin: 0; font-size: 20px; }
.top p { margin: 2px 0 0; color: #d1d9e0; }
main { padding: 16px 24px 32px; display: grid; gap: 16px; }
h2 { font-size: 17px; margin: 0 0 8px; }
h3 { font-size: 15px; margin: 0 0 6px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }
.connect { display: flex; flex-wrap: wrap; gap: 12px 20px; align-items: flex-start; }
.field { display: grid; gap: 4px; flex: 1 1 280px; }
.field label { font-weight: 600; }
.help { margin: 0; color: var(--muted); font-size: 13px; }
input { font: inherit; padding: 6px 8px; border: 1px solid #8c959f; border-radius: 6px; width: 100%; }
.actions { display: flex; gap: 8px; align-self: center; }
button { font: inherit; cursor: pointer; border: 1px solid #8c959f; border-radius: 6px; padding: 6px 12px; background: #f6f8fa; color: var(--ink); }
button[type="submit"] { background: #1f883d; border-color: #1a7f37; color: #fff; font-weight: 600; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.message { margin: 0; padding: 10px 14px; border-radius: 8px; border: 1px solid var(--line); background: var(--panel); }
.message:empty { display: none; }
.message.bad { border-color: var(--error); background: var(--error-bg); color: var(--error); font-weight: 600; }
.run-head { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
.run-head h2 { margin: 0; }
.run-head button { margin-left: auto; }
.run-body { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 12px 32px; align-items: start; margin-top: 10px; }
@media (max-width: 900px) { .run-body { grid-template-columns: 1fr; } }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 10px 16px; margin: 0; }
.grid div { min-width: 0; }
.grid dt { color: var(--muted); font-size: 13px; }
.grid dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
table { border-collapse: collapse; min-width: 320px; }
caption { text-align: left; font-weight: 600; padding-bottom: 4px; }
th, td { text-align: left; padding: 4px 12px 4px 0; border-bottom: 1px solid var(--line); }
td.num, th.num { text-align: right; }
th:last-child, td:last-child { padding-right: 0; }
.workspace { display: grid; grid-template-columns: minmax(300px, 420px) minmax(0, 1fr); gap: 16px; align-items: start; }
@media (max-width: 900px) { .workspace { grid-template-columns: 1fr; } }
.timeline { list-style: none; margin: 10px 0 0; padding: 0; display: grid; gap: 6px; }
.call { width: 100%; text-align: left; display: grid; gap: 3px; padding: 8px 10px; background: #fff; border: 1px solid var(--line); border-left: 6px solid var(--expired); }
.call:hover { background: #f6f8fa; }
.call[aria-current="true"] { background: #eef6ff; border-color: var(--focus); border-left-width: 6px; box-shadow: inset 0 0 0 1px var(--focus); }
.call.st-READY { border-left-color: var(--ready); }
.call.st-ERROR { border-left-color: var(--error); }
.call.st-PROJECTING { border-left-color: var(--pending); }
.call-head { display: flex; gap: 8px; align-items: baseline; min-width: 0; }
.seq { color: var(--muted); font-size: 13px; }
.call-id { font-weight: 600; overflow-wrap: anywhere; }
.tool { color: var(--muted); overflow-wrap: anywhere; }
.badges { display: flex; gap: 6px; flex-wrap: wrap; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 700; letter-spacing: 0.02em; border: 1px solid currentColor; }
.b-READY { color: var(--ready); background: var(--ready-bg); }
.b-ERROR { color: var(--error); background: var(--error-bg); }
.b-PROJECTING { color: var(--pending); background: var(--pending-bg); }
.b-EXPIRED, .b-none { color: var(--expired); background: var(--expired-bg); }
.b-EVIDENCE_FOUND, .b-EVIDENCE { color: var(--found); background: var(--found-bg); }
.b-NO_EVIDENCE, .b-NEGATIVE_OBSERVATION { color: var(--none); background: var(--none-bg); }
.b-ACTIVE { color: var(--ready); background: var(--ready-bg); }
.b-ENDED { color: var(--expired); background: var(--expired-bg); }
.b-code { color: var(--error); background: #fff; }
.meta { color: var(--muted); font-size: 13px; }
.scope-line { font-size: 13px; color: var(--none); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.notice { margin: 10px 0; padding: 10px 12px; border-radius: 6px; border: 1px solid; font-weight: 600; overflow-wrap: anywhere; }
.notice.none { color: var(--none); background: var(--none-bg); }
.notice.error { color: var(--error); background: var(--error-bg); }
.notice.pending { color: var(--pending); background: var(--pending-bg); }
.notice.expired, .notice.plain { color: var(--expired); background: var(--expired-bg); }
.notice.found { color: var(--found); background: var(--found-bg); }
.panes { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 12px; margin-top: 12px; }
.detail { position: sticky; top: 8px; max-height: calc(100vh - 16px); overflow: auto; }
.pane { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; min-width: 0; background: #fbfcfd; }
.pane .what { margin: 0 0 6px; color: var(--muted); font-size: 13px; }
.pane pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 520px; overflow: auto; }
.pane .absent { color: var(--muted); font-style: italic; margin: 0; }
.facts-list { list-style: none; margin: 0; padding: 0; display: grid; gap: 8px; }
.facts-list li { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; display: grid; gap: 4px; }
.facts-list pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
`;

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">` +
  `<rect width="16" height="16" rx="3" fill="#24292f"/>` +
  `<path d="M4 4h8M4 8h5M4 12h7" stroke="#7ee2a8" stroke-width="2" stroke-linecap="round"/></svg>`;

// The script is plain JavaScript in a raw string (no template literals or `${` inside it but the
// two constants). It only ever sets textContent, never innerHTML.
const SCRIPT = String.raw`"use strict";
(() => {
  const MESSAGES = ${JSON.stringify(ERROR_MESSAGES)};
  const RUN_ID = new RegExp(${JSON.stringify(RUN_ID_PATTERN.source)});
  const STATUS_TEXT = {
    READY: "✓ READY", ERROR: "✕ ERROR", PROJECTING: "… PROJECTING", EXPIRED: "⌀ EXPIRED",
  };
  const EVIDENCE_TEXT = {
    EVIDENCE_FOUND: "EVIDENCE_FOUND", NO_EVIDENCE: "NO_EVIDENCE", ERROR: "evidence: ERROR",
  };
  const $ = (id) => document.getElementById(id);
  const encoder = new TextEncoder();

  let token = "";
  let generation = 0;
  let view = null;

  function node(tag, className, text) {
    const element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined && text !== null) element.textContent = String(text);
    return element;
  }
  const bytes = (value) => encoder.encode(JSON.stringify(value)).length;
  const grouped = (n) => n.toLocaleString("en-US");
  const sizeText = (n) => grouped(n) + " B";
  const sized = (label, n) => n === null ? "no " + label : label + " " + sizeText(n);
  const pretty = (value) => JSON.stringify(value, null, 2);
  const when = (ms) => typeof ms === "number"
    ? new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC")
    : "—";
  function relative(ms) {
    const diff = ms - Date.now();
    const abs = Math.abs(diff);
    const text = abs < 1000 ? grouped(abs) + " ms"
      : abs < 120000 ? grouped(Math.round(abs / 1000)) + " s"
      : abs < 7200000 ? grouped(Math.round(abs / 60000)) + " min"
      : grouped(Math.round(abs / 3600000)) + " h";
    return diff >= 0 ? "in " + text : text + " ago";
  }
  function badge(kind, text) {
    return node("span", "badge b-" + kind, text);
  }
  function say(text, bad) {
    const message = $("message");
    message.textContent = text;
    message.classList.toggle("bad", Boolean(bad));
    message.setAttribute("role", bad ? "alert" : "status");
  }
  function clearView() {
    view = null;
    $("run").hidden = true;
    $("workspace").hidden = true;
    $("facts").hidden = true;
    $("run-facts").replaceChildren();
    $("per-tool").tBodies[0].replaceChildren();
    $("timeline").replaceChildren();
    $("facts-body").replaceChildren();
    $("detail-title").textContent = "No call selected";
    $("detail-body").replaceChildren(
      node("p", "help", "Select a call to see its request, the agent view and the raw response."),
    );
  }

  async function api(method, path) {
    const response = await fetch(path, {
      method,
      headers: { authorization: "Bearer " + token, accept: "application/json" },
      cache: "no-store",
      credentials: "omit",
      redirect: "error",
      referrerPolicy: "no-referrer",
    });
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    return { status: response.status, body };
  }
  const runPath = (runId) => "v1/runs/" + encodeURIComponent(runId);
  const codeOf = (body) => body && typeof body.code === "string" ? body.code : null;

  // Every failure clears what was shown: a refused token never leaves data on the page.
  function refuse(response, runId) {
    const code = codeOf(response.body);
    clearView();
    if (response.status === 401) {
      token = "";
      say("The token was refused (401 UNAUTHENTICATED): enter the harness token and load again.", true);
    } else if (response.status === 403) {
      token = "";
      say("This token may not read runs (403 FORBIDDEN): the inspector needs the harness token, " +
        "not the agent token.", true);
    } else if (code === "RUN_NOT_FOUND") {
      say("No run " + runId + " (404 RUN_NOT_FOUND): it does not exist or has expired.", true);
    } else if (code === "INVALID_RUN_ID") {
      say("The server refused this run ID (400 INVALID_RUN_ID).", true);
    } else {
      say("The server answered " + response.status + (code ? " " + code : "") +
        ": nothing to show.", true);
    }
  }
  function unreachable() {
    clearView();
    say("The server could not be reached: nothing to show.", true);
  }

  async function load(runId, keepSelection) {
    const gen = ++generation;
    const selected = keepSelection && view && view.runId === runId ? view.selected : null;
    clearView();
    if (!token) {
      say("Enter the harness token first: the inspector reads runs with it.", true);
      $("token").focus();
      return;
    }
    if (!RUN_ID.test(runId)) {
      say("Enter a run ID: 1 to 128 of A-Z a-z 0-9 _ - . (not dots only).", true);
      $("run-id").focus();
      return;
    }
    say("Loading run " + runId + "…");
    let response;
    try {
      response = await api("GET", runPath(runId));
    } catch {
      if (gen === generation) unreachable();
      return;
    }
    if (gen !== generation) return;
    const body = response.body;
    if (response.status !== 200 || !body || !body.run || !Array.isArray(body.calls)) {
      refuse(response, runId);
      return;
    }
    view = { gen, runId, run: body.run, calls: body.calls, records: new Map(), rows: new Map(),
      facts: null, selected: null };
    renderRun();
    renderTimeline();
    say("Run " + runId + ": " + body.calls.length + " call" + (body.calls.length === 1 ? "" : "s") +
      " begun, status " + body.run.status + ".");
    const work = [prefetch(gen)];
    if (body.run.status === "ENDED") work.push(loadFacts(gen));
    if (selected !== null && view.rows.has(selected)) work.push(select(selected));
    await Promise.all(work);
  }

  function renderRun() {
    const run = view.run;
    $("run-name").textContent = run.runId;
    const status = $("run-status");
    status.className = "badge b-" + run.status;
    status.textContent = run.status;
    const facts = $("run-facts");
    const item = (label, value, id) => {
      const wrap = node("div");
      const dd = node("dd", "", value);
      if (id) dd.id = id;
      wrap.append(node("dt", "", label), dd);
      facts.append(wrap);
    };
    item("Calls used", grouped(run.used.calls) + " of " + grouped(run.budget.calls), "run-used");
    item("Deadline", when(run.deadline) + " (" + relative(run.deadline) + ")");
    item("Started", when(run.startedAt));
    item("Ended", run.endedAt === null ? "not ended" : when(run.endedAt));
    const tools = new Set([...Object.keys(run.budget.perTool), ...Object.keys(run.used.perTool)]);
    const body = $("per-tool").tBodies[0];
    for (const name of [...tools].sort()) {
      const row = node("tr");
      const own = (table) => Object.prototype.hasOwnProperty.call(table, name) ? table[name] : null;
      const used = own(run.used.perTool) ?? 0;
      const limit = own(run.budget.perTool);
      row.append(
        node("td", "mono", name),
        node("td", "num", grouped(used)),
        node("td", "num", limit === null ? "—" : grouped(limit)),
      );
      body.append(row);
    }
    if (tools.size === 0) {
      const row = node("tr");
      const cell = node("td", "help", "No call begun yet, no per-tool budget.");
      cell.colSpan = 3;
      row.append(cell);
      body.append(row);
    }
    $("run").hidden = false;
  }

  function renderTimeline() {
    const list = $("timeline");
    view.calls.forEach((call, index) => {
      const item = node("li");
      const button = node("button", "call");
      button.type = "button";
      button.dataset.toolCallId = call.toolCallId;
      button.tabIndex = index === 0 ? 0 : -1;
      button.addEventListener("click", () => select(call.toolCallId));
      item.append(button);
      list.append(item);
      view.rows.set(call.toolCallId, { button, call, index });
      fillRow(call.toolCallId);
    });
    if (view.calls.length === 0) {
      list.append(node("li", "help", "This run has begun no calls yet."));
    }
    $("workspace").hidden = false;
  }

  // A row from the record when it has been read (it is canonical), else from the listing.
  function fillRow(id) {
    const row = view.rows.get(id);
    const record = view.records.get(id);
    const call = row.call;
    const status = record ? record.status : call.status;
    const evidence = record ? record.evidence : call.evidence;
    const errorCode = record ? record.errorCode : call.errorCode;
    const createdAt = record ? record.createdAt : call.createdAt;
    const updatedAt = record ? record.updatedAt : call.updatedAt;
    const button = row.button;
    button.className = "call st-" + status;
    button.dataset.status = status;
    const head = node("span", "call-head");
    head.append(
      node("span", "seq", "#" + (row.index + 1)),
      node("span", "call-id mono", id),
      node("span", "tool", record ? record.toolName : call.toolName ?? "tool unknown"),
    );
    const badges = node("span", "badges");
    badges.append(badge(status, STATUS_TEXT[status] ?? status));
    if (evidence) badges.append(badge(evidence, EVIDENCE_TEXT[evidence] ?? evidence));
    else if (status === "PROJECTING") badges.append(badge("none", "evidence pending"));
    if (errorCode) badges.append(badge("code", errorCode));
    const parts = [];
    if (status === "PROJECTING") parts.push("running, no duration yet");
    else if (typeof createdAt === "number" && typeof updatedAt === "number") {
      parts.push(grouped(updatedAt - createdAt) + " ms");
    } else parts.push("record expired");
    if (record) {
      parts.push(sized("request", bytes(record.request)));
      parts.push(sized("raw", "raw" in record ? bytes(record.raw) : null));
      parts.push(sized("agent result", record.agentResult === null ? null : bytes(record.agentResult)));
    } else if (status !== "EXPIRED") parts.push("sizes loading…");
    const children = [head, badges, node("span", "meta", parts.join(" · "))];
    if (record && record.agentResult && record.agentResult.evidence === "NO_EVIDENCE") {
      children.push(node("span", "scope-line", "Nothing found in: " + record.agentResult.scope));
    }
    button.replaceChildren(...children);
    const label = [id, status, evidence ?? "", errorCode ?? ""].filter(Boolean).join(", ");
    button.setAttribute("aria-label", "Call " + (row.index + 1) + ": " + label);
  }

  async function readRecord(gen, id) {
    let response;
    try {
      response = await api("GET", runPath(view.runId) + "/tool-calls/" + encodeURIComponent(id));
    } catch {
      return { failed: true };
    }
    if (!view || view.gen !== gen) return { stale: true };
    if (response.status === 200 && response.body && response.body.toolCallId === id) {
      view.records.set(id, response.body);
      fillRow(id);
      return { record: response.body };
    }
    if (response.status === 404) return { record: null };
    refuse(response, view.runId);
    return { stale: true };
  }

  // The sizes in the timeline come from each record; a few reads at a time.
  async function prefetch(gen) {
    const queue = view.calls.filter((call) => call.status !== "EXPIRED").map((c) => c.toolCallId);
    const worker = async () => {
      while (queue.length > 0 && view && view.gen === gen) {
        const id = queue.shift();
        if (view.records.has(id)) continue;
        const read = await readRecord(gen, id);
        if (read.stale) return;
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  }

  async function loadFacts(gen) {
    // Only for an ENDED run: ending again is idempotent and returns the facts it ended with.
    let response;
    try {
      response = await api("POST", runPath(view.runId) + "/end");
    } catch {
      return;
    }
    if (!view || view.gen !== gen) return;
    if (response.status !== 200 || !response.body || !Array.isArray(response.body.facts)) {
      if (response.status === 401 || response.status === 403) refuse(response, view.runId);
      return;
    }
    view.facts = response.body;
    renderFacts();
    if (view.selected !== null && view.records.has(view.selected)) {
      renderDetail(view.selected, view.records.get(view.selected));
    }
  }

  function renderFacts() {
    const { facts, omitted } = view.facts;
    const body = $("facts-body");
    const intro = node("p", "help", facts.length + " fact" + (facts.length === 1 ? "" : "s") +
      ", in execution order; only READY records become facts" +
      (omitted > 0 ? "; " + omitted + " left out by the fact caps." : "."));
    const list = node("ol", "facts-list");
    facts.forEach((fact, index) => {
      const item = node("li");
      const head = node("span", "badges");
      head.append(
        node("span", "seq", "fact " + (index + 1)),
        badge(fact.kind, fact.kind),
        node("span", "call-id mono", fact.toolCallId),
        node("span", "tool", fact.toolName),
      );
      item.append(head);
      item.append(node("span", fact.kind === "NEGATIVE_OBSERVATION" ? "scope-line" : "meta",
        (fact.kind === "NEGATIVE_OBSERVATION" ? "Nothing found in: " : "Scope: ") + fact.scope));
      item.append(node("pre", "", pretty(fact.content)));
      list.append(item);
    });
    body.replaceChildren(intro, list);
    $("facts").hidden = false;
  }

  async function select(id) {
    if (!view || !view.rows.has(id)) return;
    const gen = view.gen;
    view.selected = id;
    for (const [other, row] of view.rows) {
      const current = other === id;
      row.button.setAttribute("aria-current", current ? "true" : "false");
      row.button.tabIndex = current ? 0 : -1;
    }
    $("detail-title").textContent = "Call " + id;
    $("detail-body").replaceChildren(node("p", "help", "Reading the record…"));
    const read = await readRecord(gen, id);
    if (read.stale || !view || view.gen !== gen || view.selected !== id) return;
    if (read.failed) {
      $("detail-body").replaceChildren(node("p", "notice error", "The record could not be read."));
      return;
    }
    renderDetail(id, read.record);
  }

  function pane(title, what, value, absent, size) {
    const box = node("article", "pane");
    const heading = node("h3", "", title);
    box.append(heading, node("p", "what", what + (size === null ? "" : " · " + sizeText(size))));
    if (value === undefined) box.append(node("p", "absent", absent));
    else box.append(node("pre", "", pretty(value)));
    return box;
  }

  function renderDetail(id, record) {
    const body = $("detail-body");
    if (record === null) {
      $("detail-title").textContent = "Call " + id;
      body.replaceChildren(node("p", "notice expired",
        "The record of this call expired: only its ID and begin order remain."));
      return;
    }
    $("detail-title").textContent = "Call " + id + " · " + record.toolName;
    const badges = node("p", "badges");
    badges.append(badge(record.status, STATUS_TEXT[record.status] ?? record.status));
    if (record.evidence) badges.append(badge(record.evidence, EVIDENCE_TEXT[record.evidence] ?? record.evidence));
    if (record.errorCode) badges.append(badge("code", record.errorCode));
    const times = node("p", "meta", "created " + when(record.createdAt) + " · updated " +
      when(record.updatedAt) + " · expires " + when(record.expiresAt));
    const parts = [badges, times];
    let agent;
    if (record.status === "PROJECTING") {
      parts.push(node("p", "notice pending",
        "Still running (PROJECTING): the tool or its projector has not finished. Refresh to see the outcome."));
    } else if (record.status === "ERROR") {
      const message = MESSAGES[record.errorCode] ?? "";
      parts.push(node("p", "notice error", "ERROR " + record.errorCode + (message ? ": " + message : "")));
      agent = { status: "ERROR", toolCallId: record.toolCallId, code: record.errorCode };
      if (message) agent.message = message;
    } else if (record.agentResult) {
      const result = record.agentResult;
      parts.push(result.evidence === "NO_EVIDENCE"
        ? node("p", "notice none", "Nothing found in: " + result.scope)
        : node("p", "notice found", "Evidence found in: " + result.scope));
      agent = { status: "READY", toolCallId: record.toolCallId, evidence: result.evidence,
        scope: result.scope, content: result.content };
    }
    if (view.facts) {
      const index = view.facts.facts.findIndex((fact) => fact.toolCallId === id);
      parts.push(index >= 0
        ? node("p", "notice plain", "In the facts the run ended with: fact " + (index + 1) + ", " +
          view.facts.facts[index].kind + ".")
        : node("p", "notice plain", "Not among the facts the run ended with."));
    }
    const panes = node("div", "panes");
    panes.append(
      pane("Request", "what the tool was asked", record.request, "", bytes(record.request)),
      pane("Agent view", "what the model was shown", agent,
        "Nothing yet: the call has not returned.",
        record.agentResult === null ? null : bytes(record.agentResult)),
      pane("Raw response", "what the tool returned · harness only", record.raw,
        record.status === "PROJECTING"
          ? "Nothing yet: the call has not returned."
          : "Not recorded: the tool returned nothing storable (too large, not JSON data, or it failed).",
        "raw" in record ? bytes(record.raw) : null),
    );
    parts.push(panes);
    body.replaceChildren(...parts);
  }

  function moveFocus(event) {
    if (!view || !(event.target instanceof HTMLButtonElement)) return;
    const buttons = [...$("timeline").querySelectorAll("button.call")];
    const at = buttons.indexOf(event.target);
    if (at < 0) return;
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: buttons.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const next = buttons[Math.max(0, Math.min(buttons.length - 1, to))];
    for (const button of buttons) button.tabIndex = button === next ? 0 : -1;
    next.focus();
  }

  $("connect").addEventListener("submit", (event) => {
    event.preventDefault();
    const field = $("token");
    if (field.value !== "") {
      token = field.value;
      field.value = "";
      field.placeholder = "held in memory; type a new one to replace it";
    }
    load($("run-id").value.trim(), false);
  });
  $("forget").addEventListener("click", () => {
    token = "";
    generation++;
    clearView();
    $("token").placeholder = "";
    say("Token forgotten.");
  });
  $("refresh").addEventListener("click", () => {
    if (view) load(view.runId, true);
  });
  $("timeline").addEventListener("keydown", moveFocus);
})();
`;

/** The inspector's responses: path -> content type and body. */
const ASSETS: Readonly<Record<string, readonly [string, string]>> = {
  "/inspect": ["text/html; charset=utf-8", HTML],
  "/inspect/app.js": ["text/javascript; charset=utf-8", SCRIPT],
  "/inspect/app.css": ["text/css; charset=utf-8", CSS],
  "/inspect/icon.svg": ["image/svg+xml", ICON],
};

/**
 * Serves the inspector's page and assets on an app.
 *
 * @param app The app; its other middleware (no-store, nosniff) applies too.
 */
export function serveInspector(app: Hono<AppEnv>): void {
  for (const [path, [type, body]] of Object.entries(ASSETS)) {
    app.get(path, (c) => {
      c.header("Content-Type", type);
      c.header("Content-Security-Policy", INSPECTOR_CSP);
      c.header("Referrer-Policy", "no-referrer");
      c.header("X-Frame-Options", "DENY");
      c.header("Cross-Origin-Opener-Policy", "same-origin");
      c.header("Cross-Origin-Resource-Policy", "same-origin");
      return c.body(body, 200);
    });
  }
}
