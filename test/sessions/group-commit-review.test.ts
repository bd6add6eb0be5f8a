// Group commits (appends to one session queued in one process go out as one conditional write) keep every
// request's own answer: found by a review of split sessions on 2026-12-04, and the same on whole ones.
// - Two appends with one Idempotency-Key in one group (a client's retry queued beside its first attempt,
//   which waits behind another write) were both stored: the message twice, neither a replay.
// - The size cap judged a group as one append: an append that can never fit, with a small one queued
//   behind it, was answered 200 while the cap dropped it and the session's history to make room for the
//   small one. Each member now runs alone when the cap would drop anything from a group.
import { describe, expect, it } from 'vitest';
import { decodeStored } from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { tempLocalStore } from '../support/temp-store.js';

const user = (content: string) => ({ role: 'user' as const, content });
const kb = (t: string) => user(`${t} ${'lorem ipsum '.repeat(25)}`);
const tags = (s: { messages: { content: string }[] }) =>
  s.messages.map((m) => m.content.split(' ')[0]);

for (const split of [true, false]) {
  describe(`group commits (${split ? 'split' : 'whole'} session)`, () => {
    function open(objects: ObjectStore, cap: number) {
      const pipeline = defaultPipeline({ maxSessionBytes: cap });
      return new SessionStore(objects, {
        pipeline,
        audit: new AuditLog(objects, pipeline.redactText),
        ...(split ? { splitBytes: 4096, segmentBytes: 512 } : {}),
      });
    }
    const stored = async (objects: ObjectStore, ns: string) =>
      decodeStored((await objects.get(keys.session(ns, 's')))!.body, 's').base !== undefined;

    it('a retry with the same Idempotency-Key queued beside its first attempt is a replay, not a second message', async () => {
      const ns = 'gk';
      const objects = tempLocalStore('group-key');
      const store = open(objects, 4 << 20);
      await store.create(ns, {
        id: 's',
        task: 'keyed',
        messages: [user('h0 ' + 'x'.repeat(5000))],
      });
      await store.append(ns, 's', { messages: [user('a0')] }, undefined);
      expect(await stored(objects, ns)).toBe(split);
      // Another write of the session runs; the keyed append and its retry queue behind it, as one group.
      const running = store.append(ns, 's', { messages: [user('other')] }, undefined);
      const send = () =>
        store.append(ns, 's', { messages: [user('tool result 42')] }, undefined, {
          idempotencyKey: 'call-7',
        });
      const [, first, again] = await Promise.all([running, send(), send()]);
      const got = await open(objects, 4 << 20).get(ns, 's');
      expect(got.messages.filter((m) => m.content === 'tool result 42')).toHaveLength(1);
      expect([first.replayed, again.replayed]).toEqual([false, true]);
      expect(again.receipt).toEqual(first.receipt);
    });

    it('an append that cannot fit under the cap is refused and erases nothing, with another queued behind it', async () => {
      const ns = 'gc';
      const cap = 20 * 1024;
      const objects = tempLocalStore('group-cap');
      const store = open(objects, cap);
      await store.create(ns, { id: 's', task: 'capped', messages: [] });
      const history = Array.from({ length: 12 }, (_, i) => kb(`h${i}`));
      await store.append(ns, 's', { messages: history }, undefined);
      await store.append(ns, 's', { messages: [kb('a0')] }, undefined);
      expect(await stored(objects, ns)).toBe(split);
      const huge = () =>
        store.append(ns, 's', { messages: [user('huge ' + 'x'.repeat(cap))] }, undefined);
      await expect(huge()).rejects.toMatchObject({ kind: 'too_large' });
      const before = tags(await open(objects, cap).get(ns, 's'));
      // Three appends at once: the first runs, the other two queue and go as one group.
      const small = store.append(ns, 's', { messages: [kb('small')] }, undefined);
      const big = huge();
      const after = store.append(ns, 's', { messages: [kb('after')] }, undefined);
      const [s1, h, s2] = await Promise.allSettled([small, big, after]);
      expect([s1.status, h.status, s2.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(h.status === 'rejected' && h.reason).toMatchObject({ kind: 'too_large' });
      expect(tags(await open(objects, cap).get(ns, 's'))).toEqual([...before, 'small', 'after']);
    });
  });
}
