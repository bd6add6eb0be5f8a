/**
 * The session browser's client script. It runs in the browser only: lib/ui/index.ts serves the source
 * text of every function exported here, inside one function scope, as /ui/app.js, and calls
 * `sessionBrowser` last. So the code is type-checked with the rest of lib/ and minified with the Worker
 * bundle, and the page needs no build step and no script from anywhere else.
 *
 * Why one module that imports nothing and holds nothing but functions and types: the served script is
 * the functions' own text, so a function may use only browser globals and the other functions here. An
 * imported name is rewritten by bundlers and test runners into something the browser does not have, and
 * a module-level constant would not be in the script (test/ui/routes.test.ts checks both).
 *
 * Rules it keeps:
 * - Every session string is untrusted: the DOM is built with createElement and textContent only (the CSP
 *   also enforces Trusted Types, so an innerHTML assignment would throw), and no session string becomes a
 *   link, a URL, a style or an event handler. Refs are shown as text.
 * - It speaks only the public /v1 API, with the token from sessionStorage as a bearer header: never in a
 *   URL, a cookie or a log line.
 * - Open mode is found by calling GET /v1/sessions without a token (200 open, 401 sign in).
 * - Write controls: a token's scope is not published, so the page asks once per page load with a request
 *   that can never write: PUT /v1/sessions/ui-write-probe without If-Match. A read-only token gets 403
 *   (the scope check comes first); a writable one gets 428 (If-Match required). Only a 403 hides the
 *   controls; a 403 on a real write hides them too.
 * - Writes carry If-Match with the ETag the page loaded, trim and delete too: the server answers 412
 *   when the session moved on, and nothing is written.
 */

// ------------------------------------------------------------------------------------------------
// Types (erased: they cost the script nothing)

interface Summary {
  id: string;
  task: string;
  turns: number;
  model: string;
  provider: string;
  created_at: string;
  updated_at: string;
  bytes: number;
  sandbox?: boolean;
  untrusted_ingested?: boolean;
  episode_untrusted?: boolean;
  metadata?: Record<string, string>;
}
interface ToolCall {
  id: string;
  function: { name: string; arguments: string };
}
interface Message {
  role: string;
  content: unknown;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  reasoning_content?: string;
}
interface Ref {
  kind: string;
  uri: string;
  created_by?: string;
  read_only?: boolean;
  created_at?: string;
}
interface Session extends Summary {
  messages: Message[];
  external_refs: Ref[];
  revision: number;
  episode_taint_tracked?: boolean;
}
interface AuditRecord {
  at: string;
  op: string;
  device: string;
  revision: number;
  messages_added: number;
  bytes: number;
  redactions: number;
  dropped_groups: number;
  ingest_sources: string[];
  untrusted_ingested: boolean;
  episode_untrusted: boolean;
}
interface SearchHit {
  id: string;
  task: string;
  score: number;
  snippet: string;
  updated_at: string;
}
interface Answer {
  status: number;
  etag: string | null;
  text: string;
  json: any;
  /** A keyed write answered with an earlier attempt's result (`Idempotent-Replayed`): nothing was written. */
  replayed?: boolean;
}
interface ApiOptions {
  body?: unknown;
  ifMatch?: string | null;
  /** A token to use instead of the stored one; null sends none. */
  auth?: string | null;
  /** An Idempotency-Key, so that sending the request again does not write twice. */
  key?: string;
  /** Ms until an unanswered call counts as unsent (status 0): 30 s for a GET, 60 s for a write. */
  wait?: number;
}
/**
 * Tool results under the call they answer, with their index in the transcript (`of`), and those indexes
 * (`under`: not shown on their own).
 */
interface ResultsByCall {
  of: Map<ToolCall, { m: Message; i: number }[]>;
  under: Set<number>;
}
type Child = Node | string | number | null | undefined | false;

/** What the sessions list keeps between events. */
interface ListState {
  rows: HTMLElement;
  pageSize: number;
  /** cursors[i] opens page i. */
  cursors: (string | null)[];
  pageIndex: number;
  /** The newest updated_at seen: the live loop's updated_after. */
  newest: string | null;
  /** The first page was read: until then (its load failed) a poll's answer is the list, not changes. */
  listed?: boolean;
  searching: boolean;
  /** The query of the results on screen: run again after a sign-in and on Back (review s62a). */
  query?: string;
  /** The search asked last: the answer of an earlier one (or of one cleared) is dropped. */
  searchTurn: number;
  /** Live-update polls so far: every 12th reads the first page again (`pollChanges`). */
  polls: number;
  /** The ids of sessions changed while the first page was not on screen. */
  pending: Set<string>;
  polling: boolean;
  /** The last live-update poll got no answer (the page says its updates are paused). */
  pollFailing: boolean;
  /** Page loads asked for: only the answer of the last one is shown (`loadPage`). */
  loads: number;
}

/** What the transcript view keeps between events. */
interface SessionState {
  id: string;
  /** The session's API path. */
  path: string;
  session: Session | null;
  etag: string | null;
  /** The stored JSON as the server sent it: downloaded as is. */
  raw: string;
  /** The keep count of the trim preview on screen; null when there is none. */
  previewKeep: number | null;
  /** Where actions report. */
  msg: HTMLElement;
  /** Bumped on every render, so the chunks of an older render stop. */
  renders: number;
  /** Loads asked for: only the answer of the last one is shown (`loadSession`). */
  loads: number;
  /**
   * A continue whose turn did not finish (an answer saying "your message was stored (") or whose answer
   * was lost (no answer, 5xx): sent again with the same key and If-Match, the message is not stored
   * twice and the missing turn runs. Dropped on success, on 412, 404 and the other refusals, and when a
   * load shows another session under the id (another created_at).
   */
  owed?: { message: string; key: string; ifMatch: string | null };
  /**
   * The write controls show what the scope probe answered for this token: false until a load finds the
   * session, and again after a 404 (which hides them) or a new sign-in (another token, maybe scope).
   */
  probed?: boolean;
  /** Scope probes asked for: a 404 or a sign-in since a probe was sent drops its answer (`probeWrites`). */
  probes: number;
}

// ------------------------------------------------------------------------------------------------
// Start

/** Runs the view the server rendered (the body's data-view); the served script calls this last. */
export function sessionBrowser(): void {
  wireSignIn();
  $('signout').addEventListener('click', () => {
    storeToken(null);
    clear($('content'));
    show($('content'), false);
    location.assign(fromRoot('/ui'));
  });
  // Back after signing out brings the page back from the browser's cache, as it was: load it again, so
  // that it asks for the token instead of showing what the signed-in page showed; and so when another
  // token was signed in meanwhile (a list kept the other namespace's newest for its live loop, and its
  // rows had gone with the sign-out: review s62a), or the same one (its content is hidden, and was
  // cleared by a sign-out: until review s64a a blank page, "page is missing #empty").
  let shownWith = storedToken();
  $('signin-form').addEventListener('signedin', () => void (shownWith = storedToken()));
  window.addEventListener('pageshow', (ev) => {
    const token = storedToken();
    if (!ev.persisted || (token === shownWith && !(token && $('content').hidden))) return;
    // Not the view's own handler too: it would render into the content the sign-out cleared.
    ev.stopImmediatePropagation();
    location.reload();
  });
  const run = document.body.getAttribute('data-view') === 'session' ? sessionView : listView;
  run().catch((err: unknown) =>
    fail(`The page failed: ${err instanceof Error ? err.message : String(err)}`),
  );
}

/** The page's URL settings: ?poll= (ms between live-update polls) and ?limit= (sessions per page). */
export function settings(): { pollMs: number; pageSize: number } {
  const params = new URLSearchParams(location.search);
  return {
    // At most an hour: setInterval takes its delay as 32 bits, so 3e9 or Infinity meant no pause (review s62a).
    pollMs: Math.min(3_600_000, Math.max(250, Number(params.get('poll')) || 2500)),
    // Whole: the API refuses a fractional limit (400 on every load and poll until review s60a).
    pageSize: Math.min(100, Math.max(1, Math.floor(Number(params.get('limit'))) || 50)),
  };
}

/** The token this tab signed in with: sessionStorage, so it ends with the tab and is never sent alone. */
export function storedToken(): string | null {
  return sessionStorage.getItem('satchel.token');
}

/** Keeps a token for this tab, or forgets it (null). */
export function storeToken(token: string | null): void {
  if (token) sessionStorage.setItem('satchel.token', token);
  else sessionStorage.removeItem('satchel.token');
}

/** A message for the next page this tab opens (after a delete, the list says what was deleted). */
export function setFlash(text: string): void {
  sessionStorage.setItem('satchel.flash', text);
}

/** The message left by the previous page, once. */
export function takeFlash(): string | null {
  const text = sessionStorage.getItem('satchel.flash');
  sessionStorage.removeItem('satchel.flash');
  return text;
}

// ------------------------------------------------------------------------------------------------
// DOM building: text only, never markup

/** The element with this id; the shell is the server's, so a missing one is a bug worth failing on. */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`page is missing #${id}`);
  return found as T;
}

