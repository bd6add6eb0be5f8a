// saveUIMessages looked for a continuation only in the newest *known* message. When another device added
// a turn before this device sent its tool result, the continued message (the last of `messages`, as
// toUIMessageStreamResponse continues it) was not the newest: the save answered { appended: 0 } and the
// reply the user saw was stored nowhere.
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

const u = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const a = (id: string, text: string): UIMessage => ({
  id,
  role: 'assistant',
  parts: [{ type: 'text', text }],
});
const asking: UIMessage = {
  id: 'a1',
  role: 'assistant',
  parts: [{ type: 'tool-getLocation', toolCallId: 't1', state: 'input-available', input: {} }],
};
const continued: UIMessage = {
  id: 'a1',
  role: 'assistant',
  parts: [
    {
      type: 'tool-getLocation',
      toolCallId: 't1',
      state: 'output-available',
      input: {},
      output: 'Oslo',
    },
    { type: 'text', text: 'You are in Oslo.' },
  ],
};

describe('AI SDK: an assistant message continued on one device after another device added a turn', () => {
  it('the continued message (tool output, final text) is stored in its place, and the answer says so', async () => {
    const id = 'two-devices-continued';
    // Device A: turn 1 ends with a client-side tool call.
    await saveUIMessages(client, id, [u('u1', 'Where am I?'), asking], { known: [] });
    // Device B: the user asks something else there (the route of docs/adapters.md).
    const historyB = await loadUIMessages(client, id);
    const turnB = [...historyB, u('u2', 'And the time?'), a('a2', '12:00')];
    await saveUIMessages(client, id, turnB, { known: historyB });
    // Device A: the tool result comes back; the route loads the history and streams the continuation of
    // a1 (moved to the end of originalMessages); onFinish gets it under its id with the tool output.
    const history = await loadUIMessages(client, id);
    const messages = [...history.filter((m) => m.id !== 'a1'), continued];
    expect(await saveUIMessages(client, id, messages, { known: history })).toEqual({
      appended: 0,
      replaced: 1,
    });
    expect(await loadUIMessages(client, id)).toEqual([
      u('u1', 'Where am I?'),
      continued,
      u('u2', 'And the time?'),
      a('a2', '12:00'),
    ]);
    // The same onFinish again (or a retry with the stale history) writes nothing more.
    expect(await saveUIMessages(client, id, messages, { known: history })).toEqual({ appended: 0 });
  });

  it('a change to an older known message, which a save cannot store, is refused and nothing written', async () => {
    const id = 'two-devices-older-changed';
    await saveUIMessages(client, id, [u('u1', 'Where am I?'), asking, u('u2', 'Hello?')], {
      known: [],
    });
    const history = await loadUIMessages(client, id);
    // a1 continued, but u2 (known, unchanged) after it: a1 is not the newest known message.
    const messages = [u('u1', 'Where am I?'), continued, u('u2', 'Hello?'), a('a3', 'Hi')];
    await expect(saveUIMessages(client, id, messages, { known: history })).rejects.toBeInstanceOf(
      TypeError,
    );
    expect(await loadUIMessages(client, id)).toEqual(history);
  });
});
