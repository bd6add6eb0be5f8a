import { afterEach, describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s59m (fixed 2026-12-06: appendTurn tests every slot; a "removed" 409 after the message was stored runs
// the turn again as a redelivery does). A write whose `Satchel-Secrets` redacts text already stored
// (docs/api.md: "a PUT or a pop
// does" read the stored messages for them) changes the delivery's stored message while the model runs; it
// does not remove it. appendTurn compares the question by content and throws its "removed ... (a pop,
// trim or replace)" 409, which noTurnOwed (c5844c2) takes for "no turn owed": the delivery is done, 202,
// marker `done`, and its turn never runs. Yet the session holds the message, unanswered, and the
// receiver's own test of that (continue.ts heldMessage, by the wrapper's opening tag) says a turn is owed:
// before c5844c2 the failure kept the marker `stored` and a redelivery ran the turn.
const SECRET = 'ops-hook-secret-s59m-0123456789';
const PAYLOAD = JSON.stringify({
  type: 'deploy.failed',
  service: 'quokkaservice',
  build: 'b-77812',
});
const REPLY = 'wombatreply: looking into the deploy';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function markers(app: Awaited<ReturnType<typeof makeApp>>): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(app.objects, 'ns/alice/'))
    if (k.includes('/hooks/')) {
      const got = await app.objects.get(k);
      out.push(JSON.parse(text(got!.body)).state);
    }
  return out;
}

describe('a delivery whose stored message a Satchel-Secrets pop redacts while its turn runs (review s59m)', () => {
  for (const lambda of [true, false])
    it(`${lambda ? 'Lambda' : 'Node'}: the message is held, so the delivery is not done without its turn`, async () => {
      let app!: Awaited<ReturnType<typeof makeApp>>;
      const writes: number[] = [];
      const otherClient = async () => {
        // Another device appends a note and pops it again, declaring a value as secret.
        writes.push(
          (
            await app.call('POST', '/v1/sessions/ops-log/messages', {
              body: { messages: [{ role: 'user', content: 'scratch note' }] },
            })
          ).status,
        );
        writes.push(
          (
            await app.call('POST', '/v1/sessions/ops-log/pop', {
              body: { count: 1 },
              headers: { 'satchel-secrets': btoa(JSON.stringify(['b-77812'])) },
            })
          ).status,
        );
        return { reply: REPLY };
      };
      const chat = await startChatServer(otherClient, { reply: REPLY }, { reply: REPLY });
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
      expect(writes).toEqual([200, 200]);
      const messages = (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
        role: string;
        content: string;
      }[];
      // The delivery's message is held (redacted), unanswered.
      expect(messages.map((m) => m.role)[0]).toBe('user');
      expect(messages[0]!.content).toContain('quokkaservice');
      expect(messages[0]!.content).not.toContain('b-77812'); // the pop redacted it
      const replied = messages.some((m) => m.role === 'assistant');
      const state = { status: res.status, markers: await markers(app), replied };
      if (!replied) expect(state.markers).not.toEqual(['done']);
      // A redelivery then runs the owed turn.
      await send();
      await settleAll(app);
      const after = (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
        role: string;
      }[];
      expect(after.map((m) => m.role)).toEqual(['user', 'assistant']);
    }, 60_000);
});