/** An element with attributes and children; strings become text nodes, never markup. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, string | boolean> | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (attrs)
    for (const k in attrs) {
      const v = attrs[k]!;
      if (v === false) continue;
      if (k === 'class') node.className = String(v);
      else node.setAttribute(k, v === true ? '' : v);
    }
  append(node, children);
  return node;
}

/** Appends children; strings and numbers as text nodes; null, undefined and false are skipped. */
export function append(node: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(
      typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c,
    );
  }
}

/** Removes every child. */
export function clear(node: Node): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** Shows or hides (the hidden attribute, so it is hidden from screen readers too). */
export function show(node: HTMLElement, on: boolean): void {
  node.hidden = !on;
}

// ------------------------------------------------------------------------------------------------
// Formatting

/** A byte count as B, KB or MB (decimal, as the API's sizes are). */
export function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return '';
  if (n < 1000) return `${n} B`;
  // Below 999,950 B: above it the KB would round to "1000.0".
  if (n < 999_950) return `${(n / 1e3).toFixed(1)} KB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

/** A time as "5 min ago"; a date after 45 days. */
export function relative(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hours = Math.round(m / 60);
  if (hours < 24) return `${hours} h ago`;
  const d = Math.round(hours / 24);
  if (d < 45) return `${d} d ago`;
  return new Date(t).toISOString().slice(0, 10);
}

/** A time in the reader's locale, with the stored ISO text. */
export function exact(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  // By hand: Intl formatting (toLocaleString) cost 130-260 ms on its first use in a page in Chromium,
  // the largest part of the list's first paint (CPU profile, 50 rows).
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const zone = `UTC${off < 0 ? '-' : '+'}${p(Math.floor(Math.abs(off) / 60))}:${p(Math.abs(off) % 60)}`;
  const day = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  return `${day} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${zone} (${iso})`;
}

/** 12345 as "12,345" (by hand, for the reason in exact). */
export function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The UTF-8 size of a text, without encoding it (a Blob of a 1 MB text cost ~50 ms). */
export function utf8Bytes(text: string): number {
  const wide = text.replace(/[\x00-\x7f]+/g, ''); // ASCII is one byte: count the rest only
  let n = text.length;
  for (let i = 0; i < wide.length; i++) {
    const c = wide.charCodeAt(i);
    // 2 bytes up to U+07FF, 3 above; a surrogate pair is 4 (2 + 2 for its halves).
    n += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return n;
}

/** A relative time with the exact one on hover (and to screen readers through the datetime). */
export function timeEl(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: exact(iso) }, relative(iso));
}

/** Brings every relative time on the page up to date (run every 30 s). */
export function refreshTimes(): void {
  for (const t of Array.from(document.querySelectorAll('time[datetime]')))
    t.textContent = relative(t.getAttribute('datetime') ?? '');
}

/** "1 message", "2 messages". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * A root path (`/ui`, `/v1/sessions`) where this server has it on this host: under the prefix of its root
 * there ('' at the host's root, `/prod` for Lambda behind a named API Gateway stage), found from the way
 * up to it the page names (the body's data-root, lib/ui/page.ts).
 */
export function fromRoot(path: string): string {
  const root = new URL(document.body.getAttribute('data-root') || '/', location.href).pathname;
  return root.replace(/\/$/, '') + path;
}

/** The transcript page of a session. */
export function sessionHref(id: string): string {
  return fromRoot(`/ui/sessions/${encodeURIComponent(id)}`);
}

/** A session's API path. */
export function apiPath(id: string): string {
  return `/v1/sessions/${encodeURIComponent(id)}`;
}

// ------------------------------------------------------------------------------------------------
// Messages to the user

/** Replaces a message box's text (and marks it as an error or not). */
export function say(node: HTMLElement, text: string, error = false, ...extra: Child[]): void {
  clear(node);
  node.classList.toggle('error', error);
  if (text) append(node, [text, ...extra]);
}

/** The page's status line (a polite live region). */
export function status(text: string): void {
  say($('status'), text);
}

/** The page's error box (an alert). */
export function fail(text: string, ...extra: Child[]): void {
  say($('error'), text, true, ...extra);
}

/** What went wrong, from a problem+json answer. */
export function problemText(a: Answer): string {
  if (a.status === 0) return 'The server could not be reached.';
  const detail = a.json && typeof a.json === 'object' ? a.json.detail || a.json.title : '';
  return `The server answered ${a.status}${detail ? `: ${String(detail)}` : ''}.`;
}

// ------------------------------------------------------------------------------------------------
// The API

/** One call to the public API (`path` from its root); never throws (status 0 when the server cannot be reached). */
export async function api(method: string, path: string, opts: ApiOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  const bearer = opts.auth === undefined ? storedToken() : opts.auth;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.ifMatch) headers['if-match'] = opts.ifMatch;
  if (opts.key) headers['idempotency-key'] = opts.key;
  const body = opts.body !== undefined ? JSON.stringify(opts.body) : undefined;
  // A hung connection held a live-update poll (and so every later one) or a write busy for good (review
  // s64a): a call whose answer has not started by its deadline is aborted, and answers as unsent. The
  // upload counts (a second more per 16 KB: a slow uplink); then each silence of the answer's body is
  // bounded, not its length (a large session on a slow link loads, review s64i; a body that stalls ends
  // as unsent, review s64j).
  const ctl = new AbortController();
  const wait = opts.wait ?? (method === 'GET' ? 30_000 : 60_000) + (body?.length ?? 0) / 16;
  let timer = setTimeout(() => ctl.abort(), wait);
  let res: Response;
  let text = '';
  try {
    res = await fetch(fromRoot(path), {
      method,
      headers,
      cache: 'no-store',
      credentials: 'omit',
      signal: ctl.signal,
      ...(body !== undefined ? { body } : {}),
    });
    const reader = res.body?.getReader();
    const chunks: Uint8Array[] = [];
    for (let r; reader && !(r = await reader.read()).done;) {
      chunks.push(r.value);
      clearTimeout(timer);
      timer = setTimeout(() => ctl.abort(), Math.min(wait, 30_000));
    }
    text = await new Blob(chunks as BlobPart[]).text();
  } catch {
    return { status: 0, etag: null, text: '', json: null };
  } finally {
    clearTimeout(timer);
  }
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return {
    status: res.status,
    etag: res.headers.get('etag'),
    text,
    json,
    replayed: res.headers.get('idempotent-replayed') === 'true',
  };
}

// ------------------------------------------------------------------------------------------------
// Sign-in

/** Shows the content, and who the page speaks as. */
export function signedIn(open: boolean): void {
  show($('signin'), false);
  show($('content'), true);
  $('who').textContent = open ? 'Open mode: no token needed' : 'Signed in with a token';
  show($('signout'), !open);
}

/** Hides the content and asks for a token, with the reason when there is one; forgets the stored token. */
export function needSignIn(message?: string): void {
  storeToken(null);
  show($('content'), false);
  show($('signin'), true);
  show($('signout'), false);
  $('who').textContent = 'Not signed in';
  say($('signin-error'), message ?? '', true);
  $<HTMLInputElement>('token').focus();
}

/**
 * Resolves once the page may call the API: with the stored token, in open mode, or after sign-in. The
 * form checks a pasted token with this same call (`first`, kept in its data-check), later sign-ins too.
 */
export async function authenticate(first: string): Promise<Answer> {
  const form = $<HTMLFormElement>('signin-form');
  form.dataset.check = first;
  const stored = storedToken();
  const a = await api('GET', first, stored ? {} : { auth: null });
  if (a.status !== 401) {
    signedIn(!stored);
    return a;
  }
  needSignIn(stored ? 'The stored token was not accepted. Paste a valid one.' : undefined);
  return new Promise((resolve) => {
    form.addEventListener('signedin', (ev) => resolve((ev as CustomEvent<Answer>).detail), {
      once: true,
    });
  });
}

/**
 * The sign-in form's one submit handler, armed for the page's life, so every sign-in (after a 401 too)
 * goes through it and the form never submits itself (that would put the token in a URL or a body). A
 * token is kept only once the server answered the view's first call with it (not 401, not unsent); then
 * the form fires "signedin" with that answer.
 */
export function wireSignIn(): void {
  const form = $<HTMLFormElement>('signin-form');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const input = $<HTMLInputElement>('token');
    const candidate = input.value.trim();
    const no = (text: string) => say($('signin-error'), text, true);
    if (!candidate) return no('Paste a token first.');
    const a = await api('GET', form.dataset.check ?? '/v1/sessions', { auth: candidate });
    if (a.status === 401) return no(`That token was not accepted. ${problemText(a)}`);
    if (a.status === 0)
      return no(
        /[^\x20-\x7e]/.test(candidate)
          ? 'The token holds a character that cannot be sent (such as ’): paste it as plain text.'
          : 'The server could not be reached. Try again.',
      );
    storeToken(candidate);
    input.value = '';
    signedIn(false);
    $('main').focus(); // the form that held focus is hidden now
    form.dispatchEvent(new CustomEvent('signedin', { detail: a }));
  });
}

// ------------------------------------------------------------------------------------------------
// Shared pieces of session display

/** Taint and sandbox badges, from whichever flags the list entry or session carries. */
export function badges(s: Partial<Session>): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (s.untrusted_ingested)
    out.push(
      h(
        'span',
        { class: 'badge taint', title: 'Untrusted content was ingested into this session' },
        'untrusted',
      ),
    );
  if (s.episode_untrusted)
    out.push(
      h(
        'span',
        { class: 'badge taint', title: 'The current episode saw untrusted content' },
        'episode untrusted',
      ),
    );
  if (s.sandbox)
    out.push(h('span', { class: 'badge sandbox', title: 'Ran in a sandbox' }, 'sandbox'));
  return out;
}

/** Text with [REDACTED] spans marked. */
export function redactions(text: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  const parts = text.split('[REDACTED]');
  for (let i = 0; i < parts.length; i++) {
    if (i > 0)
      frag.appendChild(
        h('mark', { class: 'redacted', title: 'Redacted before it was stored' }, '[REDACTED]'),
      );
    if (parts[i]) frag.appendChild(document.createTextNode(parts[i]!));
  }
  return frag;
}

/**
 * The untrusted-content wrappers the pipeline writes (a per-session nonce, a source, the content) in a
 * text, in order: where each starts and ends, its source, and its content less one newline at each end.
 */
export function wrappers(
  text: string,
): { at: number; end: number; source: string; content: string }[] {
  // Linear. Until review s60a one regex took opening, body and closing tag: from every opening without a
  // closing tag its lazy body scanned to the end of the text, and many of them froze the tab. Now each
  // nonce's last closing tag is known first: an opening after it is skipped without a search.
  const lastClose = new Map<string, number>();
  const closing = /<\/untrusted_content_([0-9a-f]{16})>/g;
  for (let m = closing.exec(text); m; m = closing.exec(text)) lastClose.set(m[1]!, m.index);
  const found = [];
  const opening = /<untrusted_content_([0-9a-f]{16}) source="([^"\n]*)">/g;
  for (let m = opening.exec(text); m; m = opening.exec(text)) {
    let from = opening.lastIndex;
    if ((lastClose.get(m[1]!) ?? -1) < from) continue;
    // Searched once: the text up to the closing tag is the content, and the scan goes on after it.
    const close = `</untrusted_content_${m[1]}>`;
    const to = text.indexOf(close, from);
    if (text[from] === '\n') from++;
    const end = to > from && text[to - 1] === '\n' ? to - 1 : to;
    opening.lastIndex = to + close.length;
    found.push({
      at: m.index,
      end: to + close.length,
      source: m[2]!,
      content: text.slice(from, end),
    });
  }
  return found;
}

/** Message text: untrusted-content wrappers as labelled blocks, redactions marked, nothing interpreted. */
export function richText(text: string): HTMLElement {
  const box = h('div', { class: 'text', dir: 'auto' }); // Hebrew or Arabic text reads right to left
  // Most messages hold neither a wrapper nor a redaction: one text node, no regex run.
  if (!text.includes('<untrusted_content_')) {
    box.appendChild(text.includes('[REDACTED]') ? redactions(text) : document.createTextNode(text));
    return box;
  }
  let last = 0;
  for (const w of wrappers(text)) {
    if (w.at > last) box.appendChild(redactions(text.slice(last, w.at)));
    box.appendChild(untrustedBlock(w.source, w.content));
    last = w.end;
  }
  if (last < text.length) box.appendChild(redactions(text.slice(last)));
  return box;
}

/** An untrusted-content wrapper: a labelled, visually distinct block naming its source. */
export function untrustedBlock(source: string, content: string): HTMLElement {
  return h(
    'div',
    {
      class: 'untrusted',
      role: 'group',
      'aria-label': `Untrusted content from ${source || 'an unnamed source'}`,
    },
    h(
      'div',
      { class: 'untrusted-label' },
      'Untrusted content · source: ',
      h('code', null, source || '(none)'),
    ),
    h('div', { class: 'text', dir: 'auto' }, redactions(content)),
  );
}

/** How often a needle occurs in a text. */
export function countOf(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** Folded when over 2,000 characters or 40 lines: about a screenful. */
export function isLong(text: string): boolean {
  if (text.length > 2000) return true;
  let lines = 0;
  for (let at = text.indexOf('\n'); at >= 0 && lines <= 40; at = text.indexOf('\n', at + 1))
    lines++;
  return lines > 40;
}

/** Long text folded: its size and what it holds in the summary, the text built on first open. */
export function folded(
  label: string,
  text: string,
  cls = 'fold',
  render: (t: string) => Node = richText,
): HTMLElement {
  const notes = [`${grouped(text.length)} characters`];
  const red = countOf(text, '[REDACTED]');
  if (red) notes.push(plural(red, 'redaction'));
  if (text.includes('<untrusted_content_')) notes.push('holds untrusted content');
  const box = h('details', { class: cls }, h('summary', null, `${label} (${notes.join(', ')})`));
  box.addEventListener('toggle', () => {
    if (box.open && box.childNodes.length === 1) box.appendChild(render(text));
  });
  return box;
}

/** A message body: folded when long. */
export function body(text: string, label: string): Node {
  return isLong(text) ? folded(label, text) : richText(text);
}

/**
 * A message's text-bearing parts joined, its reasoning parts' text, and the kinds of its other parts
 * (images, audio: not shown).
 */
export function contentText(content: unknown): {
  text: string;
  extra: string[];
  reasoning: string;
} {
  if (typeof content === 'string') return { text: content, extra: [], reasoning: '' };
  if (Array.isArray(content)) {
    const texts: string[] = [];
    const thoughts: string[] = [];
    const extra: string[] = [];
    for (const p of content) {
      // The server's rule (textOfParts in lib/model/parts.ts): a part's text, a refusal's refusal; a
      // reasoning part's text is not the content.
      const part = (p ?? {}) as { type?: unknown; text?: unknown; refusal?: unknown };
      const value = part.type === 'refusal' ? part.refusal : part.text;
      if (typeof value !== 'string') extra.push(String(part.type ?? 'unknown'));
      else (part.type === 'reasoning' ? thoughts : texts).push(value);
    }
    return { text: texts.join('\n'), extra, reasoning: thoughts.join('\n') };
  }
  return {
    text: content === null || content === undefined ? '' : JSON.stringify(content),
    extra: [],
    reasoning: '',
  };
}

/**
 * Tool call arguments as indented JSON when that says exactly what is stored, else as stored. Parsing
 * rewrites what it cannot hold (a repeated key keeps its last value, 12345678901234567890 becomes
 * 12345678901234567000, 1e999 null, "\u0041" A, integer-like keys move first): the indented form is
 * shown only when it reads back, whitespace aside, as the stored text (until 2026-12-06 it always was).
 */
export function prettyArgs(args: string): { text: string; json: boolean } {
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    return { text: args, json: false };
  }
  // The stored text without the whitespace between tokens (strings kept whole).
  const bare = args.replace(/"(?:[^"\\]|\\[\s\S])*"|[ \t\n\r]+/g, (t) => (t[0] === '"' ? t : ''));
  try {
    return {
      text: bare === JSON.stringify(value) ? JSON.stringify(value, null, 2) : args,
      json: true,
    };
  } catch {
    // Nested deeper than JSON.stringify can write (it recurses): shown as stored (review s59h).
    return { text: args, json: true };
  }
}

// ------------------------------------------------------------------------------------------------
// The sessions list

/** The list view: sign-in, the first page, paging, search and live updates. */
export async function listView(): Promise<void> {
  document.title = 'Sessions · Satchel';
  const { pageSize, pollMs } = settings();
  const answer = await authenticate(`/v1/sessions?limit=${pageSize}`);
  status(takeFlash() ?? '');
  const st: ListState = {
    rows: $('rows'),
    pageSize,
    cursors: [null],
    pageIndex: 0,
    newest: null,
    searching: false,
    searchTurn: 0,
    polls: 0,
    pending: new Set(),
    pollFailing: false,
    polling: false,
    loads: 0,
  };
  $('prev').addEventListener('click', () => void loadPage(st, Math.max(0, st.pageIndex - 1)));
  $('next').addEventListener('click', () => void loadPage(st, st.pageIndex + 1));
  $('pending').addEventListener('click', () => void loadPage(st, 0));
  // After a 401: show again what was asked for, the search too (it was left on "Sign in to search").
  const again = (index: number, focus?: boolean) =>
    void (st.searching ? runSearch(st, st.query!, focus) : loadPage(st, index, focus));
  $('signin-form').addEventListener('signedin', () => {
    // Maybe another namespace's token: the live loop's updated_after starts again from its page 1 (it
    // kept the other namespace's newest, and missed changes stamped before it: review s62a).
    st.newest = null;
    st.listed = false;
    again(0);
  });
  renderList(st, answer);
  wireSearch(st);
  // Back to this page from the browser's cache shows the list as it was (a session deleted since still
  // in it, until review s60a; in search results until s62a): read it again, focus left where it is.
  window.addEventListener('pageshow', (ev) => {
    if (ev.persisted && !$('content').hidden) again(st.pageIndex, false);
  });
  setInterval(() => void pollChanges(st), pollMs);
  setInterval(refreshTimes, 30_000);
}

/** One row of the list: task (a link), id, badges, model, provider, turns, size, updated. */
export function sessionRow(s: Summary, fresh?: 'new' | 'updated'): HTMLTableRowElement {
  return h(
    'tr',
    {
      'data-id': s.id,
      'data-created': s.created_at,
      'data-updated': s.updated_at,
      class: fresh ? 'fresh' : '',
    },
    h(
      'td',
      { class: 'task' },
      h('a', { href: sessionHref(s.id), dir: 'auto' }, s.task || '(no task)'),
      h('span', { class: 'sid' }, s.id),
      ...badges(s),
      fresh ? h('span', { class: 'badge fresh' }, fresh) : null,
    ),
    h('td', { 'data-label': 'Model' }, s.model || '—'),
    h('td', { 'data-label': 'Provider' }, s.provider || '—'),
    h('td', { class: 'num', 'data-label': 'Turns' }, String(s.turns)),
    h('td', { class: 'num', 'data-label': 'Size' }, fmtBytes(s.bytes)),
    h('td', { 'data-label': 'Updated' }, timeEl(s.updated_at)),
  );
}

/**
 * A time's instant in epoch ms to the microsecond, by the server's rule (instantOf in lib/model/session.ts),
 * by which the API orders sessions and filters updated_after: Date.parse stops at the millisecond.
 */
export function instantOfTime(time: string): number {
  const sub = /\.\d{3}(\d{1,3})/.exec(time)?.[1];
  return Date.parse(time) + (sub ? Number(sub) / 10 ** sub.length : 0);
}

/**
 * Moves the live loop's updated_after to the newest of these sessions, to the microsecond (until
 * 2026-12-06 to the millisecond: of two sessions updated within one, the later came back on every poll).
 */
export function noteNewest(st: ListState, list: Summary[]): void {
  for (const s of list)
    if (!st.newest || instantOfTime(s.updated_at) > instantOfTime(st.newest))
      st.newest = s.updated_at;
}

/** Shows one page of the list, and the pager for it. */
export function renderList(st: ListState, a: Answer): void {
  if (a.status !== 200) return fail(`Could not list sessions. ${problemText(a)}`);
  say($('error'), '');
  const list = (a.json?.sessions ?? []) as Summary[];
  const frag = document.createDocumentFragment();
  for (const s of list) frag.appendChild(sessionRow(s));
  clear(st.rows);
  st.rows.appendChild(frag);
  if (st.pageIndex === 0) {
    noteNewest(st, list);
    st.listed = true;
  }
  st.cursors[st.pageIndex + 1] = a.json?.next_cursor ?? null;
  show($('empty'), list.length === 0 && st.pageIndex === 0);
  show($('sessions-table'), list.length > 0);
  // Older onto a page whose sessions went meanwhile showed only the pager (review s62a). The note is that
  // page's: it went with it (until review s64a page 1 listed sessions under it after Newer).
  const none = 'No older sessions: they were deleted since this list was read.';
  if (list.length === 0 && st.pageIndex > 0) status(none);
  else if ($('status').textContent === none) status('');
  $<HTMLButtonElement>('prev').disabled = st.pageIndex === 0;
  $<HTMLButtonElement>('next').disabled = !st.cursors[st.pageIndex + 1];
  $('page-label').textContent = `Page ${st.pageIndex + 1}`;
  if (st.pageIndex === 0) {
    st.pending.clear();
    show($('pending'), false);
  }
}

/** Loads page `index` (0 is the newest) through the cursors seen so far; `focus` moves focus to its heading. */
export async function loadPage(st: ListState, index: number, focus = true): Promise<void> {
  const cursor = st.cursors[index];
  const turn = ++st.loads;
  const a = await api(
    'GET',
    `/v1/sessions?limit=${st.pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
  );
  // A later click (Older, then Newer) asked for another page meanwhile: this answer is not the one to show.
  if (turn !== st.loads) return;
  if (a.status === 401) return needSignIn('The token is no longer accepted.');
  // A page that did not come leaves the pager where it was.
  if (a.status !== 200) return fail(`Could not list sessions. ${problemText(a)}`);
  st.pageIndex = index;
  renderList(st, a);
  if (focus) $('sessions-h').focus();
}

