import { afterEach, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Env } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, text, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { startChatServer, type ChatServer, type Step } from '../support/chat-server.js';

// Webhooks when a model is configured: the delivery is a continue (message, then one model turn), still
// exactly once per delivery, and a redelivery after a failed turn runs the missing turn.
const SECRET = 'hook-with-model-secret';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** What a PUT does: `put` may fail it, delay it, or let it through (`real`). */
type PutHook = (
  key: string,
  body: Uint8Array,
  real: () => Promise<{ etag: string }>,
) => Promise<{ etag: string }>;

/** A local folder whose PUTs go through `hook`. */
function hookedStore(hook: PutHook): ObjectStore {
  const inner = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-hooks-')));
  return {
    name: inner.name,
    get: (k) => inner.get(k),
    put: (k, b, o) => hook(k, b, () => inner.put(k, b, o)),
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    head: (k) => inner.head(k),
  };
}

const isMarker = (key: string) => key.includes('/hooks/');
const stateIn = (body: Uint8Array) => (JSON.parse(text(body)) as { state: string }).state;

async function setup(steps: Step[], options: { put?: PutHook; env?: Env } = {}) {
  const chat = await startChatServer(...steps);
  servers.push(chat);
  const app = await makeApp({
    env: {
      SATCHEL_HOOKS: JSON.stringify(HOOKS),
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
      ...options.env,
    },
    ...(options.put ? { objects: hookedStore(options.put) } : {}),
  });
  const deliver = (body: string, delivery: string) =>
    app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, delivery));
  const messages = async () =>
    (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
      role: string;
      content: string;
    }[];
  const marker = async (delivery: string) => {
    const found = await app.objects.get(
      keys.hookDelivery('alice', 'ops', await sha256Hex(delivery)),
    );
    return found ? stateIn(found.body) : undefined;
  };
  return { chat, app, deliver, messages, marker };
}

