// Review s67d, finding 2 (fixed 2026-12-07): a continue whose user message was stored but whose model turn
// then failed answered 502, 503, 413 or 409 "your message was stored (revision N)" without an `ETag`. The
// contract: "Every write that succeeds returns the new one"; a client that sends `If-Match` next had to
// parse the detail's English or GET the session again. Node (the real server) and Workers (workerd).
import type { Miniflare } from 'miniflare';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, type PutOptions } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type Step } from '../support/chat-server.js';
import { startSatchelServer } from '../support/satchel-server.js';
import { PassThrough } from '../support/search-process.js';
import { startWorkerd } from '../support/workerd.js';

const closing: { close(): Promise<void> }[] = [];
const instances: Miniflare[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await Promise.all(instances.splice(0).map((mf) => mf.dispose()));
});

const json = { 'content-type': 'application/json' };

async function chatServer(...steps: Step[]) {
  const chat = await startChatServer(...steps);
  closing.push(chat);
  return chat;
}

/** An app on a local folder (or `objects`) whose model is the scripted chat server, and session `c`. */
async function appWith(steps: Step[], env: Record<string, string> = {}, objects?: PassThrough) {
  const chat = await chatServer(...steps);
  const app = await makeApp({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm', ...env },
    ...(objects ? { objects } : {}),
  });
  const made = await app.call('POST', '/v1/sessions', {
    body: { id: 'c', task: 't', messages: [{ role: 'system', content: 'sys' }] },
  });
  expect(made.status).toBe(201);
  const ask = (message: string, key: string) =>
    app.call('POST', '/v1/sessions/c/continue', {
      body: { message },
      headers: { 'idempotency-key': key },
    });
  return { chat, app, ask };
}

describe('a continue whose message was stored and whose turn failed carries its ETag', () => {
  it('Node server: the 502 tags the revision that stored the message, which If-Match then takes', async () => {
    const chat = await chatServer({ status: 500, body: { error: { message: 'boom' } } });
    const server = await startSatchelServer({
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' },
    });
    closing.push(server);
    const made = await fetch(`${server.url}/v1/sessions`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ id: 'c', task: 't' }),
    });
    expect(made.status).toBe(201);
    const res = await fetch(`${server.url}/v1/sessions/c/continue`, {
      method: 'POST',
      headers: { ...json, 'idempotency-key': 'k1' },
      body: JSON.stringify({ message: 'go' }),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /your message was stored \(revision 2\)/,
    );
    expect(res.headers.get('etag')).toBe('"2"');
    const next = await fetch(`${server.url}/v1/sessions/c/messages`, {
      method: 'POST',
      headers: { ...json, 'if-match': res.headers.get('etag') ?? '' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'next' }] }),
    });
    expect(next.status).toBe(200);
    expect(next.headers.get('etag')).toBe('"3"');
  });

  it('the 413 of a reply the cap cannot hold', async () => {
    const { ask } = await appWith([{ reply: 'r'.repeat(7000) }], {
      SATCHEL_MAX_SESSION_BYTES: '6000',
    });
    const res = await ask('q', 'k413');
    expect(res.status).toBe(413);
    expect(res.json.detail).toMatch(/your message was stored \(revision 2\) and no reply/);
    expect(res.headers.get('etag')).toBe('"2"');
  });

  it('the 409 while another continue runs a turn on the session', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { chat, ask } = await appWith(
      [
        async () => {
          await gate;
          return { reply: 'slow' };
        },
      ],
      { SATCHEL_CONTINUE_WAIT_MS: '200' },
    );
    const first = ask('q1', 'k-first');
    await expect.poll(() => chat.requests.length).toBe(1);
    const busy = await ask('q2', 'k-busy');
    expect(busy.status).toBe(409);
    expect(busy.json.detail).toMatch(/your message was stored \(revision 3\)/);
    expect(busy.headers.get('etag')).toBe('"3"');
    release();
    expect((await first).status).toBe(200);
  });

  it('the 503 of storage failing after the message was stored', async () => {
    class FailLease extends PassThrough {
      override put(key: string, body: Uint8Array, options?: PutOptions) {
        if (key.includes('/lease/'))
          return Promise.reject(new StorageUnavailableError('storage refused'));
        return this.inner.put(key, body, options);
      }
    }
    const store = new FailLease(new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s67d-'))));
    const { chat, ask } = await appWith([{ reply: 'unused' }], {}, store);
    const res = await ask('q', 'k503');
    expect(res.status).toBe(503);
    expect(res.json.detail).toMatch(/your message was stored \(revision 2\)/);
    expect(res.headers.get('etag')).toBe('"2"');
    expect(chat.requests).toHaveLength(0);
  });

  it('no ETag on the 404 of a session deleted while the model ran: no revision of it holds the message', async () => {
    let app!: Awaited<ReturnType<typeof makeApp>>;
    const s = await appWith([
      async () => {
        expect((await app.call('DELETE', '/v1/sessions/c')).status).toBe(204);
        return { reply: 'late' };
      },
    ]);
    app = s.app;
    const res = await s.ask('q', 'k404');
    expect(res.status).toBe(404);
    expect(res.headers.get('etag')).toBeNull();
    await app.background.drain();
  });

  it('no ETag on the 409 of a message a pop removed while the model ran: the session no longer holds it', async () => {
    let app!: Awaited<ReturnType<typeof makeApp>>;
    const s = await appWith([
      async () => {
        const popped = await app.call('POST', '/v1/sessions/c/pop', { body: { count: 1 } });
        expect(popped.status).toBe(200);
        return { reply: 'late' };
      },
    ]);
    app = s.app;
    const res = await s.ask('q', 'k409r');
    expect(res.status).toBe(409);
    expect(res.json.detail).toMatch(/was removed from session c while the model ran/);
    expect(res.headers.get('etag')).toBeNull();
  });

  it('Workers: the 502 tags the revision that stored the message', async () => {
    const chat = await chatServer({ status: 500, body: { error: { message: 'boom' } } });
    const dir = mkdtempSync(join(tmpdir(), 'satchel-s67d-'));
    const script = await buildWorker(join(dir, 'r2', 'worker-r2.js'), { s3: false });
    const TOKEN = 'tok_s67d_worker_7Jq3';
    const mf = startWorkerd(script, {
      SATCHEL_TOKENS: `edge/w=${TOKEN}`,
      SATCHEL_LOG: 'off',
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'm',
    });
    instances.push(mf);
    const headers = { ...json, authorization: `Bearer ${TOKEN}` };
    const made = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'c', task: 't' }),
    });
    expect(made.status).toBe(201);
    await made.arrayBuffer();
    const res = await mf.dispatchFetch('http://w/v1/sessions/c/continue', {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'kw' },
      body: JSON.stringify({ message: 'go' }),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /your message was stored \(revision 2\)/,
    );
    expect(res.headers.get('etag')).toBe('"2"');
  }, 180_000);
});