/** The search box: the agent tool's ranked search, in place of the list until cleared. */
export function wireSearch(st: ListState): void {
  const input = $<HTMLInputElement>('q');
  $('clear-search').addEventListener('click', () => endSearch(st));
  $<HTMLFormElement>('search').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const query = input.value.trim();
    if (!query) return endSearch(st);
    void runSearch(st, query);
  });
}

/** Back from search results to the list's first page. */
export function endSearch(st: ListState): void {
  st.searching = false;
  st.searchTurn++; // an answer still on its way is not shown
  $<HTMLInputElement>('q').value = '';
  show($('results'), false);
  show($('list-wrap'), true);
  show($('clear-search'), false);
  void loadPage(st, 0);
}

/** Runs session_search and shows ranked results with snippets, the query's words marked; `focus` focuses them. */
export async function runSearch(st: ListState, query: string, focus = true): Promise<void> {
  const heading = $('result-h');
  const resultList = $('result-list');
  heading.textContent = 'Searching…';
  show($('results'), true);
  show($('clear-search'), true);
  show($('list-wrap'), false);
  st.searching = true;
  st.query = query;
  const turn = ++st.searchTurn;
  const a = await api('POST', '/v1/session_search', {
    body: { action: 'search', query, limit: 20 },
  });
  // A newer search (or the list again) was asked for meanwhile: its heading is on screen, not this answer.
  if (turn !== st.searchTurn) return;
  clear(resultList);
  if (a.status === 401) {
    heading.textContent = 'Sign in to search';
    return needSignIn('The token is no longer accepted.');
  }
  if (a.status !== 200 || a.json?.error) {
    heading.textContent = 'Search failed';
    return fail(a.status !== 200 ? problemText(a) : `Search: ${String(a.json.error)}`);
  }
  say($('error'), '');
  const hits = (a.json?.results ?? []) as SearchHit[];
  heading.textContent = hits.length
    ? `${hits.length < 20 ? plural(hits.length, 'result') : 'The top 20 results'} for “${query}”`
    : `No results for “${query}”`;
  const words = queryWords(query);
  for (const hit of hits) resultList.appendChild(searchHitItem(hit, words));
  if (focus) heading.focus();
}

