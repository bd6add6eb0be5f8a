import type { Context } from 'hono';
import { SatchelError } from '../model/errors.js';
import { shellRoutes, type UiOptions } from './shell.js';

/**
 * The session browser in the Worker bundles (scripts/build.ts resolves lib/ui/index.ts to this module
 * there): the script, stylesheet and icon are Workers static assets (`dist/assets/ui/`, written by the
 * build; `[assets]` in wrangler.toml), served before the Worker runs, so the page script (lib/ui/client.ts,
 * about a tenth of the bundle) is not in the Worker's code. So are the two pages, which the build renders
 * with the assets' versions into `ui/pages.json` (scripts/build.ts): the Worker reads them once per
 * isolate through the assets' binding (`ASSETS`) and serves them under its own paths and headers. Until
 * 2026-12-07 they were in its code, about 1.5 KB gzip of its 120,000 B budget.
 */
type Pages = Record<'list' | 'session', string>;
let pages: Promise<Pages> | undefined;

interface AssetsBinding {
  fetch(request: Request): Promise<Response>;
}

export function uiRoutes(options: UiOptions = {}) {
  return shellRoutes(options, async (view, c) => (await (pages ??= read(c)).catch(forget))[view]);
}

/** The pages, from the static assets; a Worker deployed without them says so (as /docs does). */
async function read(c: Context): Promise<Pages> {
  const assets = (c.env as { ASSETS?: AssetsBinding } | undefined)?.ASSETS;
  // A wrangler.toml from before 2026-12-07 serves the assets but binds none (review s62b).
  if (!assets)
    throw new SatchelError(
      'not_found',
      'no static assets binding: add [assets] with binding = "ASSETS" to wrangler.toml',
    );
  const res = await assets.fetch(new Request(new URL('/ui/pages.json', c.req.url)));
  if (!res.ok)
    throw new SatchelError(
      'not_found',
      "deployed without its static assets (wrangler.toml's [assets])",
    );
  return (await res.json()) as Pages;
}

/** A failed read is not kept: the next page view reads again. */
function forget(err: unknown): never {
  pages = undefined;
  throw err;
}
