// Secrets the caller gives an adapter (`secrets`, sent as Satchel-Secrets) are not sent with the create that
// appendOrCreate makes first (lib/adapters/append.ts:40): the task (the AI SDK's is the first user text) and
// metadata are stored in clear. The append that follows rewrites the object with them redacted; when that
// append does not get through (a dropped connection, a 503), the session keeps them in clear.
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { SatchelClient } from '../../lib/client/index.js';
import { holders } from '../support/holders.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server?.close());

/** A client whose connection drops on every append after the first (its 404 and the create get through). */
function droppingAfterCreate(): SatchelClient {
  let appends = 0;
  return new SatchelClient({
    url: server.url,
    retry: { retries: 0 },
    fetch: (input, init) =>
      String(input).endsWith('/messages') && ++appends > 1
        ? Promise.reject(new TypeError('fetch failed'))
        : fetch(input, init),
  });
}

describe('secrets given to an adapter, when the append after its create does not get through', () => {
  it('AI SDK: the created session holds no secret (task = the first user text)', async () => {
    const secret = 'Vb5grapefruitQ';
    const messages: UIMessage[] = [
      {
        id: 'u1',
        role: 'user',
        parts: [{ type: 'text', text: `the code name is ${secret} today` }],
      },
    ];
    const failed = await saveUIMessages(droppingAfterCreate(), 'chat-secret-dropped', messages, {
      secrets: [secret],
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error); // the save failed, as it should
    await server.drain(); // the records written after the create, too
    expect(holders(server.dir, [secret])).toEqual([]);
  });

  it('Agents SDK: the created session holds no secret (task and metadata from the options)', async () => {
    const secret = 'Pw7marmaladeX';
    const session = new SatchelSession({
      client: droppingAfterCreate(),
      sessionId: 'agents-secret-dropped',
      task: `support for account ${secret}`,
      metadata: { account: secret },
      secrets: [secret],
    });
    const failed = await session
      .addItems([{ role: 'user', content: 'hello' }])
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    await server.drain(); // the records written after the create, too
    expect(holders(server.dir, [secret])).toEqual([]);
  });
});
