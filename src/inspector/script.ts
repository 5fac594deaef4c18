/**
 * The inspector's browser script, served as `inspect/app.js`: one function, type-checked against
 * the DOM and linted like the rest of the code, and called with its configuration
 * (`(source)(config);`). What is served is not this function's `toString()` at run time, which a
 * bundler of the server's code may have rewritten (esbuild's keepNames, on in wrangler, adds
 * `__name(...)` calls the browser does not have), but its source as text in app_js.ts, written by
 * `deno task build:inspector` (a test fails while the two differ). The function must stand alone:
 * its body names nothing of this module or any other at run time (imports here are types only),
 * and what it needs from the server side comes in as `config`, as JSON.
 *
 * It only ever sets `textContent`, never HTML; the token lives in a variable of the function,
 * never in the URL, a cookie or storage.
 *
 * @module
 */
import type { RunBundle } from "../core/ledger.ts";
import type { CallSummary, RunsPage, RunState, RunSummary } from "../core/store.ts";
import type { CanonicalRecord, ObservedFact, RunEnd } from "../core/types.ts";

/**
 * What {@linkcode inspectorMain} is given by the server, as JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { InspectorConfig } from "./script.ts";
 * import { inspectorScript } from "./app_js.ts";
 *
 * const config: InspectorConfig = { messages: {}, runIdPattern: "^run-[0-9]+$" };
 * assert.ok(inspectorScript(config).endsWith(`(${JSON.stringify(config)});`));
 * ```
 */
export interface InspectorConfig {
  /** The fixed message of each error code, shown with an ERROR call's code. */
  readonly messages: Readonly<Record<string, string>>;
  /** The source of the run ID pattern, checked before a run is asked for. */
  readonly runIdPattern: string;
}

/**
 * The page's script. Runs once, after the page is parsed (`defer`), and wires up the form, the
 * buttons and the timeline's keyboard.
 *
 * Self-contained by contract: the source of this function is what the browser runs, so its body
 * may use only its parameter, its own locals and the browser's globals.
 *
 * @param config The messages and the run ID pattern.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inspectorMain } from "./script.ts";
 *
 * assert.match(inspectorMain.toString(), /^function inspectorMain\(config\)/);
 * ```
 */
