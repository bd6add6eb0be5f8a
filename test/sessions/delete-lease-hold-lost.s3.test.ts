// Review s55d (2026-12-06), fixed: the hold's owner is the delete's own, read back after a lost answer.
// lib/sessions/parts.ts holdForDelete: a delete takes an expired continue lease (PUT If-Match) before it
// deletes it. When that PUT lands with its answer lost, the adapter's retry gets 412 and throws
// PreconditionFailedError with afterLostAnswer; holdForDelete reads every 412 as "taken over meanwhile",
// so the delete leaves its own 60 s lease (owner "delete") in the bucket, answers 204, and a continue of
// the session created again under the id finds a live lease nobody holds: LeaseBusy (409) for a minute,
// and the lease object stays for ever after the delete said everything went.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Leases, LeaseBusyError } from '../../lib/continue/lease.js';
import { keys } from '../../lib/model/keys.js';
import { encodeLease, parseLease } from '../../lib/model/lease.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp } from '../http/helpers.js';
import { startFaultProxy, type FaultPlan, type FaultProxy } from '../support/fault-proxy.js';

let proxy: FaultProxy;
let plan: FaultPlan | undefined;
beforeAll(async () => {
  proxy = await startFaultProxy(inject('s3').endpoint, (r) => plan?.(r));
});
afterAll(async () => {
  plan = undefined;
  proxy.releaseHung();
  await proxy.releaseHeld();
  await proxy.close();
});

const store = (label: string) =>
  openTestS3(label, {
    endpoint: proxy.url,
    timeouts: { connectMs: 500, requestMs: 1000, deadlineMs: 3000 },
  });

describe('a delete whose lease hold PUT landed with its answer lost', () => {
  it('still deletes the lease (it is its own), so a session created again can take it', async () => {
    const objects = store('s55d-hold');
    const app = await makeApp({ objects });
    const created = await app.call('POST', '/v1/sessions', {
      body: { id: 'held1', task: 'lease hold' },
    });
    expect(created.status).toBe(201);
    // A turn that crashed: its lease expired long ago.
    const leaseKey = keys.lease('alice', 'held1');
    await objects.put(
      leaseKey,
      encodeLease({ owner: 'crashed', expiresAt: Date.now() - 600_000, ttlMs: 1000 }),
      {
        contentType: 'application/json',
      },
    );
    await new Promise((r) => setTimeout(r, 3000)); // its age by storage's clock passes ttl + grain

    // The delete's hold PUT (If-Match on the lease) lands; its answer is lost.
    let lost = false;
    plan = (r) => {
      if (!lost && r.method === 'PUT' && r.path.includes('/lease/held1.json')) {
        lost = true;
        return { action: 'lose-answer' };
      }
      return undefined;
    };
    const del = await app.call('DELETE', '/v1/sessions/held1');
    plan = undefined;
    expect(lost).toBe(true);
    expect(del.status, del.text).toBe(204);

    const left = await objects.get(leaseKey);
    // Deleted means gone: the lease the delete took is its own and goes with it.
    expect(left && parseLease(left.body)).toBeNull();

    // A session created again under the id: its continue takes the lease at once.
    const again = await app.call('POST', '/v1/sessions', { body: { id: 'held1', task: 'again' } });
    expect(again.status).toBe(201);
    const leases = new Leases(objects, { ttlMs: 60_000, waitMs: 1000 });
    const taken = await leases.take(leaseKey).catch((e: unknown) => e);
    expect(taken instanceof LeaseBusyError ? 'busy' : 'taken').toBe('taken');
  });
});
