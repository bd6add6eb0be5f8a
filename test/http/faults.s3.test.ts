import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3Store, type S3Timeouts } from '../../lib/storage/s3.js';
import {
  onceFor,
  randomFaults,
  startFaultProxy,
  type FaultProxy,
  type ProxiedRequest,
} from '../support/fault-proxy.js';
import { makeApp } from './helpers.js';

// Issue 12 item 2 through the HTTP API: radosgw behind a fault-injecting proxy (lost answers, dropped
// connections, 500/503). Every answer must be true: a write that landed is never answered 409, 500 or
// 503, a first attempt is never "replayed", and nothing acknowledged is lost or stored twice.

const timeouts: S3Timeouts = { connectMs: 500, requestMs: 1500, deadlineMs: 4000 };
let proxy: FaultProxy;

function storeVia(endpoint: string, prefix: string): S3Store {
  const s3 = inject('s3');
  return new S3Store({
    ...s3,
    endpoint,
    prefix,
    timeouts,
    retry: { attempts: 4, baseMs: 10, maxMs: 50 },
  });
}

const isPut = (what: RegExp) => (req: ProxiedRequest) =>
  req.method === 'PUT' && what.test(req.path);

beforeAll(async () => {
  proxy = await startFaultProxy(inject('s3').endpoint);
});
afterAll(async () => {
  await proxy.close();
});

describe('writes whose storage answer was lost answer what happened', () => {
  it('create: the answer to its own session PUT is lost, the retry finds it: 201, not 409', async () => {
    const prefix = `faults-http-${Math.random().toString(36).slice(2, 8)}/`;
    const app = await makeApp({ objects: storeVia(proxy.url, prefix) });
    proxy.setPlan(onceFor(isPut(/\/sessions\/[^/]+\.json/), { action: 'lose-answer' }));
    const created = await app.call('POST', '/v1/sessions', { body: { task: 'lost answer' } });
    proxy.setPlan(undefined);
    expect(created.status).toBe(201);
    const list = await app.call('GET', '/v1/sessions');
    expect(list.json.sessions.map((s: { id: string }) => s.id)).toEqual([created.json.id]);
  });

  it('append: the answer to its compare-and-swap is lost: 200 once, stored once, not "replayed"', async () => {
    const prefix = `faults-http-${Math.random().toString(36).slice(2, 8)}/`;
    const app = await makeApp({ objects: storeVia(proxy.url, prefix) });
    const { json } = await app.call('POST', '/v1/sessions', { body: { task: 'cas' } });
    proxy.setPlan(onceFor(isPut(/\/sessions\/[^/]+\.json/), { action: 'lose-answer' }));
    const res = await app.call('POST', `/v1/sessions/${json.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'only once' }] },
    });
    proxy.setPlan(undefined);
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const got = await app.call('GET', `/v1/sessions/${json.id}`);
    expect(got.json.messages.map((m: { content: string }) => m.content)).toEqual(['only once']);
  });

  it('create and delete: their manifest log record answers are lost: no 500', async () => {
    const prefix = `faults-http-${Math.random().toString(36).slice(2, 8)}/`;
    const app = await makeApp({ objects: storeVia(proxy.url, prefix) });
    proxy.setPlan(onceFor(isPut(/\/m\/l\//), { action: 'lose-answer' }));
    const created = await app.call('POST', '/v1/sessions', { body: { task: 'log lost' } });
    expect(created.status).toBe(201);
    proxy.setPlan(onceFor(isPut(/\/m\/l\//), { action: 'lose-answer' }));
    const deleted = await app.call('DELETE', `/v1/sessions/${created.json.id}`);
    proxy.setPlan(undefined);
    expect(deleted.status).toBe(204);
  });

  it('a landed append whose log record cannot be stored still answers 200, and the list heals', async () => {
    const prefix = `faults-http-${Math.random().toString(36).slice(2, 8)}/`;
    const app = await makeApp({ objects: storeVia(proxy.url, prefix) });
    const { json } = await app.call('POST', '/v1/sessions', { body: { task: 'heal' } });
    proxy.setPlan((req) => (isPut(/\/m\/l\//)(req) ? { action: 'error', status: 503 } : undefined));
    const res = await app.call('POST', `/v1/sessions/${json.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'stored' }] },
    });
    proxy.setPlan(undefined);
    expect(res.status).toBe(200);
    const other = await makeApp({ objects: storeVia(proxy.url, prefix) });
    const list = await other.call('GET', '/v1/sessions');
    expect(list.json.sessions[0]).toMatchObject({ id: json.id, turns: 1 });
  });
});

describe('a seeded fault mix with concurrent keyed and unkeyed writers', () => {
  it('loses nothing acknowledged, duplicates nothing, and answers no 5xx but 503', async () => {
    const prefix = `faults-mix-${Math.random().toString(36).slice(2, 8)}/`;
    const app = await makeApp({ objects: storeVia(proxy.url, prefix) });
    const { json } = await app.call('POST', '/v1/sessions', { body: { task: 'mix' } });
    proxy.setPlan(
      randomFaults(7, { drop: 0.04, loseAnswer: 0.06, error500: 0.03, error503: 0.04 }),
    );
    const acknowledged: string[] = [];
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 10; i++) {
          const content = `w${w}-m${i}`;
          const keyed = w % 2 === 0;
          // A keyed writer retries until it gets an answer; an unkeyed one sends once.
          for (let tries = 0; tries < (keyed ? 6 : 1); tries++) {
            const res = await app.call('POST', `/v1/sessions/${json.id}/messages`, {
              headers: keyed ? { 'idempotency-key': `k-${content}` } : {},
              body: { messages: [{ role: 'user', content }] },
            });
            statuses.push(res.status);
            if (res.status === 200) {
              acknowledged.push(content);
              break;
            }
          }
        }
      }),
    );
    proxy.setPlan(undefined);
    await app.background.drain();
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    const stored: string[] = (await app.call('GET', `/v1/sessions/${json.id}`)).json.messages.map(
      (m: { content: string }) => m.content,
    );
    for (const content of acknowledged) expect(stored.filter((c) => c === content)).toHaveLength(1);
    expect(new Set(stored).size).toBe(stored.length);
    expect(acknowledged.length).toBeGreaterThan(20);
  }, 120_000);
});
