import { afterEach, describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s59k, finding 2 (fixed 2026-12-06 in lib/hooks/hooks.ts: noTurnOwed, the lease-busy detail). A
// delivery's message is stored, then (while the model runs) a pop removes it:
// appendTurn refuses the reply with a 409 conflict "the message this turn answered was removed ...". No
// turn is owed (docs/design.md webhooks step 1: "trimmed or popped since, owes none"), exactly as for the
// DELETE that 1b4a97f now marks done with a 202. Yet on Lambda the webhook answers 409 (a status its
// OpenAPI does not list, for a delivery whose write landed: "never 409/500/503 for a write that landed"),
// and on Node the delivery is logged `webhook delivery failed` with its marker left `stored`.
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

describe('a delivery whose message is popped while its model turn runs (review s59k)', () => {
  for (const lambda of [true, false])
    it(`${lambda ? 'Lambda' : 'Node'}: no turn is owed, the delivery is done`, async () => {
      let app!: App;
      const popped: number[] = [];
      const popThenReply = async () => {
        popped.push(
          (await app.call('POST', '/v1/sessions/ops-log/pop', { body: { count: 1 } })).status,
        );
        return { reply: REPLY };
      };
      const chat = await startChatServer(popThenReply, { reply: REPLY }, { reply: REPLY });
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
      expect(
        (await app.call('POST', '/v1/sessions', { body: { task: 'ops', id: 'ops-log' } })).status,
      ).toBe(201);
      const send = () => app.call('POST', '/v1/hooks/ci', signedDelivery(SECRET, PAYLOAD, 'd-1'));
      const res = await send();
      await settleAll(app);
      expect(popped).toEqual([200]);
      expect((await app.call('GET', '/v1/sessions/ops-log')).json.messages).toEqual([]);
      expect(chat.requests).toHaveLength(1);
      expect({
        status: res.status,
        failed: app.logs.find('webhook delivery failed', 'warn').length,
        markers: await markers(app),
      }).toEqual({ status: 202, failed: 0, markers: ['done'] });
    }, 60_000);
});