/** One search result: the task (a link), the snippet, the score and when it was updated. */
export function searchHitItem(hit: SearchHit, words: string[]): HTMLLIElement {
  return h(
    'li',
    { 'data-id': hit.id },
    h(
      'a',
      { href: sessionHref(hit.id), class: 'task', dir: 'auto' },
      highlight(hit.task || '(no task)', words),
    ),
    h('p', { class: 'snippet', dir: 'auto' }, highlight(hit.snippet, words)),
    h(
      'span',
      { class: 'note' },
      `score ${Number(hit.score).toFixed(3)} · updated `,
      timeEl(hit.updated_at),
      ' · ',
      h('span', { class: 'sid' }, hit.id),
    ),
  );
}

/** The query's words, lower case, deduplicated, one letter words left out. */
export function queryWords(query: string): string[] {
  const words = foldForSearch(query)
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w.length > 1);
  return [...new Set(words)];
}

/** Where the probes occur in the lower-cased text; a 4-letter stem probe runs to the end of its word. */
export function matchSpans(lower: string, probes: string[]): [number, number][] {
  const spans: [number, number][] = [];
  for (const w of probes) {
    for (let at = lower.indexOf(w); at >= 0; at = lower.indexOf(w, at + w.length)) {
      let end = at + w.length;
      if (w.length === 4) while (end < lower.length && /[\p{L}\p{N}_]/u.test(lower[end]!)) end++;
      spans.push([at, end]);
    }
  }
  return spans;
}

/**
 * Text as search compares it, letter by letter: lower case and without accents, as the server folds it
 * (`Café` matches `cafe`: until review s62a such a snippet had nothing marked), each letter kept as long
 * as it is ('İ' lower-cases to two), so that positions in the folded text are positions in `text`.
 */
export function foldForSearch(text: string): string {
  return [...text]
    .map((c) => {
      for (const f of [
        c
          .normalize('NFD')
          .replace(/\p{M}+/gu, '')
          .toLowerCase(),
        c.toLowerCase(),
      ])
        if (f.length === c.length) return f;
      return c;
    })
    .join('');
}

/** Text with the query's words marked, case-insensitively (stems by their first four letters if none match). */
export function highlight(text: string, words: string[]): DocumentFragment {
  const lower = foldForSearch(text);
  let spans = matchSpans(lower, words);
  if (spans.length === 0)
    spans = matchSpans(lower, [
      ...new Set(words.filter((w) => w.length > 4).map((w) => w.slice(0, 4))),
    ]);
  spans.sort((a, b) => a[0] - b[0]);
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const [from, to] of spans) {
    if (from < last) continue;
    if (from > last) frag.appendChild(document.createTextNode(text.slice(last, from)));
    frag.appendChild(h('mark', null, text.slice(from, to)));
    last = to;
  }
  if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
  return frag;
}