export function inspectorMain(config: InspectorConfig): void {
  "use strict";
  type Row = { button: HTMLButtonElement; call: CallSummary; index: number };
  type View = {
    gen: number;
    runId: string;
    run: RunState;
    calls: CallSummary[];
    records: Map<string, CanonicalRecord>;
    rows: Map<string, Row>;
    facts: RunEnd | null;
    selected: string | null;
  };
  type Answer = { status: number; body: unknown };
  type Read = { stale: true } | { failed: true } | { record: CanonicalRecord | null };
  type AgentView = {
    status: string;
    toolCallId: string;
    [field: string]: unknown;
  };

  const MESSAGES = config.messages;
  const RUN_ID = new RegExp(config.runIdPattern);
  const STATUS_TEXT: Record<string, string> = {
    READY: "✓ READY",
    ERROR: "✕ ERROR",
    PROJECTING: "… PROJECTING",
    EXPIRED: "⌀ EXPIRED",
  };
  const EVIDENCE_TEXT: Record<string, string> = {
    EVIDENCE_FOUND: "EVIDENCE_FOUND",
    NO_EVIDENCE: "NO_EVIDENCE",
    ERROR: "evidence: ERROR",
  };
  const encoder = new TextEncoder();

  let token = "";
  let generation = 0;
  let view: View | null = null;
  /** The run list: every page loaded so far, and the cursor of the next. */
  let runs: RunSummary[] = [];
  let runsNext: string | null = null;
  let runsGeneration = 0;
  /** The export's download link, revoked when the page shows something else. */
  let exportUrl: string | null = null;

  /** The page's element of this ID and type; the page is fixed, so a miss is a bug. */
  function byId<T extends HTMLElement>(id: string, type: { new (): T; prototype: T }): T {
    const element = document.getElementById(id);
    if (!(element instanceof type)) throw new Error("inspector: no #" + id);
    return element;
  }
  const $ = (id: string) => byId(id, HTMLElement);
  const field = (id: string) => byId(id, HTMLInputElement);

  function node<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    className?: string,
    text?: unknown,
  ): HTMLElementTagNameMap[K] {
    const element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined && text !== null) element.textContent = String(text);
    return element;
  }
  const bytes = (value: unknown) => encoder.encode(JSON.stringify(value)).length;
  const grouped = (n: number) => n.toLocaleString("en-US");
  const sizeText = (n: number) => grouped(n) + " B";
  const sized = (label: string, n: number | null) =>
    n === null ? "no " + label : label + " " + sizeText(n);
  const pretty = (value: unknown) => JSON.stringify(value, null, 2);
  const when = (ms: unknown) =>
    typeof ms === "number"
      ? new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC")
      : "—";
  function relative(ms: number): string {
    const diff = ms - Date.now();
    const abs = Math.abs(diff);
    const text = abs < 1000
      ? grouped(abs) + " ms"
      : abs < 120000
      ? grouped(Math.round(abs / 1000)) + " s"
      : abs < 7200000
      ? grouped(Math.round(abs / 60000)) + " min"
      : grouped(Math.round(abs / 3600000)) + " h";
    return diff >= 0 ? "in " + text : text + " ago";
  }
  function badge(kind: string, text: string): HTMLSpanElement {
    return node("span", "badge b-" + kind, text);
  }
  function say(text: string, bad?: boolean): void {
    const message = $("message");
    message.textContent = text;
    message.classList.toggle("bad", Boolean(bad));
    message.setAttribute("role", bad ? "alert" : "status");
  }
  function toolRows(): HTMLTableSectionElement {
    const body = byId("per-tool", HTMLTableElement).tBodies[0];
    if (body === undefined) throw new Error("inspector: no #per-tool body");
    return body;
  }
  function clearProof(): void {
    if (exportUrl !== null) URL.revokeObjectURL(exportUrl);
    exportUrl = null;
    $("proof-body").hidden = true;
    $("proof-state").textContent = "";
    $("proof-verdict").textContent = "";
    delete $("proof-verdict").dataset.verdict;
    $("proof-export").replaceChildren();
  }
  function clearRuns(): void {
    runsGeneration++;
    runs = [];
    runsNext = null;
    $("runs").hidden = true;
    $("runs-more").hidden = true;
    runRows().replaceChildren();
  }
  function runRows(): HTMLTableSectionElement {
    const body = byId("runs-table", HTMLTableElement).tBodies[0];
    if (body === undefined) throw new Error("inspector: no #runs-table body");
    return body;
  }
  function clearView(): void {
    view = null;
    clearProof();
    $("waterfall-panel").hidden = true;
    $("waterfall").replaceChildren();
    $("run").hidden = true;
    $("workspace").hidden = true;
    $("facts").hidden = true;
    $("run-facts").replaceChildren();
    toolRows().replaceChildren();
    $("timeline").replaceChildren();
    $("facts-body").replaceChildren();
    $("detail-title").textContent = "No call selected";
    $("detail-body").replaceChildren(
      node("p", "help", "Select a call to see its request, the agent view and the raw response."),
    );
  }

  async function api(method: "GET" | "POST", path: string): Promise<Answer> {
    const response = await fetch(path, {
      method,
      headers: { authorization: "Bearer " + token, accept: "application/json" },
      cache: "no-store",
      credentials: "omit",
      redirect: "error",
      referrerPolicy: "no-referrer",
    });
    let body: unknown = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    return { status: response.status, body };
  }
  const runPath = (runId: string) => "v1/runs/" + encodeURIComponent(runId);
  const fieldOf = (body: unknown, name: string): unknown =>
    typeof body === "object" && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  const codeOf = (body: unknown) => {
    const code = fieldOf(body, "code");
    return typeof code === "string" ? code : null;
  };

  // Every failure clears what was shown: a refused token never leaves data on the page.
  function refuse(response: Answer, runId: string): void {
    const code = codeOf(response.body);
    clearView();
    clearRuns();
    if (response.status === 401) {
      token = "";
      say(
        "The token was refused (401 UNAUTHENTICATED): enter the harness token and load again.",
        true,
      );
    } else if (response.status === 403) {
      token = "";
      say(
        "This token may not read runs (403 FORBIDDEN): the inspector needs the harness token, " +
          "not the agent token.",
        true,
      );
    } else if (code === "RUN_NOT_FOUND") {
      say("No run " + runId + " (404 RUN_NOT_FOUND): it does not exist or has expired.", true);
    } else if (code === "INVALID_RUN_ID") {
      say("The server refused this run ID (400 INVALID_RUN_ID).", true);
    } else {
      say(
        "The server answered " + response.status + (code ? " " + code : "") +
          ": nothing to show.",
        true,
      );
    }
  }
  function unreachable(): void {
    clearView();
    clearRuns();
    say("The server could not be reached: nothing to show.", true);
  }

  async function load(runId: string, keepSelection: boolean): Promise<void> {
    const gen = ++generation;
    const selected = keepSelection && view && view.runId === runId ? view.selected : null;
    clearView();
    if (!token) {
      say("Enter the harness token first: the inspector reads runs with it.", true);
      field("token").focus();
      return;
    }
    if (!RUN_ID.test(runId)) {
      say("Enter a run ID: 1 to 128 of A-Z a-z 0-9 _ - . (not dots only).", true);
      field("run-id").focus();
      return;
    }
    say("Loading run " + runId + "…");
    let response: Answer;
    try {
      response = await api("GET", runPath(runId));
    } catch {
      if (gen === generation) unreachable();
      return;
    }
    if (gen !== generation) return;
    const run = fieldOf(response.body, "run") as RunState | undefined;
    const calls = fieldOf(response.body, "calls");
    if (response.status !== 200 || !run || !Array.isArray(calls)) {
      refuse(response, runId);
      return;
    }
    const current: View = {
      gen,
      runId,
      run,
      calls: calls as CallSummary[],
      records: new Map(),
      rows: new Map(),
      facts: null,
      selected: null,
    };
    view = current;
    renderRun(current);
    renderTimeline(current);
    renderWaterfall(current);
    say(
      "Run " + runId + ": " + calls.length + " call" + (calls.length === 1 ? "" : "s") +
        " begun, status " + run.status + ".",
    );
    const work = [prefetch(current)];
    if (run.status === "ENDED") work.push(loadFacts(current));
    if (selected !== null && current.rows.has(selected)) work.push(select(selected));
    await Promise.all(work);
  }

  function renderRun(current: View): void {
    const run = current.run;
    $("run-name").textContent = run.runId;
    const status = $("run-status");
    status.className = "badge b-" + run.status;
    status.textContent = run.status;
    const facts = $("run-facts");
    const item = (label: string, value: string, id?: string) => {
      const wrap = node("div");
      const dd = node("dd", "", value);
      if (id) dd.id = id;
      wrap.append(node("dt", "", label), dd);
      facts.append(wrap);
    };
    item("Calls used", grouped(run.used.calls) + " of " + grouped(run.budget.calls), "run-used");
    // A run with a cost budget, or with calls of a tool with a cost: what its completed calls
    // spent and its calls in flight hold reserved, against the budget when it has one.
    if (run.cost) {
      const limit = run.budget.cost;
      item(
        "Cost",
        grouped(run.cost.spent) + " spent · " + grouped(run.cost.reserved) + " reserved · " +
          (limit === undefined ? "no cost budget" : "budget " + grouped(limit)),
        "run-cost",
      );
    }
    item("Deadline", when(run.deadline) + " (" + relative(run.deadline) + ")");
    item("Started", when(run.startedAt));
    item("Ended", run.endedAt === null ? "not ended" : when(run.endedAt));
    const tools = new Set([...Object.keys(run.budget.perTool), ...Object.keys(run.used.perTool)]);
    const body = toolRows();
    for (const name of [...tools].sort()) {
      const row = node("tr");
      const own = (table: Record<string, number>) =>
        Object.prototype.hasOwnProperty.call(table, name) ? table[name] ?? null : null;
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

  function renderTimeline(current: View): void {
    const list = $("timeline");
    current.calls.forEach((call, index) => {
      const item = node("li");
      const button = node("button", "call");
      button.type = "button";
      button.dataset.toolCallId = call.toolCallId;
      button.tabIndex = index === 0 ? 0 : -1;
      button.addEventListener("click", () => select(call.toolCallId));
      item.append(button);
      list.append(item);
      current.rows.set(call.toolCallId, { button, call, index });
      fillRow(current, call.toolCallId);
    });
    if (current.calls.length === 0) {
      list.append(node("li", "help", "This run has begun no calls yet."));
    }
    $("workspace").hidden = false;
  }

  // A row from the record when it has been read (it is canonical), else from the listing.
  function fillRow(current: View, id: string): void {
    const row = current.rows.get(id);
    if (row === undefined) return;
    const record = current.records.get(id);
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
    const parts: string[] = [];
    if (status === "PROJECTING") parts.push("running, no duration yet");
    else if (typeof createdAt === "number" && typeof updatedAt === "number") {
      parts.push(grouped(updatedAt - createdAt) + " ms");
    } else parts.push("record expired");
    if (record) {
      parts.push(sized("request", bytes(record.request)));
      parts.push(sized("raw", "raw" in record ? bytes(record.raw) : null));
      parts.push(
        sized("agent result", record.agentResult === null ? null : bytes(record.agentResult)),
      );
    } else if (status !== "EXPIRED") parts.push("sizes loading…");
    const children: HTMLElement[] = [head, badges, node("span", "meta", parts.join(" · "))];
    if (record && record.agentResult && record.agentResult.evidence === "NO_EVIDENCE") {
      children.push(node("span", "scope-line", "Nothing found in: " + record.agentResult.scope));
    }
    button.replaceChildren(...children);
    const label = [id, status, evidence ?? "", errorCode ?? ""].filter(Boolean).join(", ");
    button.setAttribute("aria-label", "Call " + (row.index + 1) + ": " + label);
  }

  async function readRecord(current: View, id: string): Promise<Read> {
    let response: Answer;
    try {
      response = await api(
        "GET",
        runPath(current.runId) + "/tool-calls/" + encodeURIComponent(id),
      );
    } catch {
      return { failed: true };
    }
    if (view !== current) return { stale: true };
    if (response.status === 200 && fieldOf(response.body, "toolCallId") === id) {
      const record = response.body as CanonicalRecord;
      current.records.set(id, record);
      fillRow(current, id);
      return { record };
    }
    if (response.status === 404) return { record: null };
    refuse(response, current.runId);
    return { stale: true };
  }

  // The sizes in the timeline come from each record; a few reads at a time.
  async function prefetch(current: View): Promise<void> {
    const queue = current.calls.filter((call) => call.status !== "EXPIRED").map((c) =>
      c.toolCallId
    );
    const worker = async () => {
      while (queue.length > 0 && view === current) {
        const id = queue.shift();
        if (id === undefined || current.records.has(id)) continue;
        const read = await readRecord(current, id);
        if ("stale" in read) return;
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  }

  async function loadFacts(current: View): Promise<void> {
    // Only for an ENDED run: ending again is idempotent and returns the facts it ended with.
    let response: Answer;
    try {
      response = await api("POST", runPath(current.runId) + "/end");
    } catch {
      return;
    }
    if (view !== current) return;
    if (response.status !== 200 || !Array.isArray(fieldOf(response.body, "facts"))) {
      if (response.status === 401 || response.status === 403) refuse(response, current.runId);
      return;
    }
    current.facts = response.body as RunEnd;
    renderFacts(current.facts);
    const selected = current.selected === null ? undefined : current.records.get(current.selected);
    if (current.selected !== null && selected !== undefined) {
      renderDetail(current, current.selected, selected);
    }
  }

  function renderFacts({ facts, omitted }: RunEnd): void {
    const body = $("facts-body");
    const intro = node(
      "p",
      "help",
      facts.length + " fact" + (facts.length === 1 ? "" : "s") +
        ", in execution order; only READY records become facts" +
        (omitted > 0 ? "; " + omitted + " left out by the fact caps." : "."),
    );
    const list = node("ol", "facts-list");
    facts.forEach((fact: ObservedFact, index) => {
      const item = node("li");
      const head = node("span", "badges");
      head.append(
        node("span", "seq", "fact " + (index + 1)),
        badge(fact.kind, fact.kind),
        node("span", "call-id mono", fact.toolCallId),
        node("span", "tool", fact.toolName),
      );
      item.append(head);
      item.append(
        node(
          "span",
          fact.kind === "NEGATIVE_OBSERVATION" ? "scope-line" : "meta",
          (fact.kind === "NEGATIVE_OBSERVATION" ? "Nothing found in: " : "Scope: ") + fact.scope,
        ),
      );
      item.append(node("pre", "", pretty(fact.content)));
      list.append(item);
    });
    body.replaceChildren(intro, list);
    $("facts").hidden = false;
  }

  async function select(id: string): Promise<void> {
    const current = view;
    if (!current || !current.rows.has(id)) return;
    current.selected = id;
    for (const [other, row] of current.rows) {
      const selected = other === id;
      row.button.setAttribute("aria-current", selected ? "true" : "false");
      row.button.tabIndex = selected ? 0 : -1;
    }
    $("detail-title").textContent = "Call " + id;
    $("detail-body").replaceChildren(node("p", "help", "Reading the record…"));
    const read = await readRecord(current, id);
    if ("stale" in read || view !== current || current.selected !== id) return;
    if ("failed" in read) {
      $("detail-body").replaceChildren(node("p", "notice error", "The record could not be read."));
      return;
    }
    renderDetail(current, id, read.record);
  }

  function pane(
    title: string,
    what: string,
    value: unknown,
    absent: string,
    size: number | null,
  ): HTMLElement {
    const box = node("article", "pane");
    const heading = node("h3", "", title);
    box.append(heading, node("p", "what", what + (size === null ? "" : " · " + sizeText(size))));
    if (value === undefined) box.append(node("p", "absent", absent));
    else box.append(node("pre", "", pretty(value)));
    return box;
  }

  function renderDetail(current: View, id: string, record: CanonicalRecord | null): void {
    const body = $("detail-body");
    if (record === null) {
      $("detail-title").textContent = "Call " + id;
      body.replaceChildren(
        node(
          "p",
          "notice expired",
          "The record of this call expired: only its ID and begin order remain.",
        ),
      );
      return;
    }
    $("detail-title").textContent = "Call " + id + " · " + record.toolName;
    const badges = node("p", "badges");
    badges.append(badge(record.status, STATUS_TEXT[record.status] ?? record.status));
    if (record.evidence) {
      badges.append(badge(record.evidence, EVIDENCE_TEXT[record.evidence] ?? record.evidence));
    }
    if (record.errorCode) badges.append(badge("code", record.errorCode));
    const times = node(
      "p",
      "meta",
      "created " + when(record.createdAt) + " · updated " +
        when(record.updatedAt) + " · expires " + when(record.expiresAt),
    );
    const parts: HTMLElement[] = [badges, times];
    const cost = record.cost;
    if (cost) {
      // What begin reserved for the call, and what it spent once complete.
      const back = cost.spent === null ? 0 : cost.reserved - cost.spent;
      parts.push(
        node(
          "p",
          "meta cost",
          "cost " + grouped(cost.reserved) + " reserved · " +
            (cost.spent === null
              ? "spent when the call completes"
              : grouped(cost.spent) + " spent" +
                (back > 0 ? " · " + grouped(back) + " given back to the budget" : "")),
        ),
      );
    }
    let agent: AgentView | undefined;
    if (record.status === "PROJECTING") {
      parts.push(
        node(
          "p",
          "notice pending",
          "Still running (PROJECTING): the tool or its projector has not finished. Refresh to see the outcome.",
        ),
      );
    } else if (record.status === "ERROR") {
      const message = (record.errorCode === null ? undefined : MESSAGES[record.errorCode]) ?? "";
      parts.push(
        node("p", "notice error", "ERROR " + record.errorCode + (message ? ": " + message : "")),
      );
      agent = { status: "ERROR", toolCallId: record.toolCallId, code: record.errorCode };
      if (message) agent.message = message;
      const failure = record.failure;
      if (failure) {
        // What the tool threw: harness-only, shown as text like every payload.
        const box = node("div", "notice error failure");
        box.append(node("strong", "", "The tool threw " + failure.name));
        box.append(
          failure.message === null
            ? node("p", "absent", "Its message was dropped: it was over the 2 KiB bound.")
            : node("pre", "failure-message", failure.message),
        );
        parts.push(box);
      }
    } else if (record.agentResult) {
      const result = record.agentResult;
      parts.push(
        result.evidence === "NO_EVIDENCE"
          ? node("p", "notice none", "Nothing found in: " + result.scope)
          : node("p", "notice found", "Evidence found in: " + result.scope),
      );
      agent = {
        status: "READY",
        toolCallId: record.toolCallId,
        evidence: result.evidence,
        scope: result.scope,
        content: result.content,
      };
    }
    if (current.facts) {
      const facts = current.facts.facts;
      const index = facts.findIndex((fact) => fact.toolCallId === id);
      const fact = facts[index];
      parts.push(
        fact !== undefined
          ? node(
            "p",
            "notice plain",
            "In the facts the run ended with: fact " + (index + 1) + ", " + fact.kind + ".",
          )
          : node("p", "notice plain", "Not among the facts the run ended with."),
      );
    }
    const panes = node("div", "panes");
    panes.append(
      pane("Request", "what the tool was asked", record.request, "", bytes(record.request)),
      pane(
        "Agent view",
        "what the model was shown",
        agent,
        "Nothing yet: the call has not returned.",
        record.agentResult === null ? null : bytes(record.agentResult),
      ),
      pane(
        "Raw response",
        "what the tool returned · harness only",
        record.raw,
        record.status === "PROJECTING"
          ? "Nothing yet: the call has not returned."
          : "Not recorded: the tool returned nothing storable (too large, not JSON data, or it failed).",
        "raw" in record ? bytes(record.raw) : null,
      ),
    );
    parts.push(panes);
    body.replaceChildren(...parts);
  }

  // The waterfall: one bar per call from createdAt to updatedAt (a call still running, to now).
  function renderWaterfall(current: View): void {
    const list = $("waterfall");
    const loadedAt = Date.now();
    const spans = current.calls.map((call) => {
      if (call.createdAt === null || call.updatedAt === null) return null;
      const end = call.status === "PROJECTING"
        ? Math.max(loadedAt, call.createdAt)
        : call.updatedAt;
      return { start: call.createdAt, end };
    });
    const timed = spans.filter((span): span is { start: number; end: number } => span !== null);
    const first = Math.min(...timed.map((span) => span.start));
    const last = Math.max(...timed.map((span) => span.end));
    const total = Math.max(1, last - first);
    $("waterfall-scale").textContent = timed.length === 0
      ? "No call has a record to place in time."
      : "From " + when(first) + " to " + when(last) + " · " + grouped(last - first) + " ms";
    current.calls.forEach((call, index) => {
      const item = node("li");
      item.dataset.toolCallId = call.toolCallId;
      const label = node("span", "wf-label");
      label.append(
        node("span", "seq", "#" + (index + 1) + " "),
        node("span", "mono", call.toolCallId),
        node("span", "tool", " " + (call.toolName ?? "tool unknown")),
      );
      const track = node("span", "wf-track");
      const span = spans[index];
      const note = node("span", "wf-note");
      if (span === null || span === undefined) {
        note.textContent = "record expired: no times";
      } else {
        const bar = node("span", "wf-bar st-" + call.status);
        // CSSOM, not a style attribute: the policy allows it.
        bar.style.left = ((span.start - first) / total * 100).toFixed(3) + "%";
        bar.style.width = ((span.end - span.start) / total * 100).toFixed(3) + "%";
        const overlaps = spans.filter((other, at) =>
          at !== index && other !== null && other !== undefined &&
          other.start < span.end && span.start < other.end
        ).length;
        item.dataset.overlaps = String(overlaps);
        if (overlaps > 0) {
          bar.classList.add("overlap");
        }
        bar.title = call.toolCallId;
        track.append(bar);
        note.textContent = (call.status === "PROJECTING" ? "running, " : "") +
          grouped(span.end - span.start) + " ms from +" + grouped(span.start - first) + " ms" +
          (overlaps > 0
            ? " · overlaps " + overlaps + " other call" + (overlaps === 1 ? "" : "s")
            : "");
      }
      label.append(node("br"), note);
      item.append(label, track);
      list.append(item);
    });
    fillFilter("filter-status", "any status", current.calls.map((call) => call.status));
    fillFilter("filter-tool", "any tool", current.calls.map((call) => call.toolName));
    fillFilter("filter-code", "any error code", current.calls.map((call) => call.errorCode));
    applyFilters();
    $("waterfall-panel").hidden = false;
  }

  function fillFilter(id: string, any: string, values: (string | null)[]): void {
    const select = byId(id, HTMLSelectElement);
    const options = [node("option", "", any)];
    options[0]!.value = "";
    for (const value of [...new Set(values)].sort()) {
      if (value === null) continue;
      const option = node("option", "", value);
      option.value = value;
      options.push(option);
    }
    select.replaceChildren(...options);
  }

  // Status, tool and error code narrow both the timeline and the waterfall.
  function applyFilters(): void {
    const current = view;
    if (!current) return;
    const status = byId("filter-status", HTMLSelectElement).value;
    const tool = byId("filter-tool", HTMLSelectElement).value;
    const code = byId("filter-code", HTMLSelectElement).value;
    const shown = new Set(
      current.calls.filter((call) =>
        (status === "" || call.status === status) && (tool === "" || call.toolName === tool) &&
        (code === "" || call.errorCode === code)
      ).map((call) => call.toolCallId),
    );
    for (const [id, row] of current.rows) {
      const item = row.button.parentElement;
      if (item) item.hidden = !shown.has(id);
    }
    for (const item of $("waterfall").querySelectorAll<HTMLElement>("li")) {
      item.hidden = !shown.has(item.dataset.toolCallId ?? "");
    }
    $("filter-count").textContent = "Showing " + shown.size + " of " + current.calls.length +
      " call" + (current.calls.length === 1 ? "" : "s") + ".";
  }

  async function listRuns(more: boolean): Promise<void> {
    if (!token) {
      say("Enter the harness token first: the inspector reads runs with it.", true);
      field("token").focus();
      return;
    }
    const gen = more ? runsGeneration : ++runsGeneration;
    const cursor = more ? runsNext : null;
    if (!more) {
      runs = [];
      runsNext = null;
    }
    let response: Answer;
    try {
      response = await api(
        "GET",
        "v1/runs?limit=20" + (cursor === null ? "" : "&cursor=" + encodeURIComponent(cursor)),
      );
    } catch {
      if (gen === runsGeneration) unreachable();
      return;
    }
    if (gen !== runsGeneration) return;
    const listed = fieldOf(response.body, "runs");
    const next = fieldOf(response.body, "next");
    if (response.status !== 200 || !Array.isArray(listed)) {
      refuse(response, "");
      return;
    }
    runs = runs.concat(listed as RunSummary[]);
    runsNext = typeof next === "string" ? next : null;
    renderRuns();
    say(
      runs.length + " run" + (runs.length === 1 ? "" : "s") + " listed" +
        (runsNext === null ? "." : "; more with More runs."),
    );
  }

  function renderRuns(): void {
    const body = runRows();
    const filter = byId("runs-status", HTMLSelectElement).value;
    const rows: HTMLTableRowElement[] = [];
    for (const run of runs as RunsPage["runs"]) {
      if (filter === "errors" ? run.errors === 0 : filter !== "" && run.status !== filter) continue;
      const row = node("tr");
      row.dataset.runId = run.runId;
      const open = node("button", "", run.runId);
      open.type = "button";
      open.addEventListener("click", () => {
        field("run-id").value = run.runId;
        load(run.runId, false);
      });
      const cell = node("td");
      cell.append(open);
      const status = node("td");
      status.append(badge(run.status, run.status));
      row.append(
        cell,
        status,
        node("td", "", when(run.startedAt)),
        node("td", "", run.endedAt === null ? "—" : when(run.endedAt)),
        node("td", "num", grouped(run.calls)),
        node("td", "num" + (run.errors > 0 ? " bad" : ""), grouped(run.errors)),
        node(
          "td",
          "num",
          run.cost === undefined ? "—" : grouped(run.cost.spent) +
            (run.cost.reserved > 0 ? " + " + grouped(run.cost.reserved) + " reserved" : ""),
        ),
      );
      rows.push(row);
    }
    if (rows.length === 0) {
      const row = node("tr");
      const cell = node("td", "help", runs.length === 0 ? "No live run." : "No run matches.");
      cell.colSpan = 7;
      row.append(cell);
      rows.push(row);
    }
    body.replaceChildren(...rows);
    $("runs-more").hidden = runsNext === null;
    $("runs").hidden = false;
  }

  // The proof state, read from the export and the ledger key; the export as a download.
  async function proof(current: View): Promise<void> {
    clearProof();
    $("proof-body").hidden = false;
    $("proof-state").textContent = "Reading the export…";
    let exported: Answer;
    let key: Answer;
    let checked: Answer;
    try {
      [exported, key, checked] = await Promise.all([
        api("GET", runPath(current.runId) + "/export"),
        api("GET", "v1/ledger-key"),
        api("GET", runPath(current.runId) + "/verdict"),
      ]);
    } catch {
      if (view === current) $("proof-state").textContent = "The export could not be read.";
      return;
    }
    if (view !== current) return;
    const bundle = exported.body as RunBundle | null;
    if (exported.status !== 200 || !bundle || !Array.isArray(bundle.records)) {
      if (exported.status === 401 || exported.status === 403) refuse(exported, current.runId);
      else $("proof-state").textContent = "No export (" + exported.status + ").";
      return;
    }
    const keyId = key.status === 200 ? fieldOf(key.body, "keyId") : null;
    const signed = bundle.records.filter((record) => record.proof !== undefined).length;
    const total = bundle.records.length;
    const receipt = bundle.receipt;
    const state = $("proof-state");
    let text: string;
    if (receipt) {
      const stateOf = (call: NonNullable<RunBundle["receipt"]>["calls"][number]) =>
        "state" in call ? call.state : "SIGNED";
      const counted = (state: string) => receipt.calls.filter((c) => stateOf(c) === state).length;
      text = "Sealed: a receipt by key " + receipt.keyId + " over " + receipt.calls.length +
        " call" + (receipt.calls.length === 1 ? "" : "s") + " (" + counted("SIGNED") +
        " with a signed record, " + counted("UNSIGNED") + " completed without a proof, " +
        counted("INCOMPLETE") + " in flight at the seal); " +
        (typeof keyId === "string"
          ? (keyId === receipt.keyId
            ? "the server's ledger key."
            : "not the server's key " + keyId + ".")
          : "the server serves no ledger key.") +
        (typeof receipt.timestamp === "string"
          ? " It carries an RFC 3161 timestamp, not checked here (verifyRun with tsaCertificates)."
          : "");
    } else if (typeof keyId !== "string" && signed === 0) {
      text = "Unsigned: the server has no ledger key and no record carries a proof. " +
        "To sign runs, give the boundary a ledger key: the ledgerKey option, or LEDGER_KEY " +
        "(a private JWK, e.g. from `deno task keys`) for the edge servers (docs/proof.md).";
    } else {
      text = "Not sealed yet: " + signed + " of " + total + " record" + (total === 1 ? "" : "s") +
        " carry a proof" + (typeof keyId === "string" ? " (ledger key " + keyId + ")" : "") +
        "; the receipt comes when the run ends.";
    }
    state.textContent = text;
    state.dataset.state = receipt
      ? "sealed"
      : typeof keyId !== "string" && signed === 0
      ? "unsigned"
      : "unsealed";
    const verdictLine = $("proof-verdict");
    const verdict = checked.status === 200 ? fieldOf(checked.body, "verdict") : undefined;
    if (verdict === null) {
      verdictLine.textContent = "Verdict: unsigned (the server has no ledger key to verify with).";
      verdictLine.dataset.verdict = "unsigned";
    } else if (typeof verdict === "object" && verdict !== undefined) {
      const found = verdict as Record<string, unknown>;
      if (found.ok === true) {
        verdictLine.textContent = "Verdict: verifies" +
          (found.sealed === true ? ", sealed, " : ", not sealed yet, ") + String(found.calls) +
          " call" + (found.calls === 1 ? "" : "s") + ".";
        verdictLine.dataset.verdict = "ok";
      } else {
        verdictLine.textContent = "Verdict: does not verify: " + String(found.reason) +
          (typeof found.toolCallId === "string"
            ? " at " + found.toolCallId
            : typeof found.seq === "number"
            ? " at call #" + found.seq + " of the run"
            : "") +
          ".";
        verdictLine.dataset.verdict = "failed";
      }
    } else {
      verdictLine.textContent = "Verdict: not available (" + checked.status + ").";
      verdictLine.dataset.verdict = "unknown";
    }
    const json = JSON.stringify(bundle, null, 2);
    exportUrl = URL.createObjectURL(new Blob([json], { type: "application/json" }));
    const link = node("a", "download", "Download the export (" + sizeText(bytes(bundle)) + ")");
    link.href = exportUrl;
    link.download = current.runId + ".json";
    link.id = "export-link";
    $("proof-export").replaceChildren(link);
  }

  function moveFocus(event: KeyboardEvent): void {
    if (!view || !(event.target instanceof HTMLButtonElement)) return;
    // Only the calls the filters show.
    const buttons = [...$("timeline").querySelectorAll<HTMLButtonElement>("button.call")].filter(
      (button) => !(button.parentElement?.hidden ?? false),
    );
    const at = buttons.indexOf(event.target);
    if (at < 0) return;
    const moves: Record<string, number> = {
      ArrowDown: at + 1,
      ArrowUp: at - 1,
      Home: 0,
      End: buttons.length - 1,
    };
    const to = moves[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const next = buttons[Math.max(0, Math.min(buttons.length - 1, to))];
    if (next === undefined) return;
    for (const button of buttons) button.tabIndex = button === next ? 0 : -1;
    next.focus();
  }

  byId("connect", HTMLFormElement).addEventListener("submit", (event) => {
    event.preventDefault();
    const input = field("token");
    if (input.value !== "") {
      token = input.value;
      input.value = "";
      input.placeholder = "held in memory; type a new one to replace it";
    }
    load(field("run-id").value.trim(), false);
  });
  $("forget").addEventListener("click", () => {
    token = "";
    generation++;
    clearView();
    clearRuns();
    field("token").placeholder = "";
    say("Token forgotten.");
  });
  $("refresh").addEventListener("click", () => {
    if (view) load(view.runId, true);
  });
  $("proof").addEventListener("click", () => {
    if (view) proof(view);
  });
  $("list-runs").addEventListener("click", () => {
    const input = field("token");
    if (input.value !== "") {
      token = input.value;
      input.value = "";
      input.placeholder = "held in memory; type a new one to replace it";
    }
    listRuns(false);
  });
  $("runs-more").addEventListener("click", () => listRuns(true));
  byId("runs-status", HTMLSelectElement).addEventListener("change", renderRuns);
  for (const id of ["filter-status", "filter-tool", "filter-code"]) {
    byId(id, HTMLSelectElement).addEventListener("change", applyFilters);
  }
  $("timeline").addEventListener("keydown", moveFocus);
}
