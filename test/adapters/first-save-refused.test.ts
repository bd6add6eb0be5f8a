import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { SatchelApiError, SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

// A first save the server refuses (413: over the session cap) leaves no empty session behind: the adapter
// made it only to hold that save. A session another writer has changed since is kept.
describe('an adapter whose first save is refused', () => {
  let server: RunningServer;
  let client: SatchelClient;
  const tooLarge = 'x'.repeat(6_000);

  beforeAll(async () => {
    server = await startSatchelServer({ env: { SATCHEL_MAX_SESSION_BYTES: '4096' } });
    client = new SatchelClient({ url: server.url });
  });
  afterAll(() => server?.close());

  async function exists(id: string): Promise<boolean> {
    try {
      await client.get(id);
      return true;
    } catch (err) {
      if (SatchelApiError.is(err) && err.status === 404) return false;
      throw err;
    }
  }

  it('Agents SDK: addItems answers 413 and the session it made is gone', async () => {
    const session = new SatchelSession({ client });
    const id = await session.getSessionId();
    const refused = await session
      .addItems([{ role: 'user', content: tooLarge }])
      .catch((e: unknown) => e);
    expect(SatchelApiError.is(refused) && refused.status).toBe(413);
    expect(await exists(id)).toBe(false);
    expect((await client.list()).sessions.map((s) => s.id)).not.toContain(id);
  });

  it('AI SDK: saveUIMessages answers 413 and the session it made is gone', async () => {
    const id = 'refused-chat';
    const messages = [
      { id: 'm1', role: 'user' as const, parts: [{ type: 'text' as const, text: tooLarge }] },
    ];
    const refused = await saveUIMessages(client, id, messages).catch((e: unknown) => e);
    expect(SatchelApiError.is(refused) && refused.status).toBe(413);
    expect(await exists(id)).toBe(false);
  });

  it('a delete based on an older revision keeps the session (what the adapters rely on)', async () => {
    const made = await client.create({ id: 'changed-since', task: 't' });
    await client.append('changed-since', { messages: [{ role: 'user', content: 'hello' }] });
    const kept = await client
      .delete('changed-since', { ifMatch: made.etag })
      .catch((e: unknown) => e);
    expect(SatchelApiError.is(kept) && kept.status).toBe(412);
    expect(await exists('changed-since')).toBe(true);
  });
});
