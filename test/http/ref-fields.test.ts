import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

// An external ref's unknown field was dropped without a word: a misspelled `readonly` stored the ref as
// writable, answered 201 (review). It is a 400 now, where a ref is sent; a PUT sends back a GET's body,
// whose refs may hold fields an odek file gave them, and leaves those out.
describe('external refs: unknown fields', () => {
  const ref = { kind: 'issue', uri: 'https://example.com/1', readonly: true };

  it('create, append and continue refuse them and write nothing', async () => {
    const app = await makeApp();
    const made = await app.call('POST', '/v1/sessions', {
      body: { id: 'r', task: 't', external_refs: [ref] },
    });
    expect(made.status).toBe(400);
    expect(made.json.errors[0].path).toBe('external_refs[0]');
    expect((await app.call('GET', '/v1/sessions/r')).status).toBe(404);
    expect((await app.call('POST', '/v1/sessions', { body: { id: 'r', task: 't' } })).status).toBe(
      201,
    );
    for (const [path, body] of [
      [
        '/v1/sessions/r/messages',
        { messages: [{ role: 'user', content: 'x' }], external_refs: [ref] },
      ],
      ['/v1/sessions/r/continue', { message: 'x', external_refs: [ref] }],
    ] as const) {
      const res = await app.call('POST', path, { body });
      expect(res.status).toBe(400);
    }
    expect((await app.call('GET', '/v1/sessions/r')).json.revision).toBe(1);
  });

  it("a PUT of a GET's body whose ref holds another field leaves that field out", async () => {
    const app = await makeApp();
    await app.call('POST', '/v1/sessions', {
      body: {
        id: 'p',
        task: 't',
        external_refs: [{ kind: 'issue', uri: 'https://example.com/2' }],
      },
    });
    const got = await app.call('GET', '/v1/sessions/p');
    const refs = got.json.external_refs.map((r: object) => ({ ...r, odek_extra: 1 }));
    const put = await app.call('PUT', '/v1/sessions/p', {
      body: { ...got.json, external_refs: refs },
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status).toBe(200);
    const after = (await app.call('GET', '/v1/sessions/p')).json.external_refs;
    expect(after).toHaveLength(1);
    expect(after[0].uri).toBe('https://example.com/2');
  });
});
