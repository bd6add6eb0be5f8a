import type { Context } from 'hono';
import {
  $,
  api,
  apiPath,
  append,
  auditItem,
  authenticate,
  badges,
  body,
  busyWhile,
  capMarker,
  capMarkerItem,
  capNote,
  clear,
  continueFailed,
  contentText,
  countOf,
  droppedList,
  syncFirstPage,
  endSearch,
  exact,
  fail,
  fmtBytes,
  folded,
  foldForSearch,
  forget,
  fromRoot,
  grouped,
  h,
  highlight,
  instantOfTime,
  isLong,
  listView,
  loadAudit,
  loadPage,
  loadSession,
  matchSpans,
  messageItem,
  needSignIn,
  noteNewest,
  outcome,
  plural,
  pollChanges,
  prettyArgs,
  probeWrites,
  problemText,
  queryWords,
  redactions,
  refreshTimes,
  relative,
  renderFacts,
  renderList,
  renderMessages,
  renderMetadata,
  renderRefs,
  renderSession,
  resultsByCall,
  richText,
  runSearch,
  say,
  searchHitItem,
  sessionBrowser,
  sessionHref,
  sessionRow,
  sessionView,
  setFlash,
  settings,
  show,
  showChanges,
  signedIn,
  stale,
  status,
  storedToken,
  storeToken,
  takeFlash,
  timeEl,
  toolCallBlock,
  trimMessages,
  trimmed,
  trimPreview,
  untrustedBlock,
  utf8Bytes,
  sentOff,
  wireAppend,
  wireContinue,
  wireDelete,
  wireDownload,
  wireSearch,
  wireSignIn,
  wireTrim,
  wrappers,
} from './client.js';
import { renderPage, type PageAssets } from './page.js';
import { fingerprint, ICON, secure, shellRoutes, type UiOptions } from './shell.js';
import { STYLE } from './style.js';

export { UI_CSP, type UiOptions } from './shell.js';
/** The stylesheet (scripts/build.ts writes it as a Workers static asset). */
export { STYLE };

/**
 * The session browser: `GET /ui` (sessions list and search) and `GET /ui/sessions/{id}` (a transcript),
 * server-rendered shells plus one client script and one stylesheet, all served here, nothing from
 * elsewhere, so it works offline and inside a Worker. The page talks only to the public /v1 API.
 */

interface Asset {
  body: string;
  type: string;
  version: string;
}

let assets: { script: Asset; style: Asset; pages: Record<'list' | 'session', string> } | undefined;

/**
 * The page script: the source text of every function lib/ui/client.ts exports, side by side in one
 * function scope (so they call each other by the names they have in this build, minified or not), then
 * a call of the entry. tsx (keepNames) wraps functions in __name(); it is defined so the same text runs
 * in the browser.
 */
export function clientScript(): string {
  return pageScript(PAGE_FUNCTIONS, sessionBrowser);
}

/**
 * The script from functions and an entry. A minifier may turn a declaration into a function expression
 * (terser moved one, its calls inlined, into the list below: `function(){…}` alone is a syntax error),
 * so a function whose text declares no name is declared as a variable of the name the build gave it.
 */
export function pageScript(
  functions: readonly ((...args: never[]) => unknown)[],
  entry: () => void,
): string {
  const body = functions.map((f, i) => {
    const text = f.toString();
    return /^(async )?function\*? ?[\w$]/.test(text) ? text : `var ${f.name || `_${i}`}=${text};`;
  });
  return `"use strict";var __name=function(f){return f};(function(){\n${body.join('\n')}\n(${entry})();\n})();\n`;
}

/**
 * Every function of lib/ui/client.ts but the entry, by name: a list, not `import * as`, whose namespace
 * object (every export's name, as a string) cost the Worker bundles 633 B gzip. test/ui/routes.test.ts
 * checks that the served script holds every function client.ts exports.
 */
export const PAGE_FUNCTIONS: ((...args: never[]) => unknown)[] = [
  settings,
  storedToken,
  storeToken,
  setFlash,
  takeFlash,
  $,
  h,
  append,
  clear,
  show,
  fmtBytes,
  relative,
  exact,
  grouped,
  utf8Bytes,
  timeEl,
  refreshTimes,
  plural,
  fromRoot,
  sessionHref,
  apiPath,
  say,
  status,
  fail,
  problemText,
  api,
  signedIn,
  needSignIn,
  authenticate,
  wireSignIn,
  badges,
  redactions,
  wrappers,
  richText,
  untrustedBlock,
  countOf,
  isLong,
  folded,
  body,
  contentText,
  prettyArgs,
  listView,
  sessionRow,
  instantOfTime,
  noteNewest,
  renderList,
  loadPage,
  wireSearch,
  endSearch,
  runSearch,
  searchHitItem,
  queryWords,
  matchSpans,
  foldForSearch,
  highlight,
  pollChanges,
  syncFirstPage,
  showChanges,
  sessionView,
  loadSession,
  forget,
  renderSession,
  renderFacts,
  renderMetadata,
  resultsByCall,
  renderMessages,
  messageItem,
  capMarker,
  capMarkerItem,
  toolCallBlock,
  renderRefs,
  loadAudit,
  auditItem,
  probeWrites,
  stale,
  outcome,
  busyWhile,
  sentOff,
  wireAppend,
  wireContinue,
  capNote,
  continueFailed,
  wireTrim,
  trimmed,
  trimPreview,
  droppedList,
  wireDelete,
  wireDownload,
  trimMessages,
];

/** Built on first use, not at import: a Worker pays for it only when someone opens the browser. */
function built() {
  if (assets) return assets;
  const scriptText = clientScript();
  const script = {
    body: scriptText,
    type: 'text/javascript; charset=utf-8',
    version: fingerprint(scriptText),
  };
  const style = { body: STYLE, type: 'text/css; charset=utf-8', version: fingerprint(STYLE) };
  const urls: PageAssets = {
    script: `/ui/app.js?v=${script.version}`,
    style: `/ui/app.css?v=${style.version}`,
  };
  assets = {
    script,
    style,
    pages: { list: renderPage('list', urls), session: renderPage('session', urls) },
  };
  return assets;
}

/** Serves an asset; a request naming its current version may cache it for a year. */
function sendAsset(c: Context, asset: Asset) {
  secure(c);
  c.header('Content-Type', asset.type);
  c.header(
    'Cache-Control',
    c.req.query('v') === asset.version ? 'public, max-age=31536000, immutable' : 'no-cache',
  );
  return c.body(asset.body);
}

/**
 * The browser's routes, as a Hono app to mount at the root: `app.route('/', uiRoutes())`: the pages, and
 * the script, stylesheet and icon they name (in the Worker bundles, Workers static assets: lib/ui/edge.ts).
 */
export function uiRoutes(options: UiOptions = {}) {
  return shellRoutes(
    options,
    (view) => built().pages[view],
    (ui) => {
      ui.get('/ui/app.js', (c) => sendAsset(c, built().script));
      ui.get('/ui/app.css', (c) => sendAsset(c, built().style));
      ui.get('/ui/app.svg', (c) =>
        sendAsset(c, { body: ICON, type: 'image/svg+xml', version: 'icon' }),
      );
    },
  );
}
