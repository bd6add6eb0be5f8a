// docs/adapters.md: "When the server refuses that first append (a 4xx ...), the adapter deletes the empty
// session it made". Not when the create landed but its answer was lost: the retry met 409
// (afterLostAttempt), appendOrCreate took the session for another writer's, and the empty session stayed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { SatchelApiError, SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer({ env: { SATCHEL_MAX_SESSION_BYTES: '4096' } });
});
afterAll(() => server?.close());

/** A fetch whose first create lands but whose answer is lost on the way back. */
function losingFirstCreate(): { fetch: typeof fetch; lost: () => boolean } {
  let lostOnce = false;
  const losing: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!lostOnce && init?.method === 'POST' && String(input).endsWith('/v1/sessions')) {
      lostOnce = true;
      await res.arrayBuffer();
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      });
    }
    return res;
  };
  return { fetch: losing, lost: () => lostOnce };
}

function clientOn(f: typeof fetch): SatchelClient {
  return new SatchelClient({ url: server.url, sleep: async () => undefined, fetch: f });
}

async function status(client: SatchelClient, id: string): Promise<number | false> {
  const left = await client.get(id).catch((e: unknown) => e);
  return SatchelApiError.is(left) ? left.status : false;
}

describe('an adapter whose create answer was lost, then whose first append is refused', () => {
  /** An AI SDK save of one message over the cap to `id`, its create's answer lost: the session after it. */
  async function refusedFirstSave(id: string): Promise<number | false> {
    const { fetch: losing, lost } = losingFirstCreate();
    const client = clientOn(losing);
    const refused = await saveUIMessages(client, id, [
      { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(6_000) }] },
    ]).catch((e: unknown) => e);
    expect(lost()).toBe(true);
    expect(SatchelApiError.is(refused) && refused.status).toBe(413);
    return status(client, id);
  }

  it('AI SDK: the empty session it made is deleted as when the create was answered', async () => {
    expect(await refusedFirstSave('lost-create-refused')).toBe(404);
  });

  it('the same for an id that held a session deleted before (the new one starts above revision 1)', async () => {
    const id = 'lost-create-reused';
    const plain = new SatchelClient({ url: server.url });
    await plain.create({ id, task: 'before' });
    await plain.append(id, { messages: [{ role: 'user', content: 'earlier' }] });
    await plain.delete(id);
    expect(await refusedFirstSave(id)).toBe(404);
  });

  it('Agents SDK: the same', async () => {
    const { fetch: losing, lost } = losingFirstCreate();
    const client = clientOn(losing);
    const session = new SatchelSession({ client, sessionId: 'lost-create-agents' });
    const refused = await session
      .addItems([{ role: 'user', content: 'x'.repeat(6_000) }])
      .catch((e: unknown) => e);
    expect(lost()).toBe(true);
    expect(SatchelApiError.is(refused) && refused.status).toBe(413);
    expect(await status(client, 'lost-create-agents')).toBe(404);
  });

  it('a session another writer has added to since is kept (the delete carries If-Match)', async () => {
    const other = new SatchelClient({ url: server.url });
    const id = 'lost-create-joined';
    const { fetch: losing, lost } = losingFirstCreate();
    // Another writer's append lands just before the adapter's delete.
    const client = clientOn(async (input, init) => {
      if (init?.method === 'DELETE')
        await other.append(id, { messages: [{ role: 'user', content: 'theirs' }] });
      return losing(input, init);
    });
    const refused = await saveUIMessages(client, id, [
      { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(6_000) }] },
    ]).catch((e: unknown) => e);
    expect(lost()).toBe(true);
    expect(SatchelApiError.is(refused) && refused.status).toBe(413);
    expect((await other.get(id)).session.messages).toHaveLength(1);
  });
});
