import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { SessionStore } from '../../lib/sessions/store.js';
import {
  PreconditionFailedError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { S3Store } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { makeApp } from '../http/helpers.js';
import { startFaultProxy, type FaultPlan, type FaultProxy } from '../support/fault-proxy.js';
import { openTestS3 } from '../support/s3.js';
import { PassThrough } from '../support/search-process.js';

// Review s66f, findings 1 and 2 on radosgw (the MemoryStore versions: review-s66f-lost-create.test.ts).
// 1. Node app A behind a proxy that loses the answer to its create's PUT (it landed) and delays the S3
//    adapter's retry of it; app B, another server on the bucket, appends meanwhile and is answered 200
//    revision 2. A's create cached its own revision-1 content under the etag of B's version, so A's next
//    append was answered revision 2 as well, and B's acknowledged message was gone.
// 2. The create's write record pruned by 16 unkeyed one-off appends before its re-read: answered 409
//    "already exists" (the adapter's retry met the object, 412), although the session is the create's.

let proxy: FaultProxy;
let plan: FaultPlan | undefined;
beforeAll(async () => {
  proxy = await startFaultProxy(inject('s3').endpoint, (r) => plan?.(r));
});
afterAll(async () => {
  plan = undefined;
  await proxy.close();
});

/** A Node server's S3 adapter on the run's radosgw under `prefix`, by way of `endpoint` (a proxy). */
function s3At(prefix: string, endpoint = inject('s3').endpoint): S3Store {
  const s3 = inject('s3');
  const timeouts = { connectMs: 500, requestMs: 3000, deadlineMs: 8000 };
  const { region, bucket, accessKeyId, secretAccessKey } = s3;
  const options = { region, bucket, accessKeyId, secretAccessKey, prefix, timeouts };
  return new S3Store({ ...options, endpoint, forcePathStyle: true, wire: nodeWire });
}

describe('review s66f on radosgw: a create whose answer was lost', () => {
  it("keeps the append another server made before the create's re-read", async () => {
    const prefix = `s66f-lc-${Math.random().toString(36).slice(2, 10)}/`;
    const a = await makeApp({ objects: s3At(prefix, proxy.url) });
    const b = await makeApp({ objects: s3At(prefix) });
    let puts = 0;
    plan = (r) => {
      if (r.method !== 'PUT' || !r.path.includes(`${prefix}`)) return undefined;
      if (!r.path.includes('/sessions/x.json')) return undefined;
      // The create lands with its answer lost; the adapter's retry of it waits 1.5 s (a slow link).
      return ++puts === 1 ? { action: 'lose-answer' } : puts === 2 ? { delayMs: 1500 } : undefined;
    };
    const creating = a.call('POST', '/v1/sessions', {
      body: { id: 'x', task: 'shared', messages: [{ role: 'user', content: 'first' }] },
    });
    let fromB: { status: number; json: { revision: number } } | undefined;
    for (let i = 0; i < 100 && !fromB; i++) {
      const r = await b.call('POST', '/v1/sessions/x/messages', {
        body: { messages: [{ role: 'user', content: 'from B' }] },
      });
      if (r.status === 404) await new Promise((res) => setTimeout(res, 20));
      else fromB = r;
    }
    const created = await creating;
    plan = undefined;
    expect([created.status, created.json.revision]).toEqual([201, 1]);
    expect([fromB?.status, fromB?.json.revision]).toEqual([200, 2]);
    const fromA = await a.call('POST', '/v1/sessions/x/messages', {
      body: { messages: [{ role: 'user', content: 'from A' }] },
    });
    expect([fromA.status, fromA.json.revision]).toEqual([200, 3]);
    const read = await b.call('GET', '/v1/sessions/x');
    expect(read.json.messages.map((m: { content: string }) => m.content)).toEqual([
      'first',
      'from B',
      'from A',
    ]);
  });

  it('is answered 201 after 16 unkeyed one-off appends pruned its write record', async () => {
    const objects = openTestS3('s66f-lp');
    const pipeline = () => defaultPipeline({ maxSessionBytes: 1 << 20 });
    const lossy = new LoseCreate(objects, keys.session('lp', 'x'));
    lossy.then = async () => {
      // Lambda instances, Worker isolates or other servers: each appends once, without a key.
      for (let i = 0; i < 16; i++) {
        const once = new SessionStore(objects, { pipeline: pipeline(), groupCommit: false });
        await once.append(
          'lp',
          'x',
          { messages: [{ role: 'user', content: `one-off ${i}` }] },
          undefined,
        );
        await once.settled();
      }
    };
    const a = new SessionStore(lossy, { pipeline: pipeline() });
    const created = await a.create('lp', {
      id: 'x',
      task: 'mine',
      messages: [{ role: 'user', content: 'mine' }],
    });
    expect(created.receipt.revision).toBe(1);
    await a.append('lp', 'x', { messages: [{ role: 'user', content: 'A' }] }, undefined);
    await a.settled();
    const stored = (await new SessionStore(objects, { pipeline: pipeline() }).get('lp', 'x'))
      .messages;
    expect(stored).toHaveLength(18);
    expect([stored[0]!.content, stored[17]!.content]).toEqual(['mine', 'A']);
  });
});

/**
 * Lands the next create of `key` on radosgw, runs `then` (other writers), and sends the PUT again as the
 * S3 adapter does after a lost answer: radosgw answers that retry 412, which the adapter reports as a
 * precondition failure after a lost answer.
 */
class LoseCreate extends PassThrough {
  then: (() => Promise<void>) | undefined;
  constructor(
    inner: ObjectStore,
    private readonly key: string,
  ) {
    super(inner);
  }

  override async put(k: string, body: Uint8Array, options?: PutOptions) {
    const t = k === this.key && options?.ifNoneMatch === '*' ? this.then : undefined;
    if (!t) return this.inner.put(k, body, options);
    this.then = undefined;
    await this.inner.put(k, body, options);
    await t();
    try {
      return await this.inner.put(k, body, options);
    } catch (err) {
      if (PreconditionFailedError.is(err))
        throw new PreconditionFailedError(k, { afterLostAnswer: true });
      throw err;
    }
  }
}
