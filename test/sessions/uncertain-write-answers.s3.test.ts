import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3Store, type S3Timeouts } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { makeApp } from '../http/helpers.js';
import {
  startFaultProxy,
  type FaultPlan as Plan,
  type FaultProxy as NetProxy,
  type ProxiedRequest as Req,
} from '../support/fault-proxy.js';

// Review s53c: a write whose commit PUT may have landed (its answer lost, or still held by a stalled
// server) and that then failed answered as if nothing had been stored: the generic 503 "storage is
// unreachable; try again shortly", or after 30 s of PUTs held with no other writer, "too many concurrent
// writers on this session; try again". A client doing what it said stored the message twice, or a second
// session. docs/api.md: such a write answers 503 "saying it may have been stored". radosgw behind a proxy
// that loses answers, hangs, or holds requests and forwards them later.

let proxy: NetProxy;
let plan: Plan | undefined;
beforeAll(async () => {
  proxy = await startFaultProxy(inject('s3').endpoint, (r) => plan?.(r));
});
afterAll(async () => {
  plan = undefined;
  proxy.releaseHung();
  await proxy.releaseHeld();
  await proxy.close();
});

const timeouts: S3Timeouts = { connectMs: 500, requestMs: 1000, deadlineMs: 3000 };

function appOn(prefix: string) {
  const s3 = inject('s3');
  const objects = new S3Store({
    endpoint: proxy.url,
    region: s3.region,
    bucket: s3.bucket,
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    prefix,
    timeouts,
    wire: nodeWire,
  });
  return makeApp({ objects });
}

const newPrefix = (label: string) =>
  `uncertain-${label}-${Math.random().toString(36).slice(2, 8)}/`;
const isSessionPut = (r: Req) => r.method === 'PUT' && /\/sessions\/[^/?]+\.json/.test(r.path);

/** The session's first PUT lands with its answer lost; then storage answers nothing at all. */
function loseThenHang(prefix: string): Plan {
  let lost = false;
  return (r) => {
    if (!r.path.includes(prefix.slice(0, -1))) return undefined;
    if (!lost && isSessionPut(r)) {
      lost = true;
      return { action: 'lose-answer' };
    }
    return lost ? { action: 'hang' } : undefined;
  };
}

type App = Awaited<ReturnType<typeof appOn>>;
const copiesOf = async (app: App, id: string, content: string) =>
  (await app.call('GET', `/v1/sessions/${id}`)).json.messages.filter(
    (m: { content: string }) => m.content === content,
  ).length;

describe('a write that may have been stored says so', () => {
  it('commit answer lost, then the re-read fails: 503 "may have been stored", not "try again shortly"', async () => {
    const prefix = newPrefix('lost');
    const app = await appOn(prefix);
    const { json } = await app.call('POST', '/v1/sessions', { body: { task: 'lost then down' } });
    plan = loseThenHang(prefix);
    const body = { messages: [{ role: 'user', content: 'exactly once' }] };
    const res = await app.call('POST', `/v1/sessions/${json.id}/messages`, { body });
    plan = undefined;
    proxy.releaseHung();
    expect(await copiesOf(app, json.id, 'exactly once')).toBe(1); // it landed
    expect(res.status).toBe(503);
    expect(res.json.detail).toMatch(
      /may have been stored; read the session before sending it again$/,
    );
    expect(res.headers.get('retry-after')).not.toBeNull();
    await app.background.drain();
  });

  it('with an Idempotency-Key: the 503 says to send it again with the key, which stores it once', async () => {
    const prefix = newPrefix('keyed');
    const app = await appOn(prefix);
    const { json } = await app.call('POST', '/v1/sessions', {
      body: { task: 'keyed, lost then down' },
    });
    plan = loseThenHang(prefix);
    const send = () =>
      app.call('POST', `/v1/sessions/${json.id}/messages`, {
        headers: { 'idempotency-key': 'k-uncertain-1' },
        body: { messages: [{ role: 'user', content: 'keyed once' }] },
      });
    const res = await send();
    plan = undefined;
    proxy.releaseHung();
    expect(res.status).toBe(503);
    expect(res.json.detail).toMatch(
      /may have been stored; send it again with the same Idempotency-Key/,
    );
    const again = await send(); // what the answer says to do
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await copiesOf(app, json.id, 'keyed once')).toBe(1);
    await app.background.drain();
  });

  it('commit PUTs held, no other writer: "may have been stored", not "concurrent writers"', async () => {
    const prefix = newPrefix('held');
    const app = await appOn(prefix);
    const { json } = await app.call('POST', '/v1/sessions', { body: { task: 'held' } });
    plan = (r) =>
      r.path.includes(prefix.slice(0, -1)) && isSessionPut(r) ? { action: 'hold' } : undefined;
    const res = await app.call('POST', `/v1/sessions/${json.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'held message' }] },
    });
    plan = undefined;
    await proxy.releaseHeld(); // the stalled server works through its backlog: one of them lands
    expect(await copiesOf(app, json.id, 'held message')).toBe(1);
    expect(res.status).toBe(503);
    expect(res.json.detail).not.toMatch(/concurrent writers/);
    expect(res.json.detail).toMatch(
      /may have been stored; read the session before sending it again$/,
    );
    await app.background.drain();
  }, 90_000);

  it('create: its PUT landed, answer lost, then storage fails: 503 naming the id it may have created', async () => {
    const prefix = newPrefix('create');
    const app = await appOn(prefix);
    plan = loseThenHang(prefix);
    const res = await app.call('POST', '/v1/sessions', { body: { task: 'create once please' } });
    plan = undefined;
    proxy.releaseHung();
    await app.background.drain();
    const listed = (await app.call('GET', '/v1/sessions')).json.sessions.filter(
      (s: { task: string }) => s.task === 'create once please',
    );
    expect(listed).toHaveLength(1); // it landed
    expect(res.status).toBe(503);
    const id = listed[0].id as string;
    expect(res.json.detail).toContain(`session ${id} may have been stored`);
    // Sent again with the id it names, as the answer says: 409, and still one session.
    const again = await app.call('POST', '/v1/sessions', {
      body: { id, task: 'create once please' },
    });
    expect(again.status).toBe(409);
    const after = (await app.call('GET', '/v1/sessions')).json.sessions.filter(
      (s: { task: string }) => s.task === 'create once please',
    );
    expect(after).toHaveLength(1);
  });
});
