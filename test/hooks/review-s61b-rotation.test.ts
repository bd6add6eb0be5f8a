import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { text, utf8 } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { startChatServer, type Step } from '../support/chat-server.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s61b, finding 3: the marker's digest is an HMAC of the body under a key made from the hook's
// secret. After the secret was rotated (in the sender and SATCHEL_HOOKS), a redelivery of an earlier
// delivery, the same body byte for byte, was refused as "another payload": an owed model turn never ran,
// a `done` one was logged refused, and a `new` hook (or Lambda) answered 422.

const OLD = 'old-hook-secret-0123456789';
const NEW = 'new-hook-secret-9876543210';
const BODY = JSON.stringify({ type: 'deploy.failed', service: 'api' });
const OTHER = JSON.stringify({ type: 'deploy.failed', service: 'billing' });

/** One bucket (a local folder) and one model, and an app over them per secret (before and after). */
async function rotation(first: Step, session = 'ops-log', lambda = false) {
  const chat = await startChatServer(first, { reply: 'looking into the deploy' });
  onTestFinished(() => chat.close());
  const store = new LocalStore(mkdtempSync(join(tmpdir(), 's61b-rotation-')));
  const app = (secret: string) =>
    makeApp({
      objects: store,
      ...(lambda ? { shortLived: true, answersAfterBackground: true } : {}),
      env: {
        SATCHEL_HOOKS: JSON.stringify({ ci: { secret, namespace: 'alice', session } }),
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'm',
      },
    });
  return { chat, store, app };
}

type App = Awaited<ReturnType<typeof makeApp>>;

async function deliver(app: App, secret: string, body: string, id: string) {
  const answer = await app.call('POST', '/v1/hooks/ci', signedDelivery(secret, body, id));
  await settleAll(app);
  return answer;
}

const roles = async (app: App, id: string) =>
  (await app.call('GET', `/v1/sessions/${id}`)).json.messages.map((m: { role: string }) => m.role);

async function markerOf(store: LocalStore, id: string) {
  const got = await store.get(keys.hookDelivery('alice', 'ci', await sha256Hex(id)));
  return JSON.parse(text(got!.body)) as Record<string, unknown>;
}

describe('a redelivery after the hook secret is rotated (review s61b, finding 3)', () => {
  it('runs the turn a delivery owes (fixed session)', async () => {
    const { chat, store, app } = await rotation({ status: 500 });
    const before = await app(OLD);
    await before.call('POST', '/v1/sessions', { body: { task: 'ops', id: 'ops-log' } });
    expect((await deliver(before, OLD, BODY, 'deploy-42')).status).toBe(202);
    expect((await markerOf(store, 'deploy-42')).state).toBe('stored');

    const after = await app(NEW);
    expect((await deliver(after, NEW, BODY, 'deploy-42')).status).toBe(202);
    expect(after.logs.find('webhook delivery refused', 'warn')).toEqual([]);
    expect(after.logs.find('webhook delivery failed', 'warn')).toEqual([]);
    expect(await roles(after, 'ops-log')).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(2);
    expect((await markerOf(store, 'deploy-42')).state).toBe('done');
    // Once done, a redelivery (under either secret) is a no-op.
    expect((await deliver(after, NEW, BODY, 'deploy-42')).status).toBe(202);
    expect(after.logs.find('webhook delivery refused', 'warn')).toEqual([]);
    expect(await roles(after, 'ops-log')).toEqual(['user', 'assistant']);
  });

  it('a `new` hook answers 202 naming the delivery session, and runs the owed turn there', async () => {
    const { chat, store, app } = await rotation({ status: 500 }, 'new');
    const before = await app(OLD);
    const first = await deliver(before, OLD, BODY, 'deploy-43');
    expect(first.status).toBe(202);
    const after = await app(NEW);
    const again = await deliver(after, NEW, BODY, 'deploy-43');
    expect(again.status).toBe(202);
    expect(again.json.session).toBe(first.json.session);
    expect(await roles(after, first.json.session)).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(2);
    expect((await markerOf(store, 'deploy-43')).state).toBe('done');
  });

  it('Lambda: the redelivery of a delivery done is a 202 no-op, not a 422', async () => {
    const { chat, app } = await rotation({ reply: 'first turn' }, 'new', true);
    const before = await app(OLD);
    const first = await deliver(before, OLD, BODY, 'deploy-44');
    expect(first.status).toBe(202);
    const after = await app(NEW);
    const again = await deliver(after, NEW, BODY, 'deploy-44');
    expect(again.status).toBe(202);
    expect(after.logs.find('webhook delivered', 'info')).toEqual([
      expect.objectContaining({ duplicate: true }),
    ]);
    expect(await roles(after, first.json.session)).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(1);
  });

  it('another payload under the id is still refused, saying the secret changed and it cannot be matched', async () => {
    const { chat, app } = await rotation({ reply: 'first turn' }, 'new');
    const before = await app(OLD);
    const first = await deliver(before, OLD, BODY, 'deploy-45');
    const after = await app(NEW);
    const other = await deliver(after, NEW, OTHER, 'deploy-45');
    expect(other.status).toBe(422);
    expect(other.json.detail).toMatch(
      /another payload, or under another secret of the hook and cannot be matched.*new delivery id/,
    );
    const [refused] = after.logs.find('webhook delivery refused', 'warn') as unknown as {
      error: string;
    }[];
    expect(refused).toMatchObject({ hook: 'ci', delivery: 'deploy-45' });
    expect(refused!.error).toMatch(/another secret of the hook and cannot be matched/);
    expect(await roles(after, first.json.session)).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(1);
  });

  it('under the same secret, another payload is refused as before (the answer names both causes)', async () => {
    const { app } = await rotation({ reply: 'first turn' }, 'new');
    const one = await app(OLD);
    await deliver(one, OLD, BODY, 'deploy-46');
    const other = await deliver(one, OLD, OTHER, 'deploy-46');
    expect(other.status).toBe(422);
    expect(other.json.detail).toMatch(
      /was already received with another payload, or under another/,
    );
    expect(other.json.detail).toMatch(/and nothing was stored/);
  });

  it('a marker without a key mark (review s61b wrote one until s61g): matched alike', async () => {
    const { chat, store, app } = await rotation({ status: 500 });
    const before = await app(OLD);
    await before.call('POST', '/v1/sessions', { body: { task: 'ops', id: 'ops-log' } });
    await deliver(before, OLD, BODY, 'deploy-47');
    const key = keys.hookDelivery('alice', 'ci', await sha256Hex('deploy-47'));
    const { key: _mark, ...old } = await markerOf(store, 'deploy-47');
    await store.put(key, utf8(JSON.stringify(old)), { contentType: 'application/json' });

    const after = await app(NEW);
    await deliver(after, NEW, OTHER, 'deploy-47');
    const [refused] = after.logs.find('webhook delivery refused', 'warn') as unknown as {
      error: string;
    }[];
    expect(refused!.error).toMatch(/another payload, or under another secret of the hook/);
    expect(await roles(after, 'ops-log')).toEqual(['user']);
    expect((await deliver(after, NEW, BODY, 'deploy-47')).status).toBe(202);
    expect(await roles(after, 'ops-log')).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(2);
  });

  it('no marker holds a mark of the secret (a bucket reader could test guesses at it: review s61g)', async () => {
    const { store, app } = await rotation({ reply: 'first turn' }, 'new');
    await deliver(await app(OLD), OLD, BODY, 'deploy-48');
    expect(Object.keys(await markerOf(store, 'deploy-48')).sort()).toEqual([
      'at',
      'digest',
      'session',
      'state',
    ]);
  });
});