/** Live updates: one turn of the sync loop, GET /v1/sessions?updated_after=<newest seen>. */
export async function pollChanges(st: ListState): Promise<void> {
  // Not while signed out: a poll without a token would only answer 401 again.
  if (st.polling || document.hidden || $('content').hidden) return;
  st.polling = true;
  const token = storedToken();
  try {
    const a = await api(
      'GET',
      st.newest
        ? `/v1/sessions?limit=100&updated_after=${encodeURIComponent(st.newest)}`
        : `/v1/sessions?limit=${st.pageSize}`,
    );
    // Only the token this poll sent is refused: one signed in meanwhile stays.
    if (a.status === 401)
      return void (storedToken() === token && needSignIn('The token is no longer accepted.'));
    if (a.status === 0 || a.status >= 500) {
      st.pollFailing = true;
      return status(
        'Live updates paused: the server is not answering. The list may be out of date.',
      );
    }
    if (a.status !== 200) return;
    if (st.pollFailing) {
      st.pollFailing = false;
      status('Live updates resumed.');
    }
    // Oldest first, so the newest ends on top.
    const changed = ((a.json?.sessions ?? []) as Summary[]).slice().reverse();
    const onTop = () => st.pageIndex === 0 && !st.searching;
    // A session deleted elsewhere never comes in updated_after: every 12th poll on page 1 (30 s by
    // default) reads the page again, which drops its row.
    const refresh = onTop() && ++st.polls % 12 === 0;
    // The first page never came (a 503 as the page loaded): this answer is page 1 as it is, not what
    // changed (until 2026-12-06 every session came in marked new).
    if (!st.listed) return void (onTop() && renderList(st, a));
    if (changed.length === 0 && !refresh) return;
    const before = st.newest;
    noteNewest(st, changed);
    // Rows pushed off page 1 must start page 2, so "Older" needs the cursor after the new last row: a
    // cursor is opaque, so ask for page 1 again (with any newer change in it, page 2 repeats a row).
    const first = onTop() ? await api('GET', `/v1/sessions?limit=${st.pageSize}`) : a;
    if (first.status === 200 && onTop()) {
      st.cursors = [null, first.json?.next_cursor ?? null];
      $<HTMLButtonElement>('next').disabled = !st.cursors[1];
      if (changed.length) showChanges(st, changed, before);
      syncFirstPage(
        st,
        (first.json?.sessions ?? []) as Summary[],
        changed.map((c) => c.id),
      );
    } else if (changed.length) {
      for (const c of changed) st.pending.add(c.id); // a session changed twice counts once
      const b = $('pending');
      b.textContent = `${plural(st.pending.size, 'session')} changed: show the newest`;
      show(b, true);
    }
  } finally {
    st.polling = false;
  }
}

/**
 * Makes the rows on screen the first page as `list` (just read) has it, in its order: a session deleted
 * elsewhere goes, one that came in with an updated_at older than the newest seen (an import, a slow
 * write: updated_after never returns it) comes in, and so does a session rewritten with such a stamp.
 * Rows whose session is as shown stay, with their marks of new or updated; it moves updated_after past
 * the sessions it shows. `announced`: the ids the poll just showed as changed, counted with its own.
 */
export function syncFirstPage(st: ListState, list: Summary[], announced: string[] = []): void {
  // By id, creation (a session deleted and created again under its id is another) and update. Until
  // review s60a only a row gone from the page was acted on: a session stamped older never showed.
  const keyOf = (r: Element) =>
    ['data-id', 'data-created', 'data-updated'].map((k) => r.getAttribute(k)).join('\n');
  const shown = Array.from(st.rows.children);
  const keys = shown.map(keyOf);
  const want = list.map((s) => [s.id, s.created_at, s.updated_at].join('\n'));
  // A session this read brings in is past the next poll's updated_after: it is announced here, once
  // (review s62a: one created between a poll's two reads came back next poll, badged "updated").
  const before = st.newest;
  noteNewest(st, list);
  if (want.length === keys.length && want.every((k, i) => k === keys[i])) return;
  const byKey = new Map(keys.map((k, i) => [k, shown[i]!]));
  const ids = new Set(list.map((s) => `${s.id}\n${s.created_at}`));
  const gone = keys.filter((k) => !ids.has(k.slice(0, k.lastIndexOf('\n')))).length;
  // Badged as showChanges would: new when created after the newest seen, updated when a row shows an
  // older version (a "new" badge kept) or when written after the newest seen (one from page 2 written
  // between the poll's reads came unmarked and was never announced until review s64a); one only moved
  // up onto the page (an import too) comes unmarked.
  const rowOf = new Map(keys.map((k, i) => [k.slice(0, k.lastIndexOf('\n')), shown[i]!]));
  const mark = (s: Summary) => {
    const old = rowOf.get(`${s.id}\n${s.created_at}`);
    if (!before || instantOfTime(s.created_at) > instantOfTime(before)) return 'new';
    if (old || instantOfTime(s.updated_at) > instantOfTime(before))
      return old?.querySelector('.badge.fresh')?.textContent === 'new' ? 'new' : 'updated';
  };
  const changed = new Set(announced);
  const frag = document.createDocumentFragment();
  list.forEach((s, i) => {
    const fresh = byKey.has(want[i]!) ? undefined : mark(s);
    if (fresh) changed.add(s.id);
    frag.appendChild(byKey.get(want[i]!) ?? sessionRow(s, fresh));
  });
  clear(st.rows);
  st.rows.appendChild(frag);
  show($('empty'), list.length === 0);
  show($('sessions-table'), list.length > 0);
  const notes = [
    changed.size && `${plural(changed.size, 'session')} changed`,
    gone && `${plural(gone, 'session')} no longer on this page`,
  ].filter(Boolean);
  status(`The list was refreshed${notes.length ? `: ${notes.join(', ')}` : ''}.`);
}

/**
 * Puts changed sessions on top of the first page, marked new or updated; the page keeps its size.
 * `before` is the newest time the page had seen before this poll.
 */
export function showChanges(st: ListState, changed: Summary[], before: string | null): void {
  say($('error'), '');
  show($('empty'), false);
  show($('sessions-table'), true);
  for (const s of changed) {
    const old = st.rows.querySelector(`tr[data-id="${CSS.escape(s.id)}"]`);
    old?.remove();
    // New: another session under a row's id (deleted and created again), or one created after the
    // newest time seen. A session created before, written to while off page 1, is updated (until
    // 2026-12-06 it came in "new").
    const fresh = old
      ? old.getAttribute('data-created') !== s.created_at
      : !before || instantOfTime(s.created_at) > instantOfTime(before);
    st.rows.insertBefore(sessionRow(s, fresh ? 'new' : 'updated'), st.rows.firstChild);
  }
  while (st.rows.children.length > st.pageSize) st.rows.lastElementChild?.remove();
  status(`${plural(changed.length, 'session')} changed just now.`);
}

// ------------------------------------------------------------------------------------------------
// One session: the transcript

/** The transcript view: sign-in, the session, its refs and audit log, and the actions. */
export async function sessionView(): Promise<void> {
  let id: string;
  try {
    id = decodeURIComponent(location.pathname.slice(fromRoot('/ui/sessions/').length));
  } catch {
    // A mangled link (`%ZZ`): no session has that address.
    $('task').textContent = 'Session not found';
    $('who').textContent = ''; // no call was made: neither "Checking access…" nor "Loading…" stays
    status('');
    return fail('This address does not name a session: its escapes are broken.');
  }
  const path = apiPath(id);
  const answer = await authenticate(path);
  const st: SessionState = {
    id,
    path,
    session: null,
    etag: null,
    raw: '',
    previewKeep: null,
    msg: $('action-msg'),
    renders: 0,
    loads: 0,
    probes: 0,
  };
  wireAppend(st);
  wireContinue(st);
  wireTrim(st);
  wireDelete(st);
  wireDownload(st);
  $('reload').addEventListener('click', () => void loadSession(st));
  // Back to this page from the browser's cache showed the session as it was, deleted since or not (until
  // review s60a): load it again, as a Reload would.
  window.addEventListener('pageshow', (ev) => {
    if (ev.persisted && !$('content').hidden) void loadSession(st);
  });
  $('signin-form').addEventListener('signedin', (ev) => {
    // Signed in again after a 401: the answer to GET of this session, with the new token.
    st.probed = false;
    st.probes++;
    void loadSession(st, (ev as CustomEvent<Answer>).detail);
  });
  await loadSession(st, answer);
  setInterval(refreshTimes, 30_000);
}

