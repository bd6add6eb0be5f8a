import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { utf8 } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s59g. On Lambda (the app built as functions/lambda.ts builds it: `shortLived`,
// `answersAfterBackground`) a webhook is answered after its work, and the answer must say what happened.
// Until fixed, the route kept only "failed" and "may have been stored" of a failure:
// - finding 1: a delivery that can never be stored (the size cap refuses its message, the target's system
//   prompt filling SATCHEL_MAX_SESSION_BYTES; or the target's object is corrupt) was answered 503 "storage
//   is unreachable; try again shortly" with Retry-After, and logged as `storage unavailable`;
// - finding 2: a delivery whose message was stored but whose model turn failed answered the same 202
//   `{"accepted": true}` as one that got its reply, so nothing told the sender to redeliver for the turn.
const SECRET = 'ops-hook-secret-s59g-0123456789';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };

type App = Awaited<ReturnType<typeof makeApp>>;
const lambdaApp = (env: Record<string, string>) =>
  makeApp({
    shortLived: true,
    answersAfterBackground: true,
    env: { SATCHEL_HOOKS: JSON.stringify(HOOKS), ...env },
  });
const deliver = (app: App, id: string) =>
  app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, '{"event":"deploy","ok":false}', id));
const messages = async (app: App): Promise<{ role: string; content: string }[]> =>
  (await app.call('GET', '/v1/sessions/ops-log')).json.messages;

describe('Lambda webhook that can never be stored (review s59g, finding 1)', () => {
  it('answers 413 naming the cap when the target session has no room, again on redelivery', async () => {
    const app = await lambdaApp({ SATCHEL_MAX_SESSION_BYTES: '4096' });
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        id: 'ops-log',
        task: 't',
        messages: [{ role: 'system', content: 'rules '.repeat(578) }],
      },
    });
    expect(created.status).toBe(201);
    for (const attempt of [1, 2]) {
      const res = await deliver(app, 'full-1');
      // Before: 503 "storage is unreachable; try again shortly", Retry-After: 2 (both times).
      expect(res.status, `attempt ${attempt}: ${res.text}`).toBe(413);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('retry-after')).toBeNull();
      expect(res.json.detail).toMatch(/SATCHEL_MAX_SESSION_BYTES/);
      expect(res.json.detail).toMatch(/session ops-log/);
      expect(res.json.detail).toMatch(/nothing was stored/);
      expect(res.json.detail).toMatch(/redelivery is refused too/);
    }
    expect((await messages(app)).map((m) => m.role)).toEqual(['system']);
    // Storage answered every request: the log does not blame it.
    expect(app.logs.find('storage unavailable')).toEqual([]);
    expect(app.logs.find('webhook delivery failed', 'warn')).toHaveLength(2);
  });

  it('answers the problem a GET of the session gives when its object is corrupt', async () => {
    const app = await lambdaApp({});
    expect(
      (await app.call('POST', '/v1/sessions', { body: { id: 'ops-log', task: 't' } })).status,
    ).toBe(201);
    await app.objects.put(keys.session('alice', 'ops-log'), utf8('{"half a file'));
    const read = await app.call('GET', '/v1/sessions/ops-log');
    expect(read.status).toBe(500);
    const res = await deliver(app, 'corrupt-1');
    // Before: 503 "storage is unreachable; try again shortly", Retry-After: 2.
    expect(res.status, res.text).toBe(read.status);
    expect(res.json.title).toBe(read.json.title);
    expect(res.json.detail).toMatch(/nothing was stored/);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(app.logs.find('storage unavailable')).toEqual([]);
  });
});

describe('Lambda webhook whose model turn failed (review s59g, finding 2)', () => {
  let chat: ChatServer;
  beforeAll(async () => {
    chat = await startChatServer();
  });
  afterAll(() => chat.close());

  it('answers 502 that the message is stored; the same delivery again runs the turn once', async () => {
    const app = await lambdaApp({ SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' });
    chat.script({ status: 500, body: { error: { message: 'model down' } } });
    const res = await deliver(app, 'turn-1');
    // Before: 202 {"accepted":true,"delivery":"turn-1","session":"ops-log"}, as for a delivery with its reply.
    expect(res.status, res.text).toBe(502);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.json.detail).toMatch(/message is stored in session ops-log/);
    expect(res.json.detail).toMatch(/no reply was stored/);
    expect(res.json.detail).toMatch(/same delivery id/);
    expect(res.json.detail).not.toMatch(/Idempotency-Key/); // a webhook sender sends none
    expect((await messages(app)).map((m) => m.role)).toEqual(['user']);

    chat.script({ reply: 'looked at it' });
    const again = await deliver(app, 'turn-1');
    expect(again.status, again.text).toBe(202);
    expect(again.json).toEqual({ accepted: true, delivery: 'turn-1', session: 'ops-log' });
    const stored = await messages(app);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']); // the message once, its turn once
    expect(stored[1]!.content).toBe('looked at it');
    // A third delivery is a no-op: no model request, nothing stored.
    expect((await deliver(app, 'turn-1')).status).toBe(202);
    expect(chat.requests).toHaveLength(2);
    expect(await messages(app)).toEqual(stored);
  });
});
