import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, text, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

// Review s55b, finding 4. design.md's crash table: "after the append, before the `stored` PUT (with a
// model), or that PUT failed and so did the turn | claimed marker, the message stored | within 24 h a
// redelivery replays the keyed append and runs the turn". When the message went in its shorter form (the
// cap refused the full one), the redelivery's keyed append of the full form is a 422 (same key, other
// body), which was taken for "already stored": the delivery was marked done and its turn never ran. Now
// it goes on as stored: the continue finds the message by its tag and runs the turn it is owed.
const SECRET = 'ops-hook-secret-0123456789';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A local store whose PUTs of a webhook marker in state `stored` fail while `fail.stored`. */
function failingStoredPut(fail: { stored: boolean }): ObjectStore {
  const inner = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s55b-')));
  return {
    name: inner.name,
    get: (k) => inner.get(k),
    put: async (k, b, o) => {
      if (fail.stored && k.includes('/hooks/') && text(b).includes('"stored"'))
        throw new StorageUnavailableError('injected: the stored PUT fails');
      return inner.put(k, b, o);
    },
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    head: (k) => inner.head(k),
  };
}

describe('webhook, short form, `stored` PUT and turn both failed (review s55b, finding 4)', () => {
  it('a redelivery within 24 h runs the owed turn on the message as stored', async () => {
    const chat = await startChatServer({ status: 503 }, { reply: 'on it' });
    servers.push(chat);
    const fail = { stored: true };
    const app = await makeApp({
      objects: failingStoredPut(fail),
      env: {
        SATCHEL_HOOKS: JSON.stringify(HOOKS),
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'test-model',
        SATCHEL_MAX_SESSION_BYTES: '4096',
      },
    });
    const body = '\u0001'.repeat(6000); // 6 bytes each in stored JSON: the full summary is refused
    const send = () =>
      app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, 'ctl-1', 'text/plain'));
    expect((await send()).status).toBe(202);
    await app.background.drain();
    const first = (await app.call('GET', '/v1/sessions/ops-log')).json.messages;
    expect(first.map((m: { role: string }) => m.role)).toEqual(['user']);
    expect(first[0].content).toMatch(/truncated/); // the shorter form
    const markerKey = keys.hookDelivery('alice', 'ops', await sha256Hex('ctl-1'));
    const marker = async () => JSON.parse(text((await app.objects.get(markerKey))!.body));
    expect((await marker()).state).toBe('claimed');
    expect(app.logs.find('webhook delivery failed', 'warn')).toHaveLength(1);
    fail.stored = false;

    expect((await send()).status).toBe(202);
    await app.background.drain();
    const after = (await app.call('GET', '/v1/sessions/ops-log')).json.messages;
    // Before: one model request; the delivery marked done with no reply.
    expect(chat.requests).toHaveLength(2);
    expect(after.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(after[1].content).toBe('on it');
    expect(chat.requests[1]!.body.messages.at(-1)!.content).toBe(first[0].content);
    expect((await marker()).state).toBe('done');
    // A third delivery is a no-op: no second message, no second turn.
    expect((await send()).status).toBe(202);
    await app.background.drain();
    expect(chat.requests).toHaveLength(2);
    expect((await app.call('GET', '/v1/sessions/ops-log')).json.messages).toHaveLength(2);
  });
});
