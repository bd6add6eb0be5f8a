// A trim of a session at the size cap: the cap drops one more group to make room for the trim's own
// write record, and the trim answered `{before, after, dropped}` as if it had not (review s54c; until
// 2026-12-06). It answers what it left with the groups the cap dropped (`dropped_groups`), and a replay
// the same.
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
  // Bring it to within a few bytes of the cap with PUTs: a tiny user message (the one the trim cuts),
  // then fillers, the last one sized from the stored size (the write records settle after a few writes).
  const big = (i: number, n: number) => ({ role: 'assistant', content: `a${i} ` + 'x'.repeat(n) });
  let filler = 200;
  let size = 0;
  for (let round = 0; round < 12 && cap - size > 40; round++) {
    const cur = await call('GET', '/v1/sessions/s');
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'u' },
      ...[0, 1, 2].map((i) => big(i, 700)),
      big(3, filler),
    ];
    const put = await call('PUT', '/v1/sessions/s', {
      headers: { 'if-match': cur.headers.get('etag')! },
      body: { task: 't', messages },
    });
    expect(put.status).toBe(200);
    await app.sessions.settled(); // its records stored: the next write leaves its record out
    const stored = await app.sessions.get('alice', 's');
    size = encodeSession(stored).byteLength;
    // Over: the cap dropped a group; take some off and write the whole list again.
    filler += stored.messages.length < messages.length ? -150 : cap - 30 - size;
    if (stored.messages.length < messages.length) size = 0;
  }
  expect(cap - size).toBeLessThanOrEqual(40);
  const full = await call('GET', '/v1/sessions/s');
  const n = full.json.messages.length; // sys, u, marker and the newest that fit

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
  // The cap dropped a group beside the trim's cut (the case this test is about), and says so ...
  expect(t.json.dropped_groups).toBeGreaterThan(0);
  // ... and the answer counts what is stored (until 2026-12-06: the trim's cut alone).
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
  expect(again.json).toEqual(t.json);
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