/** Loads (or shows the given answer for) the session, then its audit log. */
export async function loadSession(st: SessionState, a?: Answer): Promise<void> {
  const turn = ++st.loads;
  const got = a ?? (await api('GET', st.path));
  // A later load (an append's, a Reload) was asked for meanwhile: an older answer arriving last would put
  // the older revision and its ETag back on screen (until review s60a).
  if (turn !== st.loads) return;
  status('');
  if (got.status === 401) return needSignIn('The token is no longer accepted.');
  if (got.status === 404) forget(st);
  if (got.status !== 200) {
    $('task').textContent = got.status === 404 ? 'Session not found' : 'Could not load the session';
    return fail(problemText(got));
  }
  say($('error'), '');
  const loaded = got.json as Session;
  // Another session (deleted and created again under the id): a turn owed to the old one is not its.
  if (st.session && st.session.created_at !== loaded.created_at) st.owed = undefined;
  st.session = loaded;
  // The token's scope is asked once a load finds the session, whatever the loads before it answered
  // (until 2026-12-06 only a first load that found it, or one after a 404: a Reload after a 503 showed
  // the session with no write controls and no word why).
  if (!st.probed) {
    st.probed = true;
    void probeWrites(st);
  }
  // `latest` (or any alias) names the session shown from now on: its writes need its id, and the
  // address names it, so a reload shows the same session.
  if (st.id !== st.session.id) {
    st.id = st.session.id;
    st.path = apiPath(st.id);
    // A later sign-in shows its check's answer: that of `latest` was another session once a newer one
    // existed, and a draft typed for this one went to it (review s67g).
    $('signin-form').dataset.check = st.path;
    history.replaceState(null, '', sessionHref(st.id));
  }
  st.etag = got.etag;
  st.raw = got.text;
  renderSession(st, st.session);
  // A trim preview was of the version it was made on: preview again before trimming this one.
  st.previewKeep = null;
  $<HTMLButtonElement>('trim-btn').disabled = true;
  clear($('trim-out'));
  void loadAudit(st);
}

/**
 * A session not found (deleted elsewhere): nothing of what was shown stays, its transcript, facts,
 * refs and audit log, nor the controls that would act on it (until 2026-12-06 they stayed under "Session
 * not found", and Download JSON downloaded the deleted session).
 */
export function forget(st: SessionState): void {
  st.session = null;
  st.etag = null;
  st.raw = '';
  st.owed = undefined;
  st.previewKeep = null;
  st.probed = false;
  st.probes++; // a probe on its way would show the write controls again
  st.renders++; // the chunks of a render still under way stop, and so does an audit load
  st.loads++; // and a load asked before (a Reload) that answers after: it would show the session again
  document.title = 'Session not found · Satchel';
  for (const id of ['messages', 'facts', 'badges', 'metadata', 'refs', 'audit', 'trim-out'])
    clear($(id));
  $('transcript-h').textContent = 'Transcript';
  for (const id of ['actions', 'metadata-wrap', 'download', 'delete-confirm']) show($(id), false);
}

/** The header (task, badges, facts, metadata), the transcript and the refs. */
export function renderSession(st: SessionState, s: Session): void {
  document.title = `${s.task || s.id} · Satchel`;
  $('task').textContent = s.task || '(no task)';
  show($('download'), true);
  renderFacts(s, st.raw);
  const b = $('badges');
  clear(b);
  append(b, badges(s));
  renderMetadata(s.metadata);
  renderMessages(st, s.messages);
  renderRefs(s.external_refs ?? []);
}

/** The facts list: id, model, turns, messages, size, created, updated, revision. */
export function renderFacts(s: Session, raw: string): void {
  const facts = $('facts');
  clear(facts);
  const fact = (k: string, ...v: Child[]) => append(facts, [h('dt', null, k), h('dd', null, ...v)]);
  fact('Id', h('code', null, s.id));
  // Each isolated (a bidi control in the model must not reorder the provider after it).
  const model = [s.model, s.provider].filter(Boolean).map((v) => h('bdi', null, v));
  fact('Model', ...(model.length ? [model[0], model[1] && ' · ', model[1]] : ['—']));
  fact('Turns', String(s.turns));
  fact('Messages', String(s.messages.length));
  // The session as read (the list's size is the stored object's, which the size cap counts).
  fact('Size as read', fmtBytes(utf8Bytes(raw)));
  fact('Created', timeEl(s.created_at));
  fact('Updated', timeEl(s.updated_at));
  fact('Revision', String(s.revision));
}

/** The session's own metadata (string keys and values, all of them the caller's): hidden when empty. */
export function renderMetadata(metadata: Record<string, string> | undefined): void {
  const list = $('metadata');
  clear(list);
  const entries = Object.entries(metadata ?? {}).filter(([, v]) => typeof v === 'string');
  for (const [k, v] of entries) append(list, [h('dt', null, h('code', null, k)), h('dd', null, v)]);
  show($('metadata-wrap'), entries.length > 0);
}

/** Tool results that answer a call in this transcript, by call id; they are shown under their call. */
export function resultsByCall(messages: Message[]): ResultsByCall {
  // A result answers the nearest call before it with its id: many agents number calls per turn
  // (`call_0` on every turn), so an id alone names several calls.
  const latest = new Map<string, ToolCall>();
  const of: ResultsByCall['of'] = new Map();
  const under = new Set<number>();
  messages.forEach((m, i) => {
    for (const c of m.tool_calls ?? []) latest.set(c.id, c);
    const call = m.role === 'tool' && m.tool_call_id ? latest.get(m.tool_call_id) : undefined;
    if (!call) return;
    of.set(call, [...(of.get(call) ?? []), { m, i }]);
    under.add(i);
  });
  return { of, under };
}

/**
 * The transcript, in order. The first screenful (40 items) is built at once and painted; the rest is
 * built in tasks of about 50 ms (under the long-task threshold, so the page keeps answering input), so
 * a 1 MB session shows its start without waiting for its end. aria-busy is true until the end is in.
 */
export function renderMessages(st: SessionState, messages: Message[]): void {
  const list = $('messages');
  clear(list);
  const render = ++st.renders;
  const results = resultsByCall(messages);
  let next = 0;
  const build = (budgetMs: number, maxItems: number) => {
    const frag = document.createDocumentFragment();
    const until = performance.now() + budgetMs;
    for (let n = 0; next < messages.length && n < maxItems;) {
      const i = next++;
      const m = messages[i]!;
      if (results.under.has(i)) continue; // under its call
      frag.appendChild(messageItem(m, i, results));
      if ((++n & 15) === 0 && performance.now() > until) break;
    }
    list.appendChild(frag);
    list.setAttribute('aria-busy', String(next < messages.length));
  };
  const more = () => {
    if (render !== st.renders) return; // a newer render took over
    build(50, Infinity);
    if (next < messages.length) setTimeout(more, 0);
  };
  build(Infinity, 40);
  $('transcript-h').textContent = `Transcript (${plural(messages.length, 'message')})`;
  // After the next frame, so the first screenful is painted before the rest is built.
  if (next < messages.length) requestAnimationFrame(() => setTimeout(more, 0));
}

/** One transcript item: its head, its text, other parts, reasoning and tool calls with their results. */
export function messageItem(m: Message, i: number, results: ResultsByCall): HTMLLIElement {
  const { text, extra, reasoning } = contentText(m.content);
  if (m.role === 'system' && text.startsWith('[satchel] ')) {
    const cap = capMarker(text);
    if (cap !== null) return capMarkerItem(text, cap, i);
  }
  const role = ['system', 'user', 'assistant', 'tool'].includes(m.role) ? m.role : 'other';
  const li = h(
    'li',
    { class: `msg role-${role}`, id: `m${i + 1}` },
    h(
      'div',
      { class: 'msg-head' },
      h('span', { class: 'role' }, m.role),
      m.name ? h('span', null, m.name) : null,
      m.role === 'tool' && m.tool_call_id ? h('code', null, m.tool_call_id) : null,
      h('span', null, `#${i + 1}`),
    ),
  );
  if (text) li.appendChild(body(text, m.role === 'tool' ? 'Tool result' : 'Long message'));
  for (const kind of extra) li.appendChild(h('p', { class: 'note' }, `[${kind} part, not shown]`));
  for (const thought of [reasoning, m.reasoning_content])
    if (thought) li.appendChild(folded('Reasoning', thought, 'reasoning'));
  for (const call of m.tool_calls ?? []) li.appendChild(toolCallBlock(call, results));
  return li;
}

/**
 * What the size cap's marker says it removed (the number and "earlier " when the marker says so; markers
 * written before the cap could drop a create's newest message say "earlier"); null for any other text.
 */
export function capMarker(text: string): { groups: number; earlier: string } | null {
  const marker = new RegExp(
    '^\\[satchel\\] (\\d+) (earlier )?message groups? (?:was|were) removed ' +
      'to keep this session under its size limit\\.$',
  );
  const m = marker.exec(text);
  return m ? { groups: Number(m[1]), earlier: m[2] ?? '' } : null;
}

/** The size cap's marker, shown as what it is rather than as a system message. */
export function capMarkerItem(
  text: string,
  cap: { groups: number; earlier: string },
  i: number,
): HTMLLIElement {
  const removed = plural(cap.groups, `${cap.earlier}message group`);
  return h(
    'li',
    { class: 'msg cap-marker', id: `m${i + 1}` },
    h(
      'div',
      { class: 'msg-head' },
      h('span', { class: 'role' }, 'size cap'),
      h('span', null, `#${i + 1}`),
    ),
    h('p', { class: 'cap' }, `${removed} removed by the size cap.`),
    h('div', { class: 'text', dir: 'auto' }, text),
  );
}

