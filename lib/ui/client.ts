/**
 * The session browser's client script. It runs in the browser only: lib/ui/index.ts serves this one
 * function's source text as /ui/app.js (so it is type-checked with the rest of lib/ and minified with the
 * Worker bundle), which is why everything it uses is declared inside it and it imports nothing.
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
 * - Writes carry If-Match with the ETag the page loaded. Trim and delete do not check If-Match on the
 *   server, so the page first revalidates with If-None-Match and refuses when the session moved on.
 */
export function sessionBrowser(): void {
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
  interface Answer {
    status: number;
    etag: string | null;
    text: string;
    json: any;
  }
  type Child = Node | string | number | null | undefined | false;

  const TOKEN_KEY = 'satchel.token';
  const FLASH_KEY = 'satchel.flash';
  const FOLD_CHARS = 2000;
  const FOLD_LINES = 40;
  const WRAPPER =
    /<untrusted_content_([0-9a-f]{16}) source="([^"\n]*)">\n?([\s\S]*?)\n?<\/untrusted_content_\1>/g;
  const CAP_MARKER =
    /^\[satchel\] (\d+) earlier message groups? (?:was|were) removed to keep this session under its size limit\.$/;
  const params = new URLSearchParams(location.search);
  const pollMs = Math.max(250, Number(params.get('poll')) || 2500);
  const pageSize = Math.min(100, Math.max(1, Number(params.get('limit')) || 50));

  const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
    const found = document.getElementById(id);
    if (!found) throw new Error(`page is missing #${id}`);
    return found as T;
  };

  /** An element with attributes and children; strings become text nodes, never markup. */
  function h<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    attrs?: Record<string, string | boolean> | null,
    ...children: Child[]
  ): HTMLElementTagNameMap[K] {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs ?? {})) {
      if (v === false) continue;
      if (k === 'class') node.className = String(v);
      else node.setAttribute(k, v === true ? '' : v);
    }
    append(node, children);
    return node;
  }
  function append(node: Node, children: Child[]): void {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(
        typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c,
      );
    }
  }
  function clear(node: Node): void {
    while (node.firstChild) node.removeChild(node.firstChild);
  }
  function show(node: HTMLElement, on: boolean): void {
    node.hidden = !on;
  }

  // ---- formatting ----
  function fmtBytes(n: number): string {
    if (!Number.isFinite(n)) return '';
    if (n < 1000) return `${n} B`;
    if (n < 1e6) return `${(n / 1e3).toFixed(1)} KB`;
    return `${(n / 1e6).toFixed(1)} MB`;
  }
  function relative(iso: string): string {
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
  function exact(iso: string): string {
    const t = Date.parse(iso);
    return Number.isNaN(t) ? iso : `${new Date(t).toLocaleString()} (${iso})`;
  }
  /** A relative time with the exact one on hover (and to screen readers through the datetime). */
  function timeEl(iso: string): HTMLTimeElement {
    const node = h('time', { datetime: iso, title: exact(iso) }, relative(iso));
    return node;
  }
  function refreshTimes(): void {
    for (const t of Array.from(document.querySelectorAll('time[datetime]')))
      t.textContent = relative(t.getAttribute('datetime') ?? '');
  }
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const sessionHref = (id: string) => `/ui/sessions/${encodeURIComponent(id)}`;
  const apiPath = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;

  // ---- messages to the user ----
  function say(node: HTMLElement, text: string, error = false, ...extra: Child[]): void {
    clear(node);
    node.classList.toggle('error', error);
    if (text) append(node, [text, ...extra]);
  }
  const status = (text: string) => say($('status'), text);
  const fail = (text: string, ...extra: Child[]) => say($('error'), text, true, ...extra);
  function problemText(a: Answer): string {
    if (a.status === 0) return 'The server could not be reached.';
    const detail = a.json && typeof a.json === 'object' ? a.json.detail || a.json.title : '';
    return `The server answered ${a.status}${detail ? `: ${String(detail)}` : ''}.`;
  }

  // ---- the API ----
  let token: string | null = sessionStorage.getItem(TOKEN_KEY);
  async function api(
    method: string,
    path: string,
    opts: {
      body?: unknown;
      ifMatch?: string | null;
      ifNoneMatch?: string | null;
      auth?: string | null;
    } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    const bearer = opts.auth === undefined ? token : opts.auth;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.ifMatch) headers['if-match'] = opts.ifMatch;
    if (opts.ifNoneMatch) headers['if-none-match'] = opts.ifNoneMatch;
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers,
        cache: 'no-store',
        credentials: 'omit',
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      });
    } catch {
      return { status: 0, etag: null, text: '', json: null };
    }
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, etag: res.headers.get('etag'), text, json };
  }

  // ---- sign-in ----
  function signedIn(open: boolean): void {
    show($('signin'), false);
    show($('content'), true);
    $('who').textContent = open ? 'Open mode: no token needed' : 'Signed in with a token';
    show($('signout'), !open);
  }
  function needSignIn(message?: string): void {
    show($('content'), false);
    show($('signin'), true);
    show($('signout'), false);
    $('who').textContent = 'Not signed in';
    say($('signin-error'), message ?? '', true);
    ($('token') as HTMLInputElement).focus();
  }
  /** Resolves once the page may call the API: with the stored token, in open mode, or after sign-in. */
  async function authenticate(first: string): Promise<Answer> {
    if (token) {
      const a = await api('GET', first);
      if (a.status !== 401) {
        signedIn(false);
        return a;
      }
      sessionStorage.removeItem(TOKEN_KEY);
      token = null;
      needSignIn('The stored token was not accepted. Paste a valid one.');
    } else {
      const a = await api('GET', first, { auth: null });
      if (a.status !== 401) {
        signedIn(true);
        return a;
      }
      needSignIn();
    }
    return new Promise((resolve) => {
      const form = $('signin-form') as HTMLFormElement;
      form.addEventListener('submit', async function onSubmit(ev) {
        ev.preventDefault();
        const input = $('token') as HTMLInputElement;
        const candidate = input.value.trim();
        if (!candidate) return say($('signin-error'), 'Paste a token first.', true);
        const a = await api('GET', first, { auth: candidate });
        if (a.status === 401) return say($('signin-error'), 'That token was not accepted.', true);
        token = candidate;
        sessionStorage.setItem(TOKEN_KEY, candidate);
        input.value = '';
        form.removeEventListener('submit', onSubmit);
        signedIn(false);
        resolve(a);
      });
    });
  }
  $('signout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    location.assign('/ui');
  });

  // ---- shared pieces of session display ----
  function badges(s: Partial<Session>): HTMLElement[] {
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
  function redactions(text: string): DocumentFragment {
    const frag = document.createDocumentFragment();
    const parts = text.split('[REDACTED]');
    parts.forEach((part, i) => {
      if (i > 0)
        frag.appendChild(
          h('mark', { class: 'redacted', title: 'Redacted before it was stored' }, '[REDACTED]'),
        );
      if (part) frag.appendChild(document.createTextNode(part));
    });
    return frag;
  }
  /** Message text: untrusted-content wrappers as labelled blocks, redactions marked, nothing interpreted. */
  function richText(text: string): HTMLElement {
    const box = h('div', { class: 'text' });
    let last = 0;
    WRAPPER.lastIndex = 0;
    for (let m = WRAPPER.exec(text); m; m = WRAPPER.exec(text)) {
      if (m.index > last) box.appendChild(redactions(text.slice(last, m.index)));
      const source = m[2] ?? '';
      box.appendChild(
        h(
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
          h('div', { class: 'text' }, redactions(m[3] ?? '')),
        ),
      );
      last = m.index + m[0].length;
    }
    if (last < text.length) box.appendChild(redactions(text.slice(last)));
    return box;
  }
  function countOf(text: string, needle: string): number {
    let n = 0;
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) n++;
    return n;
  }
  function isLong(text: string): boolean {
    if (text.length > FOLD_CHARS) return true;
    let lines = 0;
    for (
      let at = text.indexOf('\n');
      at >= 0 && lines <= FOLD_LINES;
      at = text.indexOf('\n', at + 1)
    )
      lines++;
    return lines > FOLD_LINES;
  }
  /** Long text folded: its size and what it holds in the summary, the text built on first open. */
  function folded(
    label: string,
    text: string,
    cls = 'fold',
    render: (t: string) => Node = richText,
  ): HTMLElement {
    const notes = [`${text.length.toLocaleString()} characters`];
    const red = countOf(text, '[REDACTED]');
    if (red) notes.push(plural(red, 'redaction'));
    if (text.includes('<untrusted_content_')) notes.push('holds untrusted content');
    const box = h('details', { class: cls }, h('summary', null, `${label} (${notes.join(', ')})`));
    box.addEventListener('toggle', () => {
      if (box.open && box.childNodes.length === 1) box.appendChild(render(text));
    });
    return box;
  }
  function body(text: string, label: string): Node {
    return isLong(text) ? folded(label, text) : richText(text);
  }
  function contentText(content: unknown): { text: string; extra: string[] } {
    if (typeof content === 'string') return { text: content, extra: [] };
    if (Array.isArray(content)) {
      const texts: string[] = [];
      const extra: string[] = [];
      for (const p of content) {
        if (p && typeof p === 'object' && (p as { type?: unknown }).type === 'text')
          texts.push(String((p as { text?: unknown }).text ?? ''));
        else extra.push(String((p as { type?: unknown })?.type ?? 'unknown'));
      }
      return { text: texts.join('\n'), extra };
    }
    return {
      text: content === null || content === undefined ? '' : JSON.stringify(content),
      extra: [],
    };
  }
  function prettyArgs(args: string): { text: string; json: boolean } {
    try {
      return { text: JSON.stringify(JSON.parse(args), null, 2), json: true };
    } catch {
      return { text: args, json: false };
    }
  }

  // ============================ the sessions list ============================
  async function listView(): Promise<void> {
    document.title = 'Sessions · Satchel';
    const first = `/v1/sessions?limit=${pageSize}`;
    const answer = await authenticate(first);
    const flash = sessionStorage.getItem(FLASH_KEY);
    sessionStorage.removeItem(FLASH_KEY);
    status(flash ?? '');
    const rows = $('rows');
    const cursors: (string | null)[] = [null]; // cursors[i] opens page i
    let pageIndex = 0;
    let newest: string | null = null; // the newest updated_at seen: the live loop's updated_after
    let searching = false;
    let pending = 0; // sessions changed while the first page was not on screen

    const row = (s: Summary, fresh?: 'new' | 'updated') => {
      const tr = h(
        'tr',
        { 'data-id': s.id, class: fresh ? 'fresh' : '' },
        h(
          'td',
          { class: 'task' },
          h('a', { href: sessionHref(s.id) }, s.task || '(no task)'),
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
      return tr;
    };
    const noteNewest = (list: Summary[]) => {
      for (const s of list)
        if (!newest || Date.parse(s.updated_at) > Date.parse(newest)) newest = s.updated_at;
    };
    const render = (a: Answer) => {
      if (a.status !== 200) return fail(`Could not list sessions. ${problemText(a)}`);
      say($('error'), '');
      const list = (a.json?.sessions ?? []) as Summary[];
      clear(rows);
      for (const s of list) rows.appendChild(row(s));
      if (pageIndex === 0) noteNewest(list);
      cursors[pageIndex + 1] = a.json?.next_cursor ?? null;
      show($('empty'), list.length === 0 && pageIndex === 0);
      show($('sessions-table'), list.length > 0);
      ($('prev') as HTMLButtonElement).disabled = pageIndex === 0;
      ($('next') as HTMLButtonElement).disabled = !cursors[pageIndex + 1];
      $('page-label').textContent = `Page ${pageIndex + 1}`;
      if (pageIndex === 0) {
        pending = 0;
        show($('pending'), false);
      }
    };
    const loadPage = async (index: number) => {
      const cursor = cursors[index];
      const a = await api(
        'GET',
        `/v1/sessions?limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      if (a.status === 401) return needSignIn('The token is no longer accepted.');
      pageIndex = index;
      render(a);
      $('sessions-h').focus();
    };
    $('prev').addEventListener('click', () => void loadPage(Math.max(0, pageIndex - 1)));
    $('next').addEventListener('click', () => void loadPage(pageIndex + 1));
    $('pending').addEventListener('click', () => void loadPage(0));
    render(answer);

    // Search: the agent tool's ranked lexical/vector search, snippets with the query's words marked.
    const form = $('search') as HTMLFormElement;
    const input = $('q') as HTMLInputElement;
    const results = $('results');
    const resultList = $('result-list');
    const endSearch = () => {
      searching = false;
      input.value = '';
      show(results, false);
      show($('list-wrap'), true);
      show($('clear-search'), false);
      void loadPage(0);
    };
    $('clear-search').addEventListener('click', endSearch);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const query = input.value.trim();
      if (!query) return endSearch();
      $('result-h').textContent = 'Searching…';
      show(results, true);
      show($('clear-search'), true);
      show($('list-wrap'), false);
      searching = true;
      const a = await api('POST', '/v1/session_search', {
        body: { action: 'search', query, limit: 20 },
      });
      clear(resultList);
      if (a.status !== 200) {
        $('result-h').textContent = 'Search failed';
        return fail(problemText(a));
      }
      if (a.json?.error) {
        $('result-h').textContent = 'Search failed';
        return fail(`Search: ${String(a.json.error)}`);
      }
      say($('error'), '');
      const hits = (a.json?.results ?? []) as {
        id: string;
        task: string;
        score: number;
        snippet: string;
        updated_at: string;
      }[];
      $('result-h').textContent = hits.length
        ? `${plural(hits.length, 'result')} for “${query}”`
        : `No results for “${query}”`;
      const words = queryWords(query);
      for (const hit of hits) {
        resultList.appendChild(
          h(
            'li',
            { 'data-id': hit.id },
            h(
              'a',
              { href: sessionHref(hit.id), class: 'task' },
              highlight(hit.task || '(no task)', words),
            ),
            h('p', { class: 'snippet' }, highlight(hit.snippet, words)),
            h(
              'span',
              { class: 'note' },
              `score ${Number(hit.score).toFixed(3)} · updated `,
              timeEl(hit.updated_at),
              ' · ',
              h('span', { class: 'sid' }, hit.id),
            ),
          ),
        );
      }
      $('result-h').focus();
    });

    // Live updates: the sync loop of GET /v1/sessions?updated_after=<newest seen>.
    let busy = false;
    const poll = async () => {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const a = await api(
          'GET',
          newest
            ? `/v1/sessions?limit=100&updated_after=${encodeURIComponent(newest)}`
            : `/v1/sessions?limit=${pageSize}`,
        );
        if (a.status !== 200) return;
        const changed = ((a.json?.sessions ?? []) as Summary[]).slice().reverse(); // oldest first, so the newest ends on top
        if (changed.length === 0) return;
        noteNewest(changed);
        if (pageIndex === 0 && !searching) {
          show($('empty'), false);
          show($('sessions-table'), true);
          for (const s of changed) {
            const old = rows.querySelector(`tr[data-id="${CSS.escape(s.id)}"]`);
            old?.remove();
            rows.insertBefore(row(s, old ? 'updated' : 'new'), rows.firstChild);
          }
          while (rows.children.length > pageSize) rows.lastElementChild?.remove();
          status(`${plural(changed.length, 'session')} changed just now.`);
        } else {
          pending += changed.length;
          const b = $('pending');
          b.textContent = `${plural(pending, 'session')} changed: show the newest`;
          show(b, true);
        }
      } finally {
        busy = false;
      }
    };
    setInterval(() => void poll(), pollMs);
    setInterval(refreshTimes, 30_000);
  }

  function queryWords(query: string): string[] {
    return [
      ...new Set(
        query
          .toLowerCase()
          .split(/[^\p{L}\p{N}_]+/u)
          .filter((w) => w.length > 1),
      ),
    ];
  }
  /** Text with the query's words marked, case-insensitively (stems by their first four letters if none match). */
  function highlight(text: string, words: string[]): DocumentFragment {
    const lower = text.toLowerCase();
    const find = (probes: string[]) => {
      const spans: [number, number][] = [];
      for (const w of probes) {
        for (let at = lower.indexOf(w); at >= 0; at = lower.indexOf(w, at + w.length)) {
          let end = at + w.length;
          if (w.length === 4)
            while (end < lower.length && /[\p{L}\p{N}_]/u.test(lower[end]!)) end++;
          spans.push([at, end]);
        }
      }
      return spans;
    };
    let spans = find(words);
    if (spans.length === 0)
      spans = find([...new Set(words.filter((w) => w.length > 4).map((w) => w.slice(0, 4)))]);
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

  // ============================ one session ============================
  async function sessionView(): Promise<void> {
    const id = decodeURIComponent(location.pathname.slice('/ui/sessions/'.length));
    const first = apiPath(id);
    const answer = await authenticate(first);
    let session: Session | null = null;
    let etag: string | null = null;
    let raw = '';

    const load = async (a?: Answer) => {
      const got = a ?? (await api('GET', first));
      status('');
      if (got.status === 401) return needSignIn('The token is no longer accepted.');
      if (got.status !== 200) {
        $('task').textContent =
          got.status === 404 ? 'Session not found' : 'Could not load the session';
        return fail(problemText(got));
      }
      session = got.json as Session;
      etag = got.etag;
      raw = got.text;
      renderSession(session);
      void loadAudit();
    };
    const renderSession = (s: Session) => {
      document.title = `${s.task || s.id} · Satchel`;
      $('task').textContent = s.task || '(no task)';
      const facts = $('facts');
      clear(facts);
      const fact = (k: string, v: Child) => append(facts, [h('dt', null, k), h('dd', null, v)]);
      fact('Id', h('code', null, s.id));
      fact('Model', [s.model, s.provider].filter(Boolean).join(' · ') || '—');
      fact('Turns', String(s.turns));
      fact('Messages', String(s.messages.length));
      fact('Size', fmtBytes(Number(raw.length ? new Blob([raw]).size : 0)));
      fact('Created', timeEl(s.created_at));
      fact('Updated', timeEl(s.updated_at));
      fact('Revision', String(s.revision));
      const b = $('badges');
      clear(b);
      append(b, badges(s));
      renderMessages(s.messages);
      renderRefs(s.external_refs ?? []);
    };
    const renderMessages = (messages: Message[]) => {
      const list = $('messages');
      clear(list);
      const results = new Map<string, { m: Message; i: number }[]>();
      const callIds = new Set<string>();
      for (const m of messages) for (const c of m.tool_calls ?? []) callIds.add(c.id);
      messages.forEach((m, i) => {
        if (m.role === 'tool' && m.tool_call_id && callIds.has(m.tool_call_id)) {
          const l = results.get(m.tool_call_id) ?? [];
          l.push({ m, i });
          results.set(m.tool_call_id, l);
        }
      });
      const frag = document.createDocumentFragment();
      messages.forEach((m, i) => {
        if (m.role === 'tool' && m.tool_call_id && callIds.has(m.tool_call_id)) return; // shown under its call
        frag.appendChild(messageItem(m, i, results));
      });
      list.appendChild(frag);
      $('transcript-h').textContent = `Transcript (${plural(messages.length, 'message')})`;
    };
    const messageItem = (
      m: Message,
      i: number,
      results: Map<string, { m: Message; i: number }[]>,
    ) => {
      const { text, extra } = contentText(m.content);
      const role = ['system', 'user', 'assistant', 'tool'].includes(m.role) ? m.role : 'other';
      if (m.role === 'system' && CAP_MARKER.test(text)) {
        const n = CAP_MARKER.exec(text)?.[1] ?? '?';
        return h(
          'li',
          { class: 'msg cap-marker', id: `m${i + 1}` },
          h(
            'div',
            { class: 'msg-head' },
            h('span', { class: 'role' }, 'size cap'),
            h('span', null, `#${i + 1}`),
          ),
          h(
            'p',
            { class: 'cap' },
            `${plural(Number(n), 'earlier message group')} removed by the size cap.`,
          ),
          h('div', { class: 'text' }, text),
        );
      }
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
      for (const kind of extra)
        li.appendChild(h('p', { class: 'note' }, `[${kind} part, not shown]`));
      if (m.reasoning_content)
        li.appendChild(folded('Reasoning', m.reasoning_content, 'reasoning'));
      for (const call of m.tool_calls ?? []) {
        const args = prettyArgs(call.function?.arguments ?? '');
        const box = h(
          'details',
          { class: 'tool-call', open: true },
          h(
            'summary',
            null,
            'Tool call ',
            h('strong', null, call.function?.name ?? '?'),
            ' ',
            h('code', null, call.id),
            args.json ? '' : ' (arguments are not JSON)',
          ),
          isLong(args.text)
            ? folded('Arguments', args.text, 'fold', (t) =>
                h('pre', { class: 'text' }, redactions(t)),
              )
            : h('pre', { class: 'text' }, redactions(args.text)),
        );
        for (const r of results.get(call.id) ?? []) {
          const t = contentText(r.m.content).text;
          box.appendChild(
            h(
              'div',
              { class: 'tool-result', id: `m${r.i + 1}` },
              h('div', { class: 'tool-result-head' }, `Result #${r.i + 1}`),
              isLong(t) ? folded('Tool result', t) : richText(t),
            ),
          );
        }
        if (!results.has(call.id))
          box.appendChild(h('p', { class: 'note' }, 'No result stored for this call.'));
        li.appendChild(box);
      }
      return li;
    };
    const renderRefs = (refs: Ref[]) => {
      const wrap = $('refs');
      clear(wrap);
      if (refs.length === 0) return append(wrap, [h('p', { class: 'note' }, 'No external refs.')]);
      const table = h(
        'table',
        { class: 'refs' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ...['Kind', 'URI (never fetched)', 'Created by', 'Access', 'Added'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
      );
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
      table.appendChild(tbody);
      wrap.appendChild(table);
    };
    const loadAudit = async () => {
      const a = await api('GET', `${first}/audit`);
      const list = $('audit');
      clear(list);
      if (a.status !== 200)
        return append(list, [h('li', null, `Audit log unavailable. ${problemText(a)}`)]);
      const records = (a.json?.records ?? []) as AuditRecord[];
      if (records.length === 0) append(list, [h('li', null, 'No audit records.')]);
      for (const r of records) {
        list.appendChild(
          h(
            'li',
            null,
            timeEl(r.at),
            ' ',
            h('span', { class: 'op' }, r.op),
            ` by ${r.device} → revision ${r.revision}`,
            r.messages_added ? `, +${plural(r.messages_added, 'message')}` : '',
            `, ${fmtBytes(r.bytes)}`,
            r.redactions
              ? h('span', { class: 'hot' }, `, ${plural(r.redactions, 'redaction')}`)
              : '',
            r.dropped_groups
              ? h('span', { class: 'hot' }, `, ${plural(r.dropped_groups, 'dropped group')}`)
              : '',
            r.ingest_sources?.length ? `, ingested from ${r.ingest_sources.join(', ')}` : '',
            r.untrusted_ingested ? h('span', { class: 'badge taint' }, 'untrusted') : '',
          ),
        );
      }
    };

    // ---- actions ----
    const msg = $('action-msg');
    const stale = () =>
      say(
        msg,
        'This session changed since you loaded it (another tab, device or agent wrote to it). Nothing was written. ',
        true,
        reloadButton(),
      );
    const reloadButton = () => {
      const b = h('button', { type: 'button' }, 'Reload the session');
      b.addEventListener('click', async () => {
        say(msg, '');
        await load();
        $('task').focus();
      });
      return b;
    };
    const readOnly = () => {
      show($('actions'), false);
      say(msg, 'This token is read-only: it cannot change sessions.', true);
    };
    /** Handles the answers every write shares; true when the write succeeded. */
    const outcome = (a: Answer, okStatus = 200): boolean => {
      if (a.status === okStatus) return true;
      if (a.status === 412) stale();
      else if (a.status === 403) readOnly();
      else if (a.status === 401) needSignIn('The token is no longer accepted.');
      else say(msg, `Nothing was changed. ${problemText(a)}`, true);
      return false;
    };
    /** Trim and delete ignore If-Match on the server: revalidate first, refuse when the session moved on. */
    const stillCurrent = async (): Promise<boolean> => {
      const a = await api('GET', first, { ifNoneMatch: etag });
      if (a.status === 304) return true;
      if (a.status === 200 && a.etag === etag) return true;
      stale();
      return false;
    };
    const busyWhile = async (button: HTMLButtonElement, work: () => Promise<void>) => {
      button.disabled = true;
      try {
        await work();
      } finally {
        button.disabled = false;
      }
    };

    ($('append-form') as HTMLFormElement).addEventListener('submit', (ev) => {
      ev.preventDefault();
      const box = $('append-text') as HTMLTextAreaElement;
      const content = box.value;
      if (!content.trim()) return say(msg, 'Write a message first.', true);
      void busyWhile($('append-btn') as HTMLButtonElement, async () => {
        const a = await api('POST', `${first}/messages`, {
          body: { messages: [{ role: 'user', content }] },
          ifMatch: etag,
        });
        if (!outcome(a)) return;
        box.value = '';
        await load();
        say(
          msg,
          `Appended: now at revision ${a.json?.revision}${a.json?.redactions ? `, ${plural(a.json.redactions, 'redaction')} made` : ''}.`,
        );
      });
    });
    ($('continue-form') as HTMLFormElement).addEventListener('submit', (ev) => {
      ev.preventDefault();
      const box = $('continue-text') as HTMLTextAreaElement;
      const message = box.value;
      if (!message.trim()) return say(msg, 'Write a message first.', true);
      say(msg, 'Running the turn…');
      void busyWhile($('continue-btn') as HTMLButtonElement, async () => {
        const a = await api('POST', `${first}/continue`, { body: { message }, ifMatch: etag });
        if (!outcome(a)) return;
        box.value = '';
        await load();
        say(
          msg,
          a.json?.model_turn
            ? 'The model replied; its reply is shown below as it was stored.'
            : 'Your message was stored. No model is configured on this server, so there is no reply.',
        );
        const last = $('messages').lastElementChild as HTMLElement | null;
        last?.scrollIntoView({ block: 'nearest' });
      });
    });

    let previewKeep: number | null = null;
    const keepInput = $('trim-keep') as HTMLInputElement;
    keepInput.addEventListener('input', () => {
      previewKeep = null;
      ($('trim-btn') as HTMLButtonElement).disabled = true;
      clear($('trim-out'));
    });
    $('trim-preview').addEventListener('click', () => {
      const keep = Number(keepInput.value);
      const out = $('trim-out');
      clear(out);
      if (!session) return;
      if (!Number.isInteger(keep) || keep < 2)
        return append(out, [
          h(
            'p',
            { class: 'msgbox error' },
            'Keep at least 2 messages (the count includes the system message).',
          ),
        ]);
      const kept = trimMessages(session.messages, keep);
      const keptSet = new Set(kept);
      const dropped = session.messages.filter((m) => !keptSet.has(m));
      previewKeep = keep;
      ($('trim-btn') as HTMLButtonElement).disabled = dropped.length === 0;
      append(out, [
        h(
          'p',
          { role: 'status' },
          dropped.length
            ? `Trimming would drop ${plural(dropped.length, 'message')} and keep ${kept.length}:`
            : `Nothing to drop: the session has ${plural(session.messages.length, 'message')}.`,
        ),
      ]);
      if (dropped.length) {
        const ol = h('ol', { class: 'preview-list' });
        for (const m of dropped) {
          const t = contentText(m.content).text;
          ol.appendChild(
            h(
              'li',
              null,
              h('strong', null, m.role),
              ': ',
              t.length > 100
                ? `${t.slice(0, 100)}…`
                : t ||
                    (m.tool_calls?.length
                      ? `(${plural(m.tool_calls.length, 'tool call')})`
                      : '(empty)'),
            ),
          );
        }
        out.appendChild(ol);
      }
    });
    ($('trim-form') as HTMLFormElement).addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (previewKeep === null) return say(msg, 'Preview the trim first.', true);
      const keep = previewKeep;
      void busyWhile($('trim-btn') as HTMLButtonElement, async () => {
        if (!(await stillCurrent())) return;
        const a = await api('POST', `${first}/trim`, { body: { keep }, ifMatch: etag });
        if (!outcome(a)) return;
        previewKeep = null;
        clear($('trim-out'));
        await load();
        say(
          msg,
          `Trimmed: ${plural(Number(a.json?.dropped ?? 0), 'message')} dropped, ${a.json?.after} kept.`,
        );
      });
    });

    $('delete-ask').addEventListener('click', () => {
      show($('delete-confirm'), true);
      ($('delete-no') as HTMLButtonElement).focus();
    });
    $('delete-no').addEventListener('click', () => {
      show($('delete-confirm'), false);
      $('delete-ask').focus();
    });
    $('delete-yes').addEventListener('click', () => {
      void busyWhile($('delete-yes') as HTMLButtonElement, async () => {
        if (!(await stillCurrent())) return;
        const a = await api('DELETE', first, { ifMatch: etag });
        if (!outcome(a, 204)) return;
        sessionStorage.setItem(FLASH_KEY, `Deleted session ${id}.`);
        location.assign('/ui');
      });
    });

    $('download').addEventListener('click', () => {
      if (!raw) return;
      const url = URL.createObjectURL(new Blob([raw], { type: 'application/json' }));
      const a = h('a', { href: url, download: `${id.replace(/[^A-Za-z0-9._-]/g, '_')}.json` });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
    $('reload').addEventListener('click', () => void load());

    await load(answer);
    // The scope probe: can never write (no If-Match); 403 means read-only.
    if (session) {
      const probe = await api('PUT', '/v1/sessions/ui-write-probe', { body: {} });
      const writable = probe.status !== 403 && probe.status !== 401;
      show($('actions'), writable);
      if (!writable) say($('ro-note'), 'Read-only token: viewing only.');
    }
    setInterval(refreshTimes, 30_000);
  }

  /** odek's trim, as the server runs it: the system message plus the newest messages, no orphaned tool results. */
  function trimMessages(messages: Message[], keep: number): Message[] {
    if (messages.length <= keep) return messages;
    const head = messages[0]?.role === 'system' ? 1 : 0;
    let start = Math.max(head, messages.length - (keep - head));
    while (start < messages.length && messages[start]!.role === 'tool') start++;
    return [...messages.slice(0, head), ...messages.slice(start)];
  }

  const view = document.body.getAttribute('data-view');
  const run = view === 'session' ? sessionView : listView;
  run().catch((err: unknown) =>
    fail(`The page failed: ${err instanceof Error ? err.message : String(err)}`),
  );
}
