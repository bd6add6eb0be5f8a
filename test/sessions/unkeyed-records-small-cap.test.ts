// Under the smallest cap (4096), the unkeyed write records of one-off writers (a Lambda container, a
// Worker isolate, a short-lived server: each writes once and never drops its record) were kept by count,
// 16 of them, about 140 bytes each: 2.3 KiB, more than half the object, and a session holding two tiny
// messages refused a 1.5 KB message with 413 for good (review s54c; until 2026-12-06). Under a cap below
// 1 MiB those older than 15 minutes now take at most a sixteenth of it, as keyed records take at most an
// eighth (review s52f). Younger ones stay by count: one may still answer its writer's re-read after a
// lost answer (review s54d: two other writes then hid a landed write, which answered 503).
import { expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import type { Message } from '../../lib/model/session.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { keys } from '../../lib/model/keys.js';
import { LoseCommit } from '../support/lose-commit.js';

const ns = 'alice';
const cap = 4096;
const user = (content: string): Message => ({ role: 'user', content });
const pipeline = () => defaultPipeline({ maxSessionBytes: cap });
/** A one-off process (its own store) at `now`. */
const once = (objects: MemoryStore, now = Date.now) =>
  new SessionStore(objects, { pipeline: pipeline(), now });

it("under the smallest cap, other writers' old unkeyed records leave room for a 1.5 KB message", async () => {
  const objects = new MemoryStore();
  const earlier = Date.now() - 20 * 60_000;
  let t = earlier;
  const made = once(objects, () => t++);
  await made.create(ns, {
    id: 's',
    task: 't',
    messages: [{ role: 'system', content: 'sys' }, user('u')],
  });
  // 16 one-off writers, twenty minutes ago, append one short message each.
  for (let i = 0; i < 16; i++)
    await once(objects, () => t++).append(ns, 's', { messages: [user(`a${i}`)] }, undefined);
  const r = await once(objects).append(ns, 's', { messages: [user('b'.repeat(1500))] }, undefined);
  expect(r.receipt.revision).toBe(18);
  const stored = JSON.parse(
    new TextDecoder().decode((await objects.get(keys.session(ns, 's')))!.body),
  );
  // A sixteenth of the cap, besides this write's own record (which got its receipt after the measure).
  expect(JSON.stringify(stored.satchel.writes).length).toBeLessThanOrEqual(cap / 8);
  // The records pruned by bytes are marked (`wp`): a lost answer's check never takes one for a write
  // that did not land.
  expect(stored.satchel.wp?.[0]).toBeGreaterThan(1);
  expect(r.receipt.bytes).toBeLessThanOrEqual(cap);
});

it('at the 4 KiB cap, a landed write whose answer was lost answers its receipt after two other writes', async () => {
  const objects = new MemoryStore();
  const other = once(objects);
  const losing = new LoseCommit(objects);
  const lossy = new SessionStore(losing, { pipeline: pipeline() });
  await other.create(ns, { task: 't', id: 's' });
  await lossy.get(ns, 's');
  // Between the lost answer and the re-read: two unkeyed appends of one-off processes.
  losing.then = async () => {
    for (let i = 0; i < 2; i++)
      await once(objects).append(ns, 's', { messages: [user(`o${i}`)] }, undefined);
  };
  const answer = await lossy.append(ns, 's', { messages: [user('once')] }, undefined);
  expect(answer.receipt.revision).toBe(2);
  const stored = (await other.get(ns, 's')).messages.map((m) => m.content);
  expect(stored.filter((c) => c === 'once')).toEqual(['once']); // it landed, once
});
