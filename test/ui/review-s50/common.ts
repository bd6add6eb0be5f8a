// Shared setup for the review s50c (test/ui/review-s50) browser tests: a real Satchel server on a temp
// local folder (as test/ui does) and Debian's Chromium through puppeteer-core (test/ui/browser.ts).
import { apiClient } from '../browser.js';

export { apiClient, launchBrowser, openPage, signIn, visibleText, tabTo } from '../browser.js';
export { startSatchelServer, type RunningServer } from '../../support/satchel-server.js';

/** Creates one short session ('one', a user's "hi") with `token`, so the list has a row. */
export async function oneSession(url: string, token: string): Promise<void> {
  const created = await apiClient(url, token)('POST', '/v1/sessions', {
    task: 'one',
    messages: [{ role: 'user', content: 'hi' }],
  });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How far the page reaches past the viewport's width (0 when nothing makes it scroll sideways). */
export async function sideways(
  page: import('puppeteer-core').Page,
): Promise<{ overflow: number; widest: string[] }> {
  return page.evaluate(() => {
    const w = document.documentElement.clientWidth;
    const widest = Array.from(document.querySelectorAll('body *'))
      .filter(
        (e) => (e as HTMLElement).offsetParent !== null && e.getBoundingClientRect().right > w + 1,
      )
      .map(
        (e) =>
          `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className ? '.' + String(e.className).replace(/ /g, '.') : ''} → ${Math.round(e.getBoundingClientRect().right)}px`,
      );
    return { overflow: document.documentElement.scrollWidth - w, widest };
  });
}
