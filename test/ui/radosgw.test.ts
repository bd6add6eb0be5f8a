import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestS3 } from '../support/s3.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, richSession, signIn, visibleText } from './browser.js';

// The session browser on the S3 adapter (the run's radosgw): sign in, list, transcript, append.
const TOKEN = 'tok_ui_s3_0123456789';
let browser: Browser;
let server: RunningServer;

beforeAll(async () => {
  browser = await launchBrowser();
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: `s3ui=${TOKEN}` },
    objects: openTestS3('ui'),
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('session browser on radosgw', () => {
  it('signs in, lists, renders a transcript and appends with If-Match', async () => {
    const api = apiClient(server.url, TOKEN);
    const id = (await api('POST', '/v1/sessions', richSession('radosgw session'))).json
      .id as string;
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    await signIn(page, TOKEN);
    expect(await visibleText(page, `#rows tr[data-id="${id}"]`)).toContain('radosgw session');
    await page.click(`#rows tr[data-id="${id}"] a`);
    await page.waitForSelector('#actions', { visible: true });
    expect(await page.$$eval('.tool-call', (d) => d.length)).toBe(2);
    expect(await visibleText(page, '.untrusted')).toContain('Deploy broke');
    await page.type('#append-text', 'appended on radosgw');
    await page.click('#append-btn');
    await page.waitForFunction(() =>
      document.querySelector('#messages')?.textContent?.includes('appended on radosgw'),
    );
    expect((await api('GET', `/v1/sessions/${id}`)).json.messages.at(-1).content).toBe(
      'appended on radosgw',
    );
    expect(errors).toEqual([]);
    await page.close();
  });
});
