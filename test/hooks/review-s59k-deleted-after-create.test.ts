import { afterEach, describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s59k, finding 1 (fixed 2026-12-06 in lib/hooks/hooks.ts: noTurnOwed, the lease-busy detail). Commit
// 1b4a97f made deliverOnce take a 404 after this attempt stored the message
// for a DELETE during the turn: the delivery is done. But only for its first `once()`: a fixed-id hook whose
// session does not exist yet takes the other branch (404, createIfMissing, `await once()`), and that second
// call is not guarded. A DELETE during that turn (the common first delivery to a fixed id) makes the
// 404 escape: on Lambda the webhook answers 404 (the contract: "An unknown hook name is 404"; route:
// "No webhook with this name."), on Node the delivery is logged as failed and its marker left `stored`.
const SECRET = 'ops-hook-secret-s59k-0123456789';
const PAYLOAD = JSON.stringify({ type: 'deploy.failed', service: 'quokkaservice' });
const REPLY = 'wombatreply: looking into the deploy';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type App = Awaited<ReturnType<typeof makeApp>>;

async function markers(app: App): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(app.objects, 'ns/alice/'))
    if (k.includes('/hooks/')) {
      const got = await app.objects.get(k);
      out.push(JSON.parse(text(got!.body)).state);
    }
  return out;
}

describe('fixed-id hook, first delivery creates the session, DELETE during its turn (review s59k)', () => {
  for (const lambda of [true, false])
    it(`${lambda ? 'Lambda' : 'Node'}: the delivery is done, answered and logged as such`, async () => {
      let app!: App;
      const deleted: number[] = [];
      const deleteThenReply = async () => {
        deleted.push((await app.call('DELETE', '/v1/sessions/ops-log')).status);
        return { reply: REPLY };
      };
      const chat = await startChatServer(deleteThenReply, { reply: REPLY }, { reply: REPLY });
      servers.push(chat);
      app = await makeApp({
        ...(lambda ? { shortLived: true, answersAfterBackground: true } : {}),
        env: {
          SATCHEL_HOOKS: JSON.stringify({
            ci: { secret: SECRET, namespace: 'alice', session: 'ops-log' },
          }),
          SATCHEL_MODEL_URL: chat.url,
          SATCHEL_MODEL: 'test-model',
        },
      });
      // No session ops-log yet: the delivery creates it.
      const send = () => app.call('POST', '/v1/hooks/ci', signedDelivery(SECRET, PAYLOAD, 'd-1'));
      const res = await send();
      await settleAll(app);
      expect(deleted).toEqual([204]);
      expect((await app.call('GET', '/v1/sessions/ops-log')).status).toBe(404);
      expect(chat.requests).toHaveLength(1);
      // As the s59j fix does for a session that existed before: done, 202, nothing logged as failed.
      expect({
        status: res.status,
        detail: res.json?.detail,
        failed: app.logs.find('webhook delivery failed', 'warn').length,
        markers: await markers(app),
      }).toEqual({ status: 202, detail: undefined, failed: 0, markers: ['done'] });
    }, 60_000);
});
