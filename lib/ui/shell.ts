import type { Context } from 'hono';
import { Hono } from 'hono/tiny';

/**
 * What the session browser's two builds share: its pages' routes and headers. The Node server and Lambda
 * serve the script, stylesheet and icon from lib/ui/index.ts; the Worker bundles serve them as Workers
 * static assets (lib/ui/edge.ts), so the page script is not in the Worker's code.
 */

export interface UiOptions {
  /** Redirect `GET /` to `/ui` (default true). */
  redirectRoot?: boolean;
}

/**
 * Strict: scripts and styles from this origin only, no inline script or style, no framing, no plugins;
 * Trusted Types with no policy, so a string can never reach innerHTML or a script sink in this page.
 */
export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

export const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">' +
  '<rect x="2" y="5" width="12" height="9" rx="2" fill="#1f56b3"/>' +
  '<path d="M5 5V3.5A1.5 1.5 0 0 1 6.5 2h3A1.5 1.5 0 0 1 11 3.5V5" stroke="#1f56b3" stroke-width="1.5" ' +
  'fill="none"/></svg>';

/** FNV-1a of a text, as 8 hex digits: the asset URLs' version, so they can be cached for good. */
export function fingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

export function secure(c: Context): void {
  c.header('Content-Security-Policy', UI_CSP);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Frame-Options', 'DENY');
}

/**
 * The pages' routes (`page` renders a view's shell), and the assets' (`assets`, when this build serves
 * them). A path added here goes into the browser's pattern in lib/http/app.ts too (its other methods
 * answer 405 by it), and into the 405 test in test/http/bad-input.test.ts.
 */
export function shellRoutes(
  options: UiOptions,
  page: (view: 'list' | 'session', c: Context) => string | Promise<string>,
  assets?: (ui: Hono) => void,
): Hono {
  const ui = new Hono();
  const send = (view: 'list' | 'session') => async (c: Context) => {
    // `/ui/` and `/ui/sessions/{id}/` reach here too (the router takes a trailing slash): the page names its
    // assets relative to itself, which from there would be `/ui/ui/app.js` (review s53e). Redirected
    // relative (`../ui`), so that a path prefix (an API Gateway stage) stays.
    const { pathname, search } = new URL(c.req.url);
    if (pathname.endsWith('/')) {
      const last = pathname.slice(0, -1).split('/').pop()!;
      return c.redirect(`../${last}${search}`, 301);
    }
    secure(c);
    c.header('Cache-Control', 'no-cache');
    return c.html(await page(view, c));
  };
  if (options.redirectRoot ?? true) ui.get('/', (c) => c.redirect('/ui', 302));
  ui.get('/ui', send('list'));
  ui.get('/ui/sessions/:id', send('session'));
  assets?.(ui);
  return ui;
}
