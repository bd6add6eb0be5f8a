// Under the smallest cap (4096), the unkeyed write records of one-off writers (a Lambda container, a
// Worker isolate, a short-lived server: each writes once and never drops its record) were kept by count,
// 16 of them, about 140 bytes each: 2.3 KiB, more than half the object, and a session holding two tiny
// messages refused a 1.5 KB message with 413 (review s54c; until 2026-12-06). Under a cap below 1 MiB
// they now take at most a sixteenth of it, as keyed records take at most an eighth (review s52f).
import { expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from '../http/helpers.js';

it("under the smallest cap, other writers' unkeyed records leave room for a 1.5 KB message", async () => {
  const cap = 4096;
  const env = { SATCHEL_MAX_SESSION_BYTES: String(cap) };
  const app = await makeApp({ env });
  const object = async () => (await app.objects.get(keys.session('alice', 's')))!.body;
  const created = await app.call('POST', '/v1/sessions', {
    body: {
      id: 's',
      task: 't',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'u' },
      ],
    },
  });
  expect(created.status).toBe(201);
  // 16 one-off writers, each its own process on the same folder, append one short message.
  for (let i = 0; i < 16; i++) {
    const once = await makeApp({ env, objects: new LocalStore(app.dir) });
    const r = await once.call('POST', '/v1/sessions/s/messages', {
      body: { messages: [{ role: 'assistant', content: `a${i}` }] },
    });
    expect(r.status).toBe(200);
    await once.sessions.settled();
  }
  const stored = JSON.parse(new TextDecoder().decode(await object()));
  // A sixteenth of the cap before this write's own record gets its receipt (it is never dropped).
  expect(JSON.stringify(stored.satchel.writes).length).toBeLessThanOrEqual(cap / 8);
  // The records pruned by bytes are marked (`wp`): a lost answer's check never takes one for a write
  // that did not land.
  expect(stored.satchel.wp?.[0]).toBeGreaterThan(1);
  const next = await makeApp({ env, objects: new LocalStore(app.dir) });
  const r = await next.call('POST', '/v1/sessions/s/messages', {
    body: { messages: [{ role: 'assistant', content: 'b'.repeat(1500) }] },
  });
  expect(r.status, r.json?.detail).toBe(200);
  expect((await object()).byteLength).toBeLessThanOrEqual(cap);
  await next.sessions.settled();
});
