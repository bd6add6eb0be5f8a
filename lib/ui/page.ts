/**
 * The session browser's HTML: one shell per view, rendered on the server as plain HTML templates. It
 * holds no session data (the token lives in the browser's sessionStorage, so only the client can ask for
 * any); /ui/app.js fills it through the public API. Plain templates rather than hono/jsx: the shells are
 * static, and the JSX runtime cost 4 KB gzip of the R2-only Worker's 120 KB budget.
 */

export interface PageAssets {
  script: string;
  style: string;
}

/** HTML-escapes a value placed in text or a quoted attribute. */
function esc(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * Whitespace as JSX would render it: none at line breaks next to a tag, one space at a line break
 * inside text, so the templates below can be written as indented HTML.
 */
function compact(html: string): string {
  return html
    .replace(/>\s*\n\s*/g, '>')
    .replace(/\s*\n\s*</g, '<')
    .replace(/\s*\n\s*/g, ' ');
}

/**
 * The way from a view's page up to the server's root, as a relative URL: the list is `<root>/ui`, a
 * transcript `<root>/ui/sessions/<id>`. The page names everything relative to it, and the client reads it
 * (the body's data-root), so the browser works where the server's root is not the host's: Lambda behind a
 * named API Gateway stage serves `/ui` at `/prod/ui`, and `/ui/app.js` without the stage is not its own.
 */
function rootOf(view: 'list' | 'session'): string {
  return view === 'list' ? './' : '../../';
}

/** A root path (`/ui/app.js?v=…`) relative to the view's page. */
function fromRoot(view: 'list' | 'session', path: string): string {
  return path.startsWith('/') ? rootOf(view) + path.slice(1) : path;
}

/** The document around every view: head, skip link, top bar, sign-in, status and error boxes. */
function Layout(
  view: 'list' | 'session',
  title: string,
  assets: PageAssets,
  children: string,
): string {
  const at = (path: string) => esc(fromRoot(view, path));
  return `
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>${esc(title)}</title>
    <link rel="icon" href="${at('/ui/app.svg')}" type="image/svg+xml">
    <link rel="stylesheet" href="${at(assets.style)}">
    <script src="${at(assets.script)}" defer></script>
  </head>
  <body data-view="${view}" data-root="${rootOf(view)}">
    <a class="skip" href="#main">
      Skip to content
    </a>
    <header class="top">
      <a class="brand" href="${at('/ui')}">
        Satchel sessions
      </a>
      <div class="row">
        <span class="who" id="who">
          Checking access…
        </span>
        <button type="button" id="signout" hidden>
          Sign out
        </button>
        <a href="${at('/docs')}">API docs</a>
      </div>
    </header>
    <main id="main" tabindex="-1">
      <section id="signin" hidden aria-labelledby="signin-h">
        <h1 id="signin-h">Sign in</h1>
        <p class="note">
          Paste an API token (one of <code>SATCHEL_TOKENS</code>). It stays in this tab's
          session storage and is sent only as a bearer header to this server.
        </p>
        <form id="signin-form" method="post">
          <label for="token">Access token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="off"
            spellcheck="false"
            required>
          <button class="primary" type="submit">
            Sign in
          </button>
        </form>
        <p id="signin-error" class="msgbox" role="alert"></p>
      </section>
      <p id="status" class="msgbox" role="status">
        Loading…
      </p>
      <div id="error" class="msgbox error" role="alert"></div>
      <div id="content">${children}</div>
    </main>
  </body>
</html>
`;
}

/** The sessions list: search, the list with paging, and live updates. */
function ListView(): string {
  return `
  <h1>Sessions</h1>
  <form id="search" role="search" class="row">
    <label for="q" class="sr-only">
      Search sessions
    </label>
    <input id="q" name="q" type="search" placeholder="Search transcripts and tasks">
    <button type="submit">Search</button>
    <button type="button" id="clear-search" hidden>
      Back to the list
    </button>
  </form>
  <section id="results" hidden aria-labelledby="result-h">
    <h2 id="result-h" tabindex="-1">
      Search results
    </h2>
    <ol id="result-list" class="results"></ol>
  </section>
  <section id="list-wrap" aria-labelledby="sessions-h">
    <h2 id="sessions-h" tabindex="-1" class="sr-only">
      Newest first
    </h2>
    <button type="button" id="pending" hidden></button>
    <table id="sessions-table" class="sessions">
      <thead>
        <tr>
          <th scope="col">Task</th>
          <th scope="col">Model</th>
          <th scope="col">Provider</th>
          <th scope="col">Turns</th>
          <th scope="col">Size</th>
          <th scope="col">Updated</th>
        </tr>
      </thead>
      <tbody id="rows"></tbody>
    </table>
    <p id="empty" hidden>
      No sessions yet. Agents store them through <code>POST /v1/sessions</code>.
    </p>
    <nav class="pager" aria-label="Pages">
      <button type="button" id="prev" disabled>
        Newer
      </button>
      <span id="page-label">Page 1</span>
      <button type="button" id="next" disabled>
        Older
      </button>
    </nav>
  </section>
`;
}

/** A transcript: header, messages, actions and the audit timeline. */
function SessionView(): string {
  return `
  <p>
    <a href="${fromRoot('session', '/ui')}">← All sessions</a>
  </p>
  ${SessionHeader()}
  <section aria-labelledby="transcript-h">
    <h2 id="transcript-h">Transcript</h2>
    <ol id="messages" class="transcript"></ol>
  </section>
  ${Actions()}
  <section aria-labelledby="refs-h">
    <h2 id="refs-h">External refs</h2>
    <div id="refs"></div>
  </section>
  <section aria-labelledby="audit-h">
    <h2 id="audit-h">Audit log</h2>
    <ol id="audit" class="timeline"></ol>
  </section>
`;
}

/** The session's task, badges, facts, metadata and refs. */
function SessionHeader(): string {
  return `
  <h1 id="task" tabindex="-1" dir="auto">
    Session
  </h1>
  <p id="badges"></p>
  <dl id="facts" class="facts"></dl>
  <div id="metadata-wrap" hidden>
    <h2 id="metadata-h" class="sub">
      Metadata
    </h2>
    <dl id="metadata" class="facts metadata" aria-labelledby="metadata-h"></dl>
  </div>
  <div class="toolbar">
    <button type="button" id="download">
      Download JSON
    </button>
    <button type="button" id="reload">
      Reload
    </button>
    <span id="ro-note" class="note"></span>
  </div>
  <div id="action-msg" class="msgbox" role="alert"></div>
`;
}

/** Write controls, hidden for read-only tokens: append, continue, trim, delete. */
function Actions(): string {
  return `
<section id="actions" hidden aria-labelledby="actions-h">
  <h2 id="actions-h">Change this session</h2>
  <div class="actions">
    <section>
      <h3>Append a message</h3>
      <form id="append-form">
        <label for="append-text">User message</label>
        <textarea id="append-text" name="content"></textarea>
        <button type="submit" id="append-btn">
          Append
        </button>
      </form>
    </section>
    <section>
      <h3>Continue</h3>
      <form id="continue-form">
        <label for="continue-text">Message for the model</label>
        <textarea id="continue-text" name="message"></textarea>
        <button type="submit" id="continue-btn">
          Continue
        </button>
        <p class="note">
          Stores your message, then runs a model turn when the server has a model configured.
        </p>
      </form>
    </section>
    ${TrimAction()}
    ${DeleteAction()}
  </div>
</section>
`;
}

/** Trim with a preview of what would be dropped. */
function TrimAction(): string {
  return `
<section>
  <h3>Trim</h3>
  <form id="trim-form">
    <label for="trim-keep">Messages to keep (counts the system message)</label>
    <div class="row">
      <input id="trim-keep" name="keep" type="number" min="2" step="1" inputmode="numeric">
      <button type="button" id="trim-preview">
        Preview
      </button>
      <button type="submit" id="trim-btn" disabled>
        Trim
      </button>
    </div>
  </form>
  <div id="trim-out"></div>
</section>
`;
}

/** Delete with a confirmation step. */
function DeleteAction(): string {
  return `
<section>
  <h3>Delete</h3>
  <button type="button" id="delete-ask">
    Delete this session…
  </button>
  <div id="delete-confirm" hidden role="group" aria-labelledby="delete-q">
    <p id="delete-q">
      Delete this session with its audit log and search entries? This cannot be undone.
    </p>
    <div class="row">
      <button type="button" class="danger" id="delete-yes">
        Delete permanently
      </button>
      <button type="button" id="delete-no">
        Cancel
      </button>
    </div>
  </div>
</section>
`;
}

/** The whole page for a view, as an HTML string with its doctype. */
export function renderPage(view: 'list' | 'session', assets: PageAssets): string {
  const title = view === 'list' ? 'Sessions · Satchel' : 'Session · Satchel';
  const body = view === 'list' ? ListView() : SessionView();
  return `<!doctype html>${compact(Layout(view, title, assets, body))}`;
}
