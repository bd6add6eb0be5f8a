// Before 2026-12-05 a reasoning part's text (the AI SDK's `{type: "reasoning", text}`) went into the
// stored string `content`, which odek reads as the assistant's reply: an odek install that continued a
// session saved through the AI SDK showed the model's thinking as what it said, a continue sent it back to
// the model as the reply, and the session browser showed it as the message's text. Now a reasoning part's
// text is not the content (it stays in the parts, redacted as every string there is); a stored form written
// before, whose content holds it, is still taken.
import { describe, expect, it } from 'vitest';
import { text } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp } from './helpers.js';
import { launchBrowser, openPage, signIn } from '../ui/browser.js';
import { startSatchelServer } from '../support/satchel-server.js';

const KEY = 'sk-proj-' + 'Qm9vZ2xlV2FudHNUb0tub3dXaGF0WW91QXJlRG9pbmdOb3c';
const parts = [
  { type: 'step-start' },
  { type: 'reasoning', text: 'The user wants the capital; recall it.', state: 'done' },
  { type: 'text', text: 'Paris is the capital of France.', state: 'done' },
];

describe('reasoning parts', () => {
  it('are kept in the parts but not in the content odek reads', async () => {
    const app = await makeApp();
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'capital',
        messages: [
          { role: 'user', content: 'What is the capital of France?' },
          { role: 'assistant', content: parts },
        ],
      },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const stored = JSON.parse(text((await app.objects.get(`ns/alice/sessions/${id}.json`))!.body));
    expect(stored.messages[1].content).toBe('Paris is the capital of France.');
    expect(stored.messages[1].content_parts).toEqual(parts);
    expect((await app.call('GET', `/v1/sessions/${id}`)).json.messages[1].content).toEqual(parts);
  });

  it('redacts a secret in a reasoning part everywhere it is stored', async () => {
    const app = await makeApp();
    const thinking = [
      { type: 'reasoning', text: `The key is ${KEY}, do not repeat it.` },
      { type: 'text', text: 'Done.' },
    ];
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: 'key', messages: [{ role: 'assistant', content: thinking }] },
    });
    expect(created.status).toBe(201);
    expect(created.json.messages[0].content[0].text).toBe(
      'The key is [REDACTED], do not repeat it.',
    );
    await app.background.drain();
    for (const key of await listAll(app.objects, ''))
      expect(text((await app.objects.get(key))!.body), key).not.toContain(KEY.slice(8));
  });

  it('takes a stored form written before, whose content holds the reasoning too', async () => {
    const app = await makeApp();
    const legacy = {
      role: 'assistant',
      content: 'The user wants the capital; recall it.\nParis is the capital of France.',
      content_parts: parts,
    };
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: 'legacy', messages: [legacy] },
    });
    expect(created.status).toBe(201);
    expect(created.json.messages[0].content).toEqual(parts);
    const id = created.json.id as string;
    const stored = JSON.parse(text((await app.objects.get(`ns/alice/sessions/${id}.json`))!.body));
    expect(stored.messages[0].content).toBe('Paris is the capital of France.');
  });

  it('show in the session browser as reasoning, folded, not as the message text', async () => {
    const token = 'tok_reasoning_parts_0123456789';
    const srv = await startSatchelServer({ env: { SATCHEL_TOKENS: `r=${token}` } });
    const browser = await launchBrowser();
    try {
      const res = await fetch(`${srv.url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'thinking',
          task: 'capital',
          messages: [{ role: 'assistant', content: parts }],
        }),
      });
      expect(res.status).toBe(201);
      const { page, errors } = await openPage(browser);
      await page.goto(`${srv.url}/ui/sessions/thinking`);
      await signIn(page, token);
      await page.waitForSelector('#m1 .reasoning');
      await page.click('#m1 .reasoning > summary');
      // The fold's text is put in when it opens: wait for it (a loaded machine renders it later).
      await page.waitForFunction(
        () => document.querySelector('#m1 .reasoning')?.textContent?.includes('recall it'),
        { timeout: 10_000 },
      );
      const shown = await page.$eval('#m1', (e) => {
        const fold = e.querySelector('.reasoning')!;
        const rest = e.cloneNode(true) as HTMLElement;
        rest.querySelector('.reasoning')!.remove();
        return { fold: fold.textContent ?? '', rest: rest.textContent ?? '' };
      });
      expect(shown.fold).toContain('Reasoning');
      expect(shown.fold).toContain('recall it');
      expect(shown.rest).toContain('Paris is the capital of France.');
      expect(shown.rest).not.toContain('recall it');
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      await srv.close();
    }
  });
});
