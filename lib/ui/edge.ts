import { renderPage, type PageAssets } from './page.js';
import { shellRoutes, type UiOptions } from './shell.js';

/**
 * The session browser in the Worker bundles (scripts/build.ts resolves lib/ui/index.ts to this module
 * there): the script, stylesheet and icon are Workers static assets (`dist/assets/ui/`, written by the
 * build; `[assets]` in wrangler.toml), served before the Worker runs, so the page script (lib/ui/client.ts,
 * about a tenth of the bundle) is not in the Worker's code. The Worker renders the pages, naming the
 * assets' versions, which the build bakes in (`SATCHEL_UI_ASSETS`).
 */
declare const SATCHEL_UI_ASSETS: PageAssets;

let pages: Record<'list' | 'session', string> | undefined;

export function uiRoutes(options: UiOptions = {}) {
  return shellRoutes(
    options,
    (view) =>
      (pages ??= {
        list: renderPage('list', SATCHEL_UI_ASSETS),
        session: renderPage('session', SATCHEL_UI_ASSETS),
      })[view],
  );
}
