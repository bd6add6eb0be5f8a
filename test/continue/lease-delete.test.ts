// A delete leaves a continue lease that a running turn holds: a session created again under the id and
// continued meanwhile waits for that turn, so one model turn runs at a time (found by review, 2026-12-04: the
// delete erased the live lease, and two turns ran at once).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a delete and a turn in flight', () => {
  it('a turn running when its session is deleted keeps the id serialised for a session created again', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-rv2-lease-')));
    let second: Promise<unknown> | undefined;
    let other: Awaited<ReturnType<typeof makeApp>>;
    const chat = await startChatServer(
      async () => {
        // During the first turn: the session is deleted, created again under its id, and continued.
        const del = await other.call('DELETE', `/v1/sessions/s-leased`);
        expect(del.status).toBe(204);
        for (let i = 0; i < 100 && (await store.get(keys.lease('alice', 's-leased'))); i++)
          await sleep(10);
        const again = await other.call('POST', '/v1/sessions', {
          body: { id: 's-leased', task: 'again', messages: [{ role: 'system', content: 's' }] },
        });
        expect(again.status).toBe(201);
        second = other.call('POST', `/v1/sessions/s-leased/continue`, { body: { message: 'B' } });
        await sleep(400);
        return { reply: 'first reply' };
      },
      { reply: 'second reply', delayMs: 100 },
    );
    servers.push(chat);
    const env = {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
      SATCHEL_MODEL_KEY: 'sk-test-model-key-0123456789abcdef',
    };
    const app = await makeApp({ env, objects: store });
    other = await makeApp({ env, objects: store });
    const created = await app.call('POST', '/v1/sessions', {
      body: { id: 's-leased', task: 't', messages: [{ role: 'system', content: 's' }] },
    });
    expect(created.status).toBe(201);
    await app.call('POST', `/v1/sessions/s-leased/continue`, { body: { message: 'A' } });
    await second;
    expect(chat.maxConcurrent).toBe(1);
  });

  it('a turn whose session was deleted and created again is not stored in the new session (review)', async () => {
    // The turn was appended to whatever session the id held when the model answered: the new session got
    // a stranger's reply (quoting the deleted session's text) and its model and provider.
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-recreated-')));
    const secret = `zqv${Math.random()
      .toString(36)
      .replace(/[^a-z]/g, '')}x`;
    let other: Awaited<ReturnType<typeof makeApp>>;
    const chat = await startChatServer(async (req) => {
      expect((await other.call('DELETE', '/v1/sessions/s-re')).status).toBe(204);
      await other.background.drain();
      const again = await other.call('POST', '/v1/sessions', {
        body: { id: 's-re', task: 'fresh', messages: [{ role: 'system', content: 'new' }] },
      });
      expect(again.status).toBe(201);
      return { reply: `you asked: ${req.body.messages.at(-1)!.content}` };
    });
    servers.push(chat);
    const env = { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'turn-model' };
    const app = await makeApp({ env, objects: store });
    other = await makeApp({ objects: store });
    await app.call('POST', '/v1/sessions', {
      body: { id: 's-re', task: 'old', messages: [{ role: 'system', content: 'old' }] },
    });
    const res = await app.call('POST', '/v1/sessions/s-re/continue', {
      body: { message: `the code is ${secret}` },
    });
    expect(res.status).toBe(404);
    // Another session is under the id now: not "does not exist" (review s55b).
    expect(res.json.detail).toBe(
      'session s-re was deleted since your message was stored; the reply was not stored',
    );
    for (const a of [app, other, app]) await a.background.drain();
    const now = (await other.call('GET', '/v1/sessions/s-re')).json;
    expect(now.messages).toEqual([{ role: 'system', content: 'new' }]);
    expect(now.model).toBe('');
    const files = await listAll(store, '');
    const bodies = await Promise.all(files.map(async (k) => (await store.get(k))!.body));
    expect(bodies.filter((b) => Buffer.from(b).toString('latin1').includes(secret))).toEqual([]);
  });
});
