// Review s55b, finding 3: two webhook deliveries to one session with a model. d1's turn runs long; d2's
// turn, on another server waiting for the lease, fails (that server stops: since review s61b a delivery's
// turn waits for the lease as long as a lease lives; marker left `stored`); d1's reply then lands after
// both messages. The redelivery of d2 (docs/webhooks.md: "a redelivery after a failed turn
// runs the missing turn") found an assistant message after d2's (d1's reply, which answered d1) and took
// it for d2's turn: d2 was marked done and never got one. Now the redelivery looks for d2's own turn
// record, and counts a reply after the message only once that record could have expired (24 h).
import { afterEach, describe, expect, it } from 'vitest';
import type { ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { openTestS3 } from '../support/s3.js';

const SECRET = 'ops-hook-secret-0123456789';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('review s55b: a webhook redelivery runs the turn it is owed', () => {
  for (const backend of ['local', 'radosgw'] as const)
    it(`${backend}: after another delivery's reply landed behind its message`, async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const said = (req: { body: { messages: { content: string | null }[] } }) =>
        req.body.messages.at(-1)!.content!.includes('second') ? 'd2' : 'd1';
      const chat = await startChatServer(
        async (req) => {
          await gate; // d1's turn holds the lease until d2's turn has given up
          return { reply: `answer to ${said(req)}` };
        },
        (req) => ({ reply: `answer to ${said(req)}` }),
      );
      servers.push(chat);
      const objects: ObjectStore | undefined =
        backend === 'radosgw' ? openTestS3('s55b-owed') : undefined;
      const env = {
        SATCHEL_HOOKS: JSON.stringify(HOOKS),
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'm',
        SATCHEL_CONTINUE_WAIT_MS: '200',
      };
      const app = await makeApp({ ...(objects ? { objects } : {}), env });
      const other = await makeApp({ objects: app.objects, env }); // d2's first delivery lands here
      await app.call('POST', '/v1/sessions', { body: { id: 'ops-log', task: 'ops' } });
      const d1 = JSON.stringify({ type: 'first.event' });
      const d2 = JSON.stringify({ type: 'second.event' });
      const deliver = (body: string, id: string) =>
        app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, id));
      expect((await deliver(d1, 'd1')).status).toBe(202);
      await expect.poll(() => chat.requests.length).toBe(1);
      const first = await other.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, d2, 'd2'));
      expect(first.status).toBe(202);
      await expect.poll(() => chat.requests.length).toBe(1); // d2's turn waits for the lease
      other.continuer.stopTurns(); // its server stops: the wait ends, the turn is owed
      await expect.poll(() => other.logs.find('webhook delivery failed', 'warn').length).toBe(1);
      release();
      await app.background.drain();
      const roles = (await app.call('GET', '/v1/sessions/ops-log')).json.messages.map(
        (m: { role: string }) => m.role,
      );
      expect(roles).toEqual(['user', 'user', 'assistant']); // d1, d2, d1's reply
      // The redelivery of d2 runs its turn (before the fix: marked done, the model not called).
      expect((await deliver(d2, 'd2')).status).toBe(202);
      await app.background.drain();
      expect(chat.requests).toHaveLength(2);
      const messages = (await app.call('GET', '/v1/sessions/ops-log')).json.messages;
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'answer to d2' });
      // And once more: its turn is stored, so nothing runs or is stored again.
      expect((await deliver(d2, 'd2')).status).toBe(202);
      await app.background.drain();
      expect(chat.requests).toHaveLength(2);
      expect((await app.call('GET', '/v1/sessions/ops-log')).json.messages).toHaveLength(4);
    });
});