describe('webhooks with a model configured', () => {
  it('a delivery is stored as the untrusted user message, then answered by one model turn', async () => {
    const { chat, app, deliver, messages } = await setup([{ reply: 'looking into the deploy' }]);
    const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
    expect((await deliver(body, 'd-1')).status).toBe(202);
    await app.background.drain();
    const stored = await messages();
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[0]!.content).toMatch(/^<untrusted_content_[0-9a-f]{16} source="webhook:ops">/);
    expect(stored[1]!.content).toBe('looking into the deploy');
    expect(chat.requests).toHaveLength(1);
    // A redelivery of a finished delivery neither stores nor calls the model.
    await deliver(body, 'd-1');
    await app.background.drain();
    expect(await messages()).toHaveLength(2);
    expect(chat.requests).toHaveLength(1);
  });

  it("the payload's secrets count once: in the message's audit record, not again in the turn's", async () => {
    const { app, deliver, messages } = await setup([{ reply: 'rotating it' }]);
    const body = JSON.stringify({ type: 'leak', password: 'Hunter2-Ocelot' });
    expect((await deliver(body, 'd-secret')).status).toBe(202);
    await app.background.drain();
    expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
    const audit = (await app.call('GET', '/v1/sessions/ops-log/audit')).json.records;
    expect(audit.map((r: { op: string; redactions: number }) => [r.op, r.redactions])).toEqual([
      ['create', 0],
      ['continue', 1],
      ['continue', 0],
    ]);
  });

  it('a redelivery after a failed model turn runs the missing turn; the message is stored once', async () => {
    const { chat, app, deliver, messages } = await setup([
      { status: 503 },
      { reply: 'second attempt' },
    ]);
    const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
    await deliver(body, 'd-2');
    await app.background.drain();
    expect((await messages()).map((m) => m.role)).toEqual(['user']);
    const markerKey = keys.hookDelivery('alice', 'ops', await sha256Hex('d-2'));
    // The marker says the message is stored: a redelivery runs only the turn, even after 24 h.
    expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('stored');
    expect(app.logs.find('webhook delivery failed', 'warn')).toEqual([
      expect.objectContaining({ hook: 'ops', error: expect.stringContaining('HTTP 503') }),
    ]);
    await deliver(body, 'd-2');
    await app.background.drain();
    const stored = await messages();
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[1]!.content).toBe('second attempt');
    expect(chat.requests).toHaveLength(2);
    expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('done');
  });

  it('a reply the size cap refuses fails the delivery (logged, redelivery runs the turn): no shorter message is sent', async () => {
    // The cap refuses the reply, not the message: a shorter message (the fallback for a message the cap
    // refuses) would be a key reuse, counted as stored, and the delivery marked done with no reply.
    const { app, deliver, messages, marker } = await setup(
      [{ reply: 'r'.repeat(9000) }, { reply: 'short' }],
      { env: { SATCHEL_MAX_SESSION_BYTES: '8192' } },
    );
    const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
    await deliver(body, 'd-big-reply');
    await app.background.drain();
    const first = await messages();
    expect(first.map((m) => m.role)).toEqual(['user']);
    expect(first[0]!.content).toContain('deploy.failed');
    expect(await marker('d-big-reply')).toBe('stored');
    expect(app.logs.find('webhook delivery failed', 'warn')).toEqual([
      expect.objectContaining({ error: expect.stringContaining('no reply was stored') }),
    ]);
    await deliver(body, 'd-big-reply');
    await app.background.drain();
    expect((await messages()).map((m) => [m.role, m.content.slice(0, 5)])).toEqual([
      ['user', first[0]!.content.slice(0, 5)],
      ['assistant', 'short'],
    ]);
    expect(await marker('d-big-reply')).toBe('done');
  });

  it('a redelivery more than 24 h after a failed turn runs the turn; the message is still stored once', async () => {
    // Only the clock moves: the message's Idempotency-Key record no longer counts after 24 h.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-02T08:00:00Z') });
    try {
      const { chat, app, deliver, messages } = await setup([
        { status: 500 },
        { reply: 'a day later' },
      ]);
      const body = JSON.stringify({ type: 'deploy.failed', service: 'web' });
      await deliver(body, 'd-late');
      await app.background.drain();
      expect((await messages()).map((m) => m.role)).toEqual(['user']);
      vi.setSystemTime(Date.parse('2026-11-03T09:00:00Z'));
      // Another write after the window prunes the message's key record from the session.
      const other = await app.call('POST', '/v1/sessions/ops-log/messages', {
        body: { messages: [{ role: 'user', content: 'next day' }] },
      });
      expect(other.status).toBe(200);
      await deliver(body, 'd-late');
      await app.background.drain();
      const stored = await messages();
      // The delivery's message moves to just before its reply (review s60e).
      expect(stored.map((m) => m.role)).toEqual(['user', 'user', 'assistant']);
      expect(stored[0]!.content).toBe('next day');
      expect(stored[2]!.content).toBe('a day later');
      expect(chat.requests).toHaveLength(2);
      // The model saw the delivery's message last, as the turn's own.
      const sent = (chat.requests[1]!.body as { messages: { content: string }[] }).messages;
      expect(sent.at(-1)!.content).toBe(stored[1]!.content);
      const markerKey = keys.hookDelivery('alice', 'ops', await sha256Hex('d-late'));
      expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('done');
    } finally {
      vi.useRealTimers();
    }
  });

  it("a turn stored before its marker's done failed is not run again, even after 24 h (review)", async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-02T08:00:00Z') });
    try {
      let failDone = true;
      const { chat, app, deliver, messages, marker } = await setup(
        [{ reply: 'the only reply' }, { reply: 'a second reply to the same delivery' }],
        {
          put: async (key, body, real) => {
            if (failDone && isMarker(key) && stateIn(body) === 'done')
              throw new StorageUnavailableError('injected: the done PUT got no answer');
            return real();
          },
        },
      );
      const body = JSON.stringify({ type: 'deploy.failed', service: 'web' });
      await deliver(body, 'd-x');
      await app.background.drain();
      expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(await marker('d-x')).toBe('stored');
      failDone = false;
      vi.setSystemTime(Date.parse('2026-11-03T09:00:00Z'));
      const other = await app.call('POST', '/v1/sessions/ops-log/messages', {
        body: { messages: [{ role: 'user', content: 'next day' }] },
      });
      expect(other.status).toBe(200);
      await deliver(body, 'd-x');
      await app.background.drain();
      // The session shows the turn: a reply after the delivery's message.
      expect(chat.requests).toHaveLength(1);
      expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(await marker('d-x')).toBe('done');
    } finally {
      vi.useRealTimers();
    }
  });

  it('when the stored mark cannot be written the turn still runs, and the delivery is done (review)', async () => {
    const { chat, app, deliver, messages, marker } = await setup([{ reply: 'replied anyway' }], {
      put: async (key, body, real) => {
        if (isMarker(key) && stateIn(body) === 'stored')
          throw new StorageUnavailableError('injected: the stored PUT got no answer');
        return real();
      },
    });
    await deliver(JSON.stringify({ type: 'deploy.failed', service: 'web' }), 'd-s');
    await app.background.drain();
    expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(1);
    expect(await marker('d-s')).toBe('done');
    expect(app.logs.find('webhook marker not marked stored', 'warn')).toHaveLength(1);
  });

  it('two attempts that mark the delivery stored at once: the one that runs the turn marks it done (review)', async () => {
    let storedPuts = 0;
    let secondWritten!: () => void;
    const secondDone = new Promise<void>((r) => (secondWritten = r));
    let leaseTaken!: () => void;
    const leaseSeen = new Promise<void>((r) => (leaseTaken = r));
    let leasePuts = 0;
    const { chat, app, deliver, messages, marker } = await setup(
      [{ reply: 'the only reply', delayMs: 1500 }],
      {
        env: { SATCHEL_CONTINUE_WAIT_MS: '200' },
        put: async (key, body, real) => {
          if (key.includes('/lease/')) {
            const r = await real();
            if (++leasePuts === 1) leaseTaken();
            return r;
          }
          if (isMarker(key) && stateIn(body) === 'stored') {
            if (++storedPuts === 1) {
              // The first attempt's `stored` PUT lands after the second's: it is refused (412).
              await secondDone;
              return real();
            }
            const r = await real();
            secondWritten();
            // The second attempt is slow to go on: the first takes the lease and runs the turn.
            await leaseSeen;
            return r;
          }
          return real();
        },
      },
    );
    const body = JSON.stringify({ type: 'deploy.failed', service: 'web' });
    await Promise.all([deliver(body, 'd-race'), deliver(body, 'd-race')]);
    await app.background.drain();
    expect(storedPuts).toBe(2);
    expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(1);
    expect(await marker('d-race')).toBe('done');
  });

  it('a stored delivery whose fixed-id session was deleted and created again runs no turn there (review)', async () => {
    const { chat, app, deliver, messages, marker } = await setup([
      { status: 500 },
      { reply: 'answer to d-new' },
      { reply: 'an answer to a message this session never had' },
    ]);
    const oldBody = JSON.stringify({ type: 'deploy.failed', service: 'old' });
    await deliver(oldBody, 'd-old');
    await app.background.drain();
    expect(await marker('d-old')).toBe('stored');
    expect((await app.call('DELETE', '/v1/sessions/ops-log')).status).toBe(204);
    await app.background.drain();
    await deliver(JSON.stringify({ type: 'deploy.ok', service: 'new' }), 'd-new');
    await app.background.drain();
    expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
    await deliver(oldBody, 'd-old');
    await app.background.drain();
    expect(chat.requests).toHaveLength(2);
    expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(await marker('d-old')).toBe('done');
  });

  it('a stored delivery whose session was deleted since is done: nothing is created again', async () => {
    const { chat, app, deliver } = await setup([{ status: 500 }]);
    const body = JSON.stringify({ type: 'deploy.failed', service: 'db' });
    await deliver(body, 'd-gone');
    await app.background.drain();
    expect((await app.call('DELETE', '/v1/sessions/ops-log')).status).toBe(204);
    await app.background.drain();
    await deliver(body, 'd-gone');
    await app.background.drain();
    expect((await app.call('GET', '/v1/sessions/ops-log')).status).toBe(404);
    expect(chat.requests).toHaveLength(1);
    const markerKey = keys.hookDelivery('alice', 'ops', await sha256Hex('d-gone'));
    expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('done');
  });
});
