import { shellRoutes, type UiOptions } from './shell.js';

/**
 * The session browser in the Worker bundles (scripts/build.ts resolves lib/ui/index.ts to this module
 * there): the script, stylesheet and icon are Workers static assets (`dist/assets/ui/`, written by the
 * build; `[assets]` in wrangler.toml), served before the Worker runs, so the page script (lib/ui/client.ts,
 * about a tenth of the bundle) is not in the Worker's code. The Worker serves the pages, which the build
 * renders with the assets' versions (`SATCHEL_UI_PAGES`, scripts/build.ts uiPages).
 */
declare const SATCHEL_UI_PAGES: Record<'list' | 'session', string>;

export function uiRoutes(options: UiOptions = {}) {
  return shellRoutes(options, (view) => SATCHEL_UI_PAGES[view]);
}
