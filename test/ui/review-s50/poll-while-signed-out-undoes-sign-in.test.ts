import type { Browser, HTTPRequest } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  launchBrowser,
  oneSession,
  openPage,
  signIn,
  sleep,
  startSatchelServer,
  type RunningServer,
} from './common.js';

// The list's live-update loop keeps running while the page shows the sign-in form (after the token was
// rotated away), sending GET /v1/sessions?updated_after=… with no token every poll; each 401 runs
// needSignIn again. What a user saw (until 2026-12-05):
// 1. They paste a wrong token; the form says why ("That token was not accepted. The server answered
//    401: …"). A moment later (the next poll) that reason is replaced by "The token is no longer
//    accepted.", which is not what happened.
// 2. On a slow connection, a poll sent while they were signed out is still in flight when they sign in
//    with a good token: its 401 arrives after the sign-in and signs them out again. The good token is
//    forgotten and the form comes back, as if the new token had been refused.
// Expected: no live-update polls (or none acted on) while signed out; a 401 only signs out the token it
// was sent with. At fault: lib/ui/client.ts pollChanges (`if (a.status === 401) return needSignIn(…)`,
// no check that the page is signed in, nor that the answer was for the token stored now) and listView's
// setInterval, which never pauses.
const OLD = 'tok_s50c_poll_old_0123456789';
const NEW = 'tok_s50c_poll_new_0123456789';
let browser: Browser;
let srv: RunningServer;
beforeAll(async () => {
  browser = await launchBrowser();
  srv = await startSatchelServer({ env: { SATCHEL_TOKENS: `p/laptop=${OLD},p/phone=${NEW}` } });
  await oneSession(srv.url, OLD);
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

/** Opens the list signed in, then makes the stored token stop working, as a rotation does: the next poll is 401. */
async function signedOutByRotation() {
  const watched = await openPage(browser);
  const { page } = watched;
  await page.goto(`${srv.url}/ui?poll=300`);
  await signIn(page, OLD);
  await page.waitForSelector('#rows tr', { visible: true });
  await page.evaluate(() => sessionStorage.setItem('satchel.token', 'tok_rotated_away'));
  await page.waitForSelector('#signin', { visible: true });
  return watched;
}

it('keeps the reason a pasted token was refused on the form', async () => {
  const { page } = await signedOutByRotation();
  await page.type('#token', 'tok_typo_0123456789');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() =>
    document.getElementById('signin-error')!.textContent!.includes('That token was not accepted'),
  );
  await sleep(1500); // five poll intervals
  expect(await page.$eval('#signin-error', (e) => e.textContent)).toContain(
    'That token was not accepted',
  );
  await page.close();
});

it('stays signed in with the new token when an older poll is answered 401 after the sign-in', async () => {
  const { page } = await signedOutByRotation();
  // A slow network: polls sent without a token take 1.5 s to be answered.
  await page.setRequestInterception(true);
  page.on('request', (r: HTTPRequest) => {
    const slow = r.url().includes('updated_after') && !r.headers()['authorization'];
    if (slow) setTimeout(() => void r.continue(), 1500);
    else void r.continue();
  });
  await sleep(400); // a poll is in flight
  await page.type('#token', NEW);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#signin', { hidden: true });
  await sleep(2000); // the slow poll's 401 arrives
  expect(await page.evaluate(() => sessionStorage.getItem('satchel.token'))).toBe(NEW);
  expect(await page.$eval('#signin', (e) => (e as HTMLElement).hidden)).toBe(true);
  await page.close();
});
