import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  type PutOptions,
} from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';

// Review s66f, findings 1 and 2: a create whose PUT landed and whose answer was lost, while other
// processes wrote to the new session before its re-read.
// 1. The create cached its own revision-1 content under the etag of the later version the re-read found:
//    its process's next append built on that copy, its If-Match passed, and the other process's
//    acknowledged message was gone (two versions answered as revision 2).
// 2. After 16 unkeyed one-off writes the create's write record was pruned: the re-read took the object
//    for another session's, and the create that landed answered 409 "already exists" (or a plain 503).
// The radosgw versions: review-s66f-lost-create.s3.test.ts.

const ns = 'lc';
const pipeline = () => defaultPipeline({ maxSessionBytes: 1 << 20 });

/**
 * Lands the next create of session `x` (not when `land` is false: the request was lost on its way),
 * runs `then`, and loses the answer the way `how` says.
 */
class LoseCreate extends PassThrough {
  then: (() => Promise<void>) | undefined;
  how: 'no answer' | '412 after a lost answer' = 'no answer';
  land = true;

  override async put(k: string, body: Uint8Array, options?: PutOptions) {
    const t = k === keys.session(ns, 'x') && options?.ifNoneMatch === '*' ? this.then : undefined;
    if (!t) return this.inner.put(k, body, options);
    this.then = undefined;
    if (this.land) await this.inner.put(k, body, options);
    await t();
    // The S3 adapter sends the PUT again after a lost answer, and meets its own object: 412.
    if (this.how !== 'no answer') throw new PreconditionFailedError(k, { afterLostAnswer: true });
    throw new StorageUnavailableError('socket hang up', undefined, { mayHaveLanded: true });
  }
}

const user = (content: string) => ({ role: 'user' as const, content });
const contents = async (objects: MemoryStore, splitBytes: number) =>
  (await new SessionStore(objects, { pipeline: pipeline(), splitBytes }).get(ns, 'x')).messages.map(
    (m) => String(m.content).split(' ')[0],
  );

describe('review s66f: a create whose answer was lost', () => {
  for (const splitBytes of [0, 4096])
    it(`keeps another process's append made before its re-read (splitBytes ${splitBytes})`, async () => {
      const inner = new MemoryStore();
      const lossy = new LoseCreate(inner);
      const big = ' ' + 'x'.repeat(splitBytes ? 3000 : 10);
      const a = new SessionStore(lossy, { pipeline: pipeline(), splitBytes });
      const b = new SessionStore(inner, { pipeline: pipeline(), splitBytes });
      let bRevision = 0;
      lossy.then = async () => {
        const r = await b.append(ns, 'x', { messages: [user('B' + big)] }, undefined);
        bRevision = r.receipt.revision;
      };
      const created = await a.create(ns, { id: 'x', task: 't', messages: [user('first' + big)] });
      expect(created.receipt.revision).toBe(1);
      expect(bRevision).toBe(2);
      const appended = await a.append(ns, 'x', { messages: [user('A')] }, undefined);
      expect(appended.receipt.revision).toBe(3); // not B's revision 2 again
      await Promise.all([a.settled(), b.settled()]);
      expect(await contents(inner, splitBytes)).toEqual(['first', 'B', 'A']);
    });

  it('writes on its own version when nothing was written on it since', async () => {
    const inner = new MemoryStore();
    const lossy = new LoseCreate(inner);
    const a = new SessionStore(lossy, { pipeline: pipeline() });
    lossy.then = async () => {};
    expect(
      (await a.create(ns, { id: 'x', task: 't', messages: [user('first')] })).receipt.revision,
    ).toBe(1);
    expect((await a.append(ns, 'x', { messages: [user('A')] }, undefined)).receipt.revision).toBe(
      2,
    );
    await a.settled();
    expect(await contents(inner, 0)).toEqual(['first', 'A']);
  });

  for (const how of ['no answer', '412 after a lost answer'] as const)
    it(`is answered 201 after 16 unkeyed one-off appends pruned its write record (${how})`, async () => {
      const inner = new MemoryStore();
      const lossy = new LoseCreate(inner);
      lossy.how = how;
      const a = new SessionStore(lossy, { pipeline: pipeline() });
      lossy.then = async () => {
        // Lambda instances, Worker isolates or other servers: each appends once, without a key.
        for (let i = 0; i < 16; i++) {
          const once = new SessionStore(inner, { pipeline: pipeline(), groupCommit: false });
          await once.append(ns, 'x', { messages: [user(`one-off-${i}`)] }, undefined);
          await once.settled();
        }
      };
      const created = await a.create(ns, { id: 'x', task: 'mine', messages: [user('mine')] });
      expect(created.receipt.revision).toBe(1);
      // The create's copy is not cached under the later etag: A's next append lands after the 16.
      await a.append(ns, 'x', { messages: [user('A')] }, undefined);
      await a.settled();
      const stored = await contents(inner, 0);
      expect(stored).toHaveLength(18);
      expect([stored[0], stored[17]]).toEqual(['mine', 'A']);
    });

  it("still answers 409 when the object is another session's", async () => {
    const inner = new MemoryStore();
    const lossy = new LoseCreate(inner);
    lossy.how = '412 after a lost answer';
    lossy.land = false;
    const a = new SessionStore(lossy, { pipeline: pipeline() });
    // Another process creates the id while A's PUT is lost on its way; A's retry then meets it: 412.
    lossy.then = async () => {
      await new SessionStore(inner, { pipeline: pipeline() }).create(ns, {
        id: 'x',
        task: 'theirs',
      });
    };
    const answer = await a.create(ns, { id: 'x', task: 'mine' }).catch((err: unknown) => err);
    expect(answer).toMatchObject({ kind: 'conflict' });
  });
});