/** An assistant's tool call: name, id, pretty arguments (collapsible), and the results under it. */
export function toolCallBlock(call: ToolCall, results: ResultsByCall): HTMLDetailsElement {
  const args = prettyArgs(call.function?.arguments ?? '');
  const pre = (t: string) => h('pre', { class: 'text', dir: 'auto' }, redactions(t));
  const box = h(
    'details',
    { class: 'tool-call', open: true },
    h(
      'summary',
      null,
      'Tool call ',
      // Isolated (dir): a bidi control in the name must not reorder the id or note after it.
      h('strong', { dir: 'auto' }, call.function?.name ?? '?'),
      ' ',
      h('code', { dir: 'auto' }, call.id),
      args.json ? '' : ' (arguments are not JSON)',
    ),
    isLong(args.text) ? folded('Arguments', args.text, 'fold', pre) : pre(args.text),
  );
  for (const r of results.of.get(call) ?? []) {
    const { text: t, extra } = contentText(r.m.content);
    box.appendChild(
      h(
        'div',
        { class: 'tool-result', id: `m${r.i + 1}` },
        h('div', { class: 'tool-result-head' }, `Result #${r.i + 1}`),
        isLong(t) ? folded('Tool result', t) : richText(t),
        // Parts other than text (an image a tool returned), as a message's are.
        ...extra.map((kind) => h('p', { class: 'note' }, `[${kind} part, not shown]`)),
      ),
    );
  }
  if (!results.of.has(call))
    box.appendChild(h('p', { class: 'note' }, 'No result stored for this call.'));
  return box;
}

/** External refs as a table of text: never fetched, never links. */
export function renderRefs(refs: Ref[]): void {
  const wrap = $('refs');
  clear(wrap);
  if (refs.length === 0) return append(wrap, [h('p', { class: 'note' }, 'No external refs.')]);
  const head = ['Kind', 'URI (never fetched)', 'Created by', 'Access', 'Added'];
  const tbody = h('tbody');
  for (const r of refs)
    tbody.appendChild(
      h(
        'tr',
        null,
        h('td', null, r.kind),
        h('td', null, h('code', null, r.uri)),
        h('td', null, r.created_by ?? ''),
        h('td', null, r.read_only ? 'read-only' : 'read-write'),
        h('td', null, r.created_at ? timeEl(r.created_at) : ''),
      ),
    );
  const thead = h('thead', null, h('tr', null, ...head.map((t) => h('th', { scope: 'col' }, t))));
  wrap.appendChild(h('table', { class: 'refs' }, thead, tbody));
}

/** The audit log as a timeline: device, operation, revision, redactions, dropped groups. */
export async function loadAudit(st: SessionState): Promise<void> {
  const render = st.renders;
  const a = await api('GET', `${st.path}/audit`);
  if (render !== st.renders) return; // the session was loaded again (or not found) meanwhile
  const list = $('audit');
  clear(list);
  if (a.status !== 200)
    return append(list, [h('li', null, `Audit log unavailable. ${problemText(a)}`)]);
  const records = (a.json?.records ?? []) as AuditRecord[];
  if (records.length === 0) append(list, [h('li', null, 'No audit records.')]);
  for (const r of records) list.appendChild(auditItem(r));
}

/** One audit record. */
export function auditItem(r: AuditRecord): HTMLLIElement {
  return h(
    'li',
    null,
    timeEl(r.at),
    ' ',
    h('span', { class: 'op' }, r.op),
    ` by ${r.device} → revision ${r.revision}`,
    r.messages_added ? `, +${plural(r.messages_added, 'message')}` : '',
    `, ${fmtBytes(r.bytes)}`,
    r.redactions ? h('span', { class: 'hot' }, `, ${plural(r.redactions, 'redaction')}`) : '',
    r.dropped_groups
      ? h('span', { class: 'hot' }, `, ${plural(r.dropped_groups, 'dropped group')}`)
      : '',
    r.ingest_sources?.length ? ', ingested from ' : '',
    ...(r.ingest_sources ?? []).flatMap((src, i) => [i ? ', ' : '', h('bdi', null, src)]),
    r.untrusted_ingested ? h('span', { class: 'badge taint' }, 'untrusted') : '',
  );
}

// ------------------------------------------------------------------------------------------------
// One session: the actions

/** The scope probe: a request that can never write (no If-Match); 403 means a read-only token. */
export async function probeWrites(st: SessionState): Promise<void> {
  const turn = ++st.probes;
  const probe = await api('PUT', '/v1/sessions/ui-write-probe', { body: {} });
  // Not found or signed in again meanwhile: until review s64a a late answer showed the write controls
  // under "Session not found", or a read-only token's hid them for the writable one signed in since.
  if (turn !== st.probes || !st.session) return;
  const writable = probe.status !== 403 && probe.status !== 401;
  show($('actions'), writable);
  say($('ro-note'), writable ? '' : 'Read-only token: viewing only.');
}

/** Says the session moved on since the page loaded it, with a button to reload it. */
export function stale(st: SessionState): void {
  const again = h('button', { type: 'button' }, 'Reload the session');
  again.addEventListener('click', async () => {
    say(st.msg, '');
    await loadSession(st);
    $('task').focus();
  });
  say(
    st.msg,
    'This session changed since you loaded it (another tab, device or agent wrote to it). ' +
      'Nothing was written. ',
    true,
    again,
  );
}

/** Handles the answers every write shares; true when the write succeeded. */
export function outcome(st: SessionState, a: Answer, okStatus = 200): boolean {
  if (a.status === okStatus) return true;
  if (a.status === 412) stale(st);
  else if (a.status === 403) {
    show($('actions'), false);
    say($('ro-note'), 'Read-only token: viewing only.');
    say(st.msg, 'This token is read-only: it cannot change sessions.', true);
    $('task').focus(); // the button pressed is hidden now (until review s66a focus fell to <body>)
  } else if (a.status === 401) needSignIn('The token is no longer accepted.');
  else if (a.status === 404) {
    // Deleted elsewhere: nothing of it stays on screen, as a Reload shows it (until review s60a it all did).
    forget(st);
    $('task').textContent = 'Session not found';
    say(st.msg, `Nothing was changed. ${problemText(a)}`, true);
    $('task').focus(); // the button pressed is hidden now
  } else if (a.status === 0 || a.status >= 500)
    // No answer, or the server's own failure: the write may or may not have been made.
    say(st.msg, `${problemText(a)} Reload the session to see whether the change was made.`, true);
  else say(st.msg, `Nothing was changed. ${problemText(a)}`, true);
  return false;
}

/** Disables the button while the work runs, so a double click writes once. */
export async function busyWhile(button: HTMLButtonElement, work: () => Promise<void>) {
  // Marked busy, not disabled: disabling the focused button drops keyboard focus to the page, and
  // `disabled` stays what the page's state says (a trim needs its preview first).
  if (button.getAttribute('aria-busy') === 'true') return;
  button.setAttribute('aria-busy', 'true');
  try {
    await work();
  } finally {
    button.removeAttribute('aria-busy');
  }
}

/**
 * Watches a message box while what it held (`sent`) is on its way; the answer's `done(true)` takes the sent text
 * off its front when the box kept it there all along, so what was typed on stays (review s66a: the box was
 * emptied; s66h: text typed on at its end kept the sent text; s66q: a new draft starting alike lost its start).
 */
export function sentOff(box: HTMLTextAreaElement, sent: string): (done: boolean) => void {
  let kept = true;
  const watch = () => (kept &&= box.value.startsWith(sent));
  box.addEventListener('input', watch);
  return (done) => {
    box.removeEventListener('input', watch);
    if (done && kept && box.value.startsWith(sent))
      box.value = box.value.slice(sent.length).replace(/^\s+/, '');
  };
}

/** Append a user message, with If-Match. */
export function wireAppend(st: SessionState): void {
  $<HTMLFormElement>('append-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const box = $<HTMLTextAreaElement>('append-text');
    const content = box.value;
    if (!content.trim()) return say(st.msg, 'Write a message first.', true);
    // busyWhile would drop this press without a word (review s66a); the text stays in the box.
    if ($('append-btn').getAttribute('aria-busy'))
      return say(st.msg, 'The previous Append is still on its way; this press sent nothing.', true);
    const sent = sentOff(box, content);
    void busyWhile($<HTMLButtonElement>('append-btn'), async () => {
      const a = await api('POST', `${st.path}/messages`, {
        body: { messages: [{ role: 'user', content }] },
        ifMatch: st.etag,
      });
      const ok = outcome(st, a);
      sent(ok);
      if (!ok) return;
      await loadSession(st);
      const red = a.json?.redactions ? `, ${plural(a.json.redactions, 'redaction')} made` : '';
      say(st.msg, `Appended: now at revision ${a.json?.revision}${red}${capNote(a.json, ', ')}.`);
    });
  });
}

