/**
 * The inspector's styles, served as `inspect/app.css`.
 *
 * @module
 */

/** The CSS of `GET /inspect/app.css`: light scheme; one column below 900px. */
export const STYLES_CSS: string = `:root {
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
.run-head button + button { margin-left: 0; }
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
.inline { display: inline-flex; gap: 6px; align-items: center; font-weight: 600; font-size: 14px; }
select { font: inherit; padding: 4px 6px; border: 1px solid #8c959f; border-radius: 6px; background: #fff; max-width: 100%; }
.scroll { overflow-x: auto; }
#runs-table { width: 100%; margin: 8px 0; }
#runs-table button { padding: 2px 8px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; overflow-wrap: anywhere; text-align: left; }
.filters { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 8px 0; }
.waterfall { list-style: none; margin: 6px 0 0; padding: 0; display: grid; gap: 4px; }
.waterfall li { display: grid; grid-template-columns: minmax(120px, 260px) minmax(0, 1fr); gap: 10px; align-items: center; }
@media (max-width: 900px) { .waterfall li { grid-template-columns: 1fr; gap: 2px; } }
.wf-label { font-size: 13px; overflow-wrap: anywhere; }
.wf-track { position: relative; height: 18px; background: var(--page); border: 1px solid var(--line); border-radius: 4px; }
.wf-bar { position: absolute; top: 2px; bottom: 2px; min-width: 3px; border-radius: 3px; background: var(--expired); }
.wf-bar.st-READY { background: var(--ready); }
.wf-bar.st-ERROR { background: var(--error); }
.wf-bar.st-PROJECTING { background: var(--pending); }
.wf-bar.overlap { box-shadow: 0 0 0 2px var(--focus); }
.wf-note { font-size: 12px; color: var(--muted); }
.proof { margin-top: 10px; display: grid; gap: 6px; }
.proof p { margin: 0; }
.notice.failure { font-weight: 400; }
.notice.failure pre { margin: 4px 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
`;
