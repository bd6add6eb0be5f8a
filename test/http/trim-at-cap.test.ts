// A trim of a session at the size cap: the cap drops one more group to make room for the trim's own
// write record, and the trim answered `{before, after, dropped}` as if it had not (review s54c; until
// 2026-12-06). It answers what it left, and a replay the same.
import { expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { openTestS3 } from '../support/s3.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { encodeSession } from '../../lib/model/codec.js';
import { makeApp } from './helpers.js';

async function run(objects: () => ObjectStore) {
  const cap = 6000;
  const env = { SATCHEL_MAX_SESSION_BYTES: String(cap) };
  const app = await makeApp({ env, objects: objects() });
  const { call } = app;
  expect(
    (
      await call('POST', '/v1/sessions', {
        body: {
          id: 's',
          task: 't',
          messages: [
            { role: 'system', content: 'sys' },
            { role: 'user', content: 'u' },
          ],
        },
      })
    ).status,
  ).toBe(201);
  // Fill it to the cap (the cap drops the oldest of these to fit the newest).
  for (let i = 0; i < 8; i++) {
    const r = await call('POST', '/v1/sessions/s/messages', {
      body: {
        messages: [{ role: 'assistant', content: `a${i} ` + 'x'.repeat(i === 7 ? 300 : 700) }],
      },
    });
    expect(r.status).toBe(200);
  }
  const full = await call('GET', '/v1/sessions/s');
  const n = full.json.messages.length; // sys, u, marker, a2 … a7
  expect(n).toBe(9);
  // A second server on the same store trims one message (keep n - 1: the oldest after the system prompt).
  const other = await makeApp({ env, objects: objects() });
  const t = await other.call('POST', '/v1/sessions/s/trim', {
    body: { keep: n - 1 },
    headers: { 'Idempotency-Key': 'trim-key-' + 'k'.repeat(60) },
  });
  expect(t.status).toBe(200);
  const now = await call('GET', '/v1/sessions/s');
  const stored = await (await makeApp({ env, objects: objects() })).sessions.get('alice', 's');
  expect(encodeSession(stored).byteLength).toBeLessThanOrEqual(cap);
  // It stored 7 messages (the cap dropped a2 as well: the marker now counts 3), and answered 8 and 1.
  expect({ before: t.json.before, after: t.json.after, dropped: t.json.dropped }).toEqual({
    before: n,
    after: now.json.messages.length,
    dropped: n - now.json.messages.length,
  });
  const again = await other.call('POST', '/v1/sessions/s/trim', {
    body: { keep: n - 1 },
    headers: { 'Idempotency-Key': 'trim-key-' + 'k'.repeat(60) },
  });
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.json).toMatchObject({ before: n, after: t.json.after, dropped: t.json.dropped });
  await app.sessions.settled();
  await other.sessions.settled();
}

it('local store: a keyed trim at the cap answers what it left', async () => {
  const dir = (await makeApp()).dir;
  await run(() => new LocalStore(dir));
});

it('radosgw: a keyed trim at the cap answers what it left', async () => {
  const s3 = openTestS3('trim-at-cap');
  await run(() => s3);
}, 60_000);
