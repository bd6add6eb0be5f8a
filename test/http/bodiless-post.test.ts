// A bodiless POST without a content type is taken as {} only from outside a browser: a page of another site
// can send one without a CORS preflight (found by review, 2026-12-04: in open mode it popped a message).
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
describe('a bodiless cross-site POST', () => {
  it('does not pop a message in open mode', async () => {
    const app = await makeApp({ allowOpen: true, env: { SATCHEL_TOKENS: '' } });
    const created = await app.call('POST', '/v1/sessions', {
      token: null,
      body: {
        task: 't',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
        ],
      },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    // What the browser sends for fetch(url, {method: 'POST', mode: 'no-cors'}) from https://evil.example.
    const res = await app.call('POST', `/v1/sessions/${id}/pop`, {
      token: null,
      headers: {
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'no-cors',
      },
    });
    const after = await app.call('GET', `/v1/sessions/${id}`, { token: null });
    expect(after.json.messages.length).toBe(2);
    expect(res.status).toBe(415);
  });
});