/** Continue: store the message and run a model turn; the reply is shown as it was stored. */
export function wireContinue(st: SessionState): void {
  $<HTMLFormElement>('continue-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const box = $<HTMLTextAreaElement>('continue-text');
    const message = box.value;
    if (!message.trim()) return say(st.msg, 'Write a message first.', true);
    if ($('continue-btn').getAttribute('aria-busy'))
      return say(st.msg, 'The previous turn is still running; this press sent nothing.', true);
    say(st.msg, 'Running the turn…');
    // The same message again after a turn that did not finish: the same request, under its key.
    const again = st.owed?.message === message ? st.owed : undefined;
    // getRandomValues, not randomUUID: a plain-http page (no secure context) has no randomUUID.
    const fresh = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
      b.toString(16).padStart(2, '0'),
    ).join('');
    const key = again?.key ?? fresh;
    const ifMatch = again ? again.ifMatch : st.etag;
    const sent = sentOff(box, message);
    void busyWhile($<HTMLButtonElement>('continue-btn'), async () => {
      // The longest model turn a server allows (300 s), its wait for the session (60 s), 30 s to store.
      const a = await api('POST', `${st.path}/continue`, {
        body: { message },
        ifMatch,
        key,
        wait: 390_000,
      });
      const failed = a.status !== 200 && (await continueFailed(st, a, { message, key, ifMatch }));
      const ok = !failed && outcome(st, a);
      sent(ok);
      if (!ok) return;
      st.owed = undefined;
      await loadSession(st);
      // Sent again under an earlier identical message's key: its stored result came back, and nothing new
      // was stored or run. A retry of a lost answer, most often; a new identical message must be sent again
      // (review s67g: the page said the model replied; review s67k: keeping the text for a second press
      // stored a plain retry twice).
      if (a.replayed)
        return say(
          st.msg,
          'Your earlier Continue of this text, whose answer had been lost, was stored then with its reply, ' +
            'shown below; nothing new was stored now. To send it again as a new message, write it again.',
        );
      say(
        st.msg,
        a.json?.model_turn
          ? `The model replied; its reply is shown below as it was stored${capNote(a.json, ' (', ')')}.`
          : `Your message was stored${capNote(a.json, ' (', ')')}. No model is configured on this ` +
              'server, so there is no reply.',
      );
      const last = $('messages').lastElementChild as HTMLElement | null;
      last?.scrollIntoView({ block: 'nearest' });
    });
  });
}

/**
 * What the size cap dropped for a write (its receipt's dropped_groups), as "<before>the size cap removed 2
 * older message groups<after>"; '' when it dropped nothing.
 */
export function capNote(
  receipt: { dropped_groups?: unknown } | null,
  before = '',
  after = '',
): string {
  const n = Number(receipt?.dropped_groups ?? 0);
  return n > 0 ? `${before}the size cap removed ${plural(n, 'older message group')}${after}` : '';
}

/**
 * A continue that did not succeed: true when this answer is handled here. Only the server's own words
 * "your message was stored (" say the message is in the session and its turn is owed (502, 503, a 409
 * lease, a 413 reply); the word "stored" alone is in "cannot be stored" and "the reply was not stored"
 * too (until 2026-12-06 those offered "Press Continue again" for a message that was not stored).
 */
export async function continueFailed(
  st: SessionState,
  a: Answer,
  sent: SessionState['owed'],
): Promise<boolean> {
  if (String(a.json?.detail ?? '').includes('your message was stored (')) {
    st.owed = sent; // sent again with the same key and If-Match: not stored twice, and the turn runs
    await loadSession(st);
    say(
      st.msg,
      `Your message was stored; the model turn did not finish. ${problemText(a)} ` +
        'Press Continue again to run the turn: the message is sent with the same key, so it is ' +
        'not stored twice.',
      true,
    );
    return true;
  }
  // No answer, or the server's own failure: the message may be stored; the same request again cannot
  // store it twice. Refused before it ran (sign-in, scope, rate): whatever was owed still is. Else
  // (412, 404, 409, 413, 400) what was owed is not any more: another session, or the message is gone.
  if (a.status === 0 || a.status >= 500) st.owed = sent;
  else if (![401, 403, 429].includes(a.status)) st.owed = undefined;
  if (a.status !== 409) return false;
  // The reply was not stored (the message was removed while the model ran): show the session as it is.
  await loadSession(st);
  say(st.msg, problemText(a), true);
  return true;
}

/** Trim: a preview of what would be dropped first, then the trim of exactly that keep count. */
export function wireTrim(st: SessionState): void {
  $<HTMLInputElement>('trim-keep').addEventListener('input', () => {
    st.previewKeep = null;
    $<HTMLButtonElement>('trim-btn').disabled = true;
    clear($('trim-out'));
  });
  $('trim-preview').addEventListener('click', () => trimPreview(st));
  $<HTMLFormElement>('trim-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (st.previewKeep === null) return say(st.msg, 'Preview the trim first.', true);
    const keep = st.previewKeep;
    void busyWhile($<HTMLButtonElement>('trim-btn'), async () => {
      const a = await api('POST', `${st.path}/trim`, { body: { keep }, ifMatch: st.etag });
      if (!outcome(st, a)) return;
      st.previewKeep = null;
      clear($('trim-out'));
      const button = $<HTMLButtonElement>('trim-btn');
      const focused = document.activeElement === button;
      await loadSession(st);
      // Loading disables Trim (a new preview is needed): focus would fall to the page from under it.
      if (focused) $('trim-keep').focus();
      say(st.msg, trimmed(a.json));
    });
  });
}

/**
 * What a trim did, from its answer {before, after, dropped, dropped_groups}. When the size cap dropped
 * groups too, the count of messages differs by more than the trim's cut and a marker message came in, so
 * before and after are said as they are (until 2026-12-06 it said "7 messages dropped" when 8 went).
 */
export function trimmed(
  r: { before?: number; after?: number; dropped_groups?: number } | null,
): string {
  const before = Number(r?.before ?? 0);
  const after = Number(r?.after ?? 0);
  const cap = capNote(r);
  if (!cap) return `Trimmed: ${plural(before - after, 'message')} dropped, ${after} kept.`;
  return (
    `Trimmed: the session went from ${plural(before, 'message')} to ${after}, and ${cap} ` +
    'the preview kept.'
  );
}

/** Shows what a trim to the typed keep count would drop, and enables Trim when it drops anything. */
export function trimPreview(st: SessionState): void {
  const keep = Number($<HTMLInputElement>('trim-keep').value);
  const out = $('trim-out');
  clear(out);
  const session = st.session;
  if (!session) return;
  if (!Number.isInteger(keep) || keep < 2) {
    const why = 'Keep at least 2 messages (the count includes the system message).';
    return append(out, [h('p', { class: 'msgbox error' }, why)]);
  }
  const kept = trimMessages(session.messages, keep);
  const keptSet = new Set(kept);
  const dropped = session.messages.filter((m) => !keptSet.has(m));
  st.previewKeep = keep;
  $<HTMLButtonElement>('trim-btn').disabled = dropped.length === 0;
  const summary = dropped.length
    ? `Trimming would drop ${plural(dropped.length, 'message')} and keep ${kept.length}:`
    : `Nothing to drop: the session has ${plural(session.messages.length, 'message')}.`;
  append(out, [h('p', { role: 'status' }, summary)]);
  if (dropped.length) out.appendChild(droppedList(dropped));
}

/** The messages a trim would drop: role and the start of the text. */
export function droppedList(dropped: Message[]): HTMLOListElement {
  const ol = h('ol', { class: 'preview-list' });
  for (const m of dropped) {
    const t = contentText(m.content).text;
    const calls = m.tool_calls?.length ? `(${plural(m.tool_calls.length, 'tool call')})` : '';
    const shown = t.length > 100 ? `${t.slice(0, 100)}…` : t || calls || '(empty)';
    ol.appendChild(h('li', null, h('strong', null, m.role), ': ', shown));
  }
  return ol;
}

/** Delete, after a confirmation, with If-Match; the list then says what was deleted. */
export function wireDelete(st: SessionState): void {
  $('delete-ask').addEventListener('click', () => {
    show($('delete-confirm'), true);
    $<HTMLButtonElement>('delete-no').focus();
  });
  $('delete-no').addEventListener('click', () => {
    show($('delete-confirm'), false);
    $('delete-ask').focus();
  });
  $('delete-yes').addEventListener('click', () => {
    void busyWhile($<HTMLButtonElement>('delete-yes'), async () => {
      const a = await api('DELETE', st.path, { ifMatch: st.etag });
      if (!outcome(st, a, 204)) return;
      setFlash(`Deleted session ${st.id}.`);
      location.assign(fromRoot('/ui'));
    });
  });
}

/** Download: the stored JSON exactly as the server sent it (an odek file), through a blob URL. */
export function wireDownload(st: SessionState): void {
  $('download').addEventListener('click', () => {
    if (!st.raw) return;
    const url = URL.createObjectURL(new Blob([st.raw], { type: 'application/json' }));
    const a = h('a', { href: url, download: `${st.id.replace(/[^A-Za-z0-9._-]/g, '_')}.json` });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
}

/** odek's trim, as the server runs it: the system message plus the newest messages, no orphaned tool results. */
export function trimMessages(messages: Message[], keep: number): Message[] {
  if (messages.length <= keep) return messages;
  const head = messages[0]?.role === 'system' ? 1 : 0;
  let start = Math.max(head, messages.length - (keep - head));
  while (start < messages.length && messages[start]!.role === 'tool') start++;
  return [...messages.slice(0, head), ...messages.slice(start)];
}
