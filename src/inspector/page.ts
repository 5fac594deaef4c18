/**
 * The inspector's page: markup only. Its script, styles and icon are separate responses, so the
 * Content-Security-Policy can forbid anything inline.
 *
 * @module
 */

// Relative URLs throughout, so the page also works when the app is mounted under a prefix.
/** The HTML of `GET /inspect`. */
export const PAGE_HTML: string = `<!doctype html>
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
      <button type="button" id="list-runs">List runs</button>
      <button type="button" id="forget">Forget token</button>
    </div>
  </form>
  <p id="message" class="message" role="status" aria-live="polite"></p>
  <section id="runs" class="panel" aria-labelledby="runs-title" hidden>
    <div class="run-head">
      <h2 id="runs-title">Recent runs</h2>
      <label class="inline" for="runs-status">Status
        <select id="runs-status">
          <option value="">any</option>
          <option value="ACTIVE">ACTIVE</option>
          <option value="ENDED">ENDED</option>
          <option value="errors">with errors</option>
        </select>
      </label>
    </div>
    <p class="help">Newest first; expired runs are gone. Filters apply to the pages loaded.</p>
    <div class="scroll">
      <table id="runs-table">
        <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Started</th>
          <th scope="col">Ended</th><th scope="col" class="num">Calls</th>
          <th scope="col" class="num">Errors</th><th scope="col" class="num">Cost spent</th>
          </tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <button type="button" id="runs-more" hidden>More runs</button>
  </section>
  <section id="run" class="panel" aria-labelledby="run-title" hidden>
    <div class="run-head">
      <h2 id="run-title">Run <code id="run-name"></code></h2>
      <span id="run-status" class="badge"></span>
      <button type="button" id="proof">Proof and export</button>
      <button type="button" id="refresh">Refresh</button>
    </div>
    <div id="proof-body" class="proof" hidden>
      <p id="proof-state" class="notice plain"></p>
      <p id="proof-verdict" class="notice plain"></p>
      <p class="help">The verdict is the server's: <code>verifyRun</code> of the run as the store
        holds it now, with the boundary's public key (which the store never sees). To check it
        yourself, run <code>verifyRun</code> (<code>@tool-boundary/core/verify</code>) on the
        downloaded bundle with the key of <code>GET /v1/ledger-key</code>.</p>
      <p id="proof-export"></p>
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
  <section id="waterfall-panel" class="panel" aria-labelledby="waterfall-title" hidden>
    <h2 id="waterfall-title">Calls by time</h2>
    <p class="help">Each bar runs from the record's creation to its last transition; calls that
      overlap in time are marked. Replays are not marked: a replayed call runs nothing and writes
      no record, so neither the records nor the call list tell one apart (none shown).</p>
    <div class="filters">
      <label class="inline" for="filter-status">Status <select id="filter-status"></select></label>
      <label class="inline" for="filter-tool">Tool <select id="filter-tool"></select></label>
      <label class="inline" for="filter-code">Error code <select id="filter-code"></select></label>
      <span id="filter-count" class="help"></span>
    </div>
    <p id="waterfall-scale" class="help"></p>
    <ol id="waterfall" class="waterfall"></ol>
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
