import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

describe('Satchel-Secrets with half a surrogate pair', () => {
  // Such a value reached knownForms (lib/pipeline/redact.ts), whose encodeURIComponent throws URIError:
  // a 500 for bad input; redacted, it would have left the emoji's other half alone in stored text.
  it('a Satchel-Secrets value ending in half a surrogate pair is a 400 (not a 500) and leaves no lone surrogate in the session', async () => {
    const app = await makeApp();
    const id = (await app.call('POST', '/v1/sessions', { body: { task: 't' } })).json.id;
    const res = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content: 'token Zq8xW3vN5k\ud83d\ude00 ok' }] },
      headers: { 'satchel-secrets': btoa(JSON.stringify(['Zq8xW3vN5k\ud83d'])) },
    });
    // Either refused as a body with a lone surrogate would be, or stored as Unicode text.
    expect(app.logs.find('unhandled error').map((r) => JSON.stringify(r))).toEqual([]);
    if (res.status === 400) return;
    expect(res.status).toBe(200);
    const got = await app.call('GET', `/v1/sessions/${id}`);
    expect(got.text).not.toMatch(/\\ud[c-f][0-9a-f]{2}/i);
    for (const m of got.json.messages) expect((m.content as string).isWellFormed()).toBe(true);
  });
});
