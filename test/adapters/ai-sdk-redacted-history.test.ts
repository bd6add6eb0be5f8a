// Review s52e: saveUIMessages (0e2674d, fixed the same day) threw a TypeError when any known message other than the newest
// "changed under its id". The server redacts secrets as it stores, so a user message holding a secret is
// stored (and loaded) redacted, while the chat on the client (useChat's default request sends every
// message) still holds it in clear. From then on every save of that chat throws: the new turns are stored
// nowhere. Before 0e2674d only the newest known message was compared and the new ones were appended.
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
beforeAll(async () => {
  server = await startSatchelServer();
  client = new SatchelClient({ url: server.url });
});
afterAll(() => server?.close());

const msg = (id: string, role: 'user' | 'assistant', text: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text }],
});

describe('AI SDK: a chat whose earlier user message held a secret', () => {
  it('later turns are still saved (useChat sends every message, the secret in clear)', async () => {
    const id = 'review-s52e-redacted-history';
    const token = 'ghp_' + 'Zk3pQ9xW7vLm2aB4cD6eF8gH0iJ1kL3mN5oP'.slice(0, 36);
    const u1 = msg('u1', 'user', `my GitHub token is ${token}, list my repos`);
    const a1 = msg('a1', 'assistant', 'Here are your repositories.');
    expect(await saveUIMessages(client, id, [u1, a1], { known: [] })).toEqual({ appended: 2 });
    // Stored redacted, as it must be.
    const history = await loadUIMessages(client, id);
    expect(JSON.stringify(history)).not.toContain(token);
    // Turn 2: the client's chat state still holds u1 as typed; the route saves the whole list.
    const u2 = msg('u2', 'user', 'and the private ones?');
    const a2 = msg('a2', 'assistant', 'You have 3 private repositories.');
    const saved = await saveUIMessages(client, id, [u1, a1, u2, a2]).catch((e: unknown) => e);
    expect(saved).toEqual({ appended: 2 });
    expect((await loadUIMessages(client, id)).map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });
});

describe('AI SDK: the newest known message held a secret', () => {
  it('a later save appends, and does not answer that it replaced a message it only re-sent', async () => {
    const id = 'review-s52e-redacted-newest';
    const key = 'sk_live_' + '51HqLyjWDarjtT1zdp7dcZk3pQ9xW7vLm2aB';
    const u1 = msg('u1', 'user', 'set up billing');
    const a1 = msg('a1', 'assistant', `use this key: ${key}`);
    await saveUIMessages(client, id, [u1, a1], { known: [] });
    const history = await loadUIMessages(client, id);
    expect(JSON.stringify(history)).not.toContain(key);
    const u2 = msg('u2', 'user', 'thanks');
    const a2 = msg('a2', 'assistant', 'You are welcome.');
    // Nothing was continued: a1 is as the model wrote it; only the stored copy is redacted.
    expect(await saveUIMessages(client, id, [u1, a1, u2, a2], { known: history })).toEqual({
      appended: 2,
    });
  });
});
