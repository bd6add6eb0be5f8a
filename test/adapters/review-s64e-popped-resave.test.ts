// Review s64e, 5: saving a stale copy of an AI SDK chat after another device popped its newest turn
// answered `{ appended: 2 }` and stored nothing: the append (same chat id, same new ids: the same key
// within 24 h) was a replay of the save that had stored them. Now the answer says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

const msg = (id: string, role: 'user' | 'assistant', text: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text }],
});

describe('review s64e: a stale copy saved after another device popped', () => {
  it('answers appended: 0, replayed: true, and the popped messages stay removed', async () => {
    const client = new SatchelClient({ url: server.url });
    const chat = [msg('u1', 'user', 'first question'), msg('a1', 'assistant', 'first answer')];
    const browser = [
      ...chat,
      msg('u2', 'user', 'second question'),
      msg('a2', 'assistant', 'second answer'),
    ];
    expect(await saveUIMessages(client, 'c-s64e', chat)).toEqual({ appended: 2 });
    expect(await saveUIMessages(client, 'c-s64e', browser)).toEqual({ appended: 2 });
    await client.pop('c-s64e', 2); // another device
    expect(await saveUIMessages(client, 'c-s64e', browser)).toEqual({
      appended: 0,
      replayed: true,
    });
    expect((await loadUIMessages(client, 'c-s64e')).map((m) => m.id)).toEqual(['u1', 'a1']);
    // A new turn after the stale one is stored (a new key), after the newest stored message.
    const next = [...browser, msg('u3', 'user', 'third question')];
    expect(await saveUIMessages(client, 'c-s64e', next)).toEqual({ appended: 3 });
    expect((await loadUIMessages(client, 'c-s64e')).map((m) => m.id)).toEqual([
      'u1',
      'a1',
      'u2',
      'a2',
      'u3',
    ]);
  });

  it('an onFinish that runs twice: the second save answers the replay, one copy stored', async () => {
    const client = new SatchelClient({ url: server.url });
    const history = [msg('u1', 'user', 'q')];
    await saveUIMessages(client, 'c-s64e-2', history);
    const done = [...history, msg('a1', 'assistant', 'a')];
    expect(await saveUIMessages(client, 'c-s64e-2', done, { known: history })).toEqual({
      appended: 1,
    });
    expect(await saveUIMessages(client, 'c-s64e-2', done, { known: history })).toEqual({
      appended: 0,
      replayed: true,
    });
    expect((await loadUIMessages(client, 'c-s64e-2')).map((m) => m.id)).toEqual(['u1', 'a1']);
  });
});
