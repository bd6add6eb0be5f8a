// Trim and pop take Idempotency-Key (writeContext passes it through), but they carry no fingerprint and
// trim keeps nothing of what it did: a repeat of a trim answers before/after 0, and a key reused for a
// different request (an append's key on a pop or a trim) is "replayed" instead of 422, and nothing happens.
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

const msgs = (n: number) =>
  [{ role: 'system', content: 'sys' }].concat(
    Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` })),
  );

describe('keyed trim and pop', () => {
  it('a repeated keyed trim answers what the trim did, not 0/0/0', async () => {
    const app = await makeApp();
    const c = await app.call('POST', '/v1/sessions', { body: { task: 't', messages: msgs(9) } });
    expect(c.status).toBe(201);
    const id = c.json.id;
    const h = { 'idempotency-key': 'trim-1' };
    const first = await app.call('POST', `/v1/sessions/${id}/trim`, {
      body: { keep: 4 },
      headers: h,
    });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ before: 10, after: 4, dropped: 6 });
    const again = await app.call('POST', `/v1/sessions/${id}/trim`, {
      body: { keep: 4 },
      headers: h,
    });
    expect(again.status).toBe(200);
    // Either the first answer again, or (as on an unkeyed no-op) before = after = 4: never "before 0".
    expect(again.json.before).not.toBe(0);
    expect(again.json).toEqual(first.json);
    // And says it is a replay, as append and pop do (review, 2026-12-04: the header was missing).
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('an append key reused on a trim is not a silent replay (422, or the trim happens)', async () => {
    const app = await makeApp();
    const c = await app.call('POST', '/v1/sessions', { body: { task: 't', messages: msgs(9) } });
    const id = c.json.id;
    const h = { 'idempotency-key': 'shared-key' };
    const a = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content: 'hello' }] },
      headers: h,
    });
    expect(a.status).toBe(200);
    const t = await app.call('POST', `/v1/sessions/${id}/trim`, { body: { keep: 3 }, headers: h });
    const got = await app.call('GET', `/v1/sessions/${id}`);
    if (t.status === 200) {
      // It says it trimmed (or not); the stored session must agree.
      expect(got.json.messages.length).toBe(t.json.after);
      expect(t.json.after).toBe(3);
    } else expect(t.status).toBe(422);
  });

  it('an append key reused on a pop is not answered as a replay of the append', async () => {
    const app = await makeApp();
    const c = await app.call('POST', '/v1/sessions', { body: { task: 't', messages: msgs(4) } });
    const id = c.json.id;
    const h = { 'idempotency-key': 'shared-key-2' };
    const a = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content: 'hello' }] },
      headers: h,
    });
    expect(a.status).toBe(200);
    const p = await app.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 2 }, headers: h });
    // A different request under a used key: 422 (design: "A key reused for a different request body is 422").
    expect(p.status).toBe(422);
  });

  it('a pop key reused with a different count is 422, not a replay', async () => {
    const app = await makeApp();
    const c = await app.call('POST', '/v1/sessions', { body: { task: 't', messages: msgs(6) } });
    const id = c.json.id;
    const h = { 'idempotency-key': 'pop-key' };
    const p1 = await app.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 1 }, headers: h });
    expect(p1.status).toBe(200);
    const p2 = await app.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 3 }, headers: h });
    expect(p2.status).toBe(422);
  });

  it('a key used for an append is 422 on a continue of the same message, and the other way round', async () => {
    const app = await makeApp();
    const id = (await app.call('POST', '/v1/sessions', { body: { task: 't' } })).json.id;
    const append = (key: string) =>
      app.call('POST', `/v1/sessions/${id}/messages`, {
        body: { messages: [{ role: 'user', content: 'hello' }] },
        headers: { 'idempotency-key': key },
      });
    const cont = (key: string) =>
      app.call('POST', `/v1/sessions/${id}/continue`, {
        body: { message: 'hello' },
        headers: { 'idempotency-key': key },
      });
    expect((await append('k-append')).status).toBe(200);
    const c = await cont('k-append');
    expect(c.status).toBe(422);
    expect(c.headers.get('content-type')).toBe('application/problem+json');
    expect((await cont('k-continue')).status).toBe(200);
    const again = await cont('k-continue');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await append('k-continue')).status).toBe(422);
    const s = (await app.call('GET', `/v1/sessions/${id}`)).json;
    expect(s.messages.map((m: { content: string }) => m.content)).toEqual(['hello', 'hello']);
  });
});
