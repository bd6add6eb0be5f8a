// toUIMessageStreamResponse without generateMessageId gives every assistant message the id "" (ai 6,
// handleUIMessageStreamFinish: `messageId ?? ""`). saveUIMessages took the second turn's reply for a
// continuation of the first ("" was known, its content differed) and overwrote the first reply with it.
// A list with an empty or repeated id is now refused with a TypeError before any request.
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelApiError, SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
const requests: string[] = [];
beforeAll(async () => {
  server = await startSatchelServer();
  client = new SatchelClient({
    url: server.url,
    fetch: (input, init) => {
      requests.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return fetch(input, init);
    },
  });
});
afterAll(() => server?.close());

const text = (id: string, role: 'user' | 'assistant', t: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text: t }],
});

async function exists(id: string): Promise<boolean> {
  return client.get(id).then(
    () => true,
    (e: unknown) => {
      if (SatchelApiError.is(e) && e.status === 404) return false;
      throw e;
    },
  );
}

describe('AI SDK: message ids that cannot tell messages apart', () => {
  it('a reply with id "" (no generateMessageId) is refused before any request, nothing stored', async () => {
    requests.length = 0;
    const first = [text('u1', 'user', 'first question'), text('', 'assistant', 'first answer')];
    const refused = await saveUIMessages(client, 'chat-empty-ids', first).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect(String(refused)).toContain('generateMessageId');
    expect(requests).toEqual([]);
    expect(await exists('chat-empty-ids')).toBe(false);
  });

  it('a second turn with "" again does not overwrite the first reply of a stored chat', async () => {
    const id = 'chat-empty-second';
    await saveUIMessages(client, id, [text('u1', 'user', 'q1'), text('a1', 'assistant', 'a1')]);
    // A chat stored earlier with an empty id (by an older version): its next save is refused too.
    const history = await loadUIMessages(client, id);
    const turn2 = [...history, text('u2', 'user', 'q2'), text('', 'assistant', 'second answer')];
    await expect(saveUIMessages(client, id, turn2, { known: history })).rejects.toBeInstanceOf(
      TypeError,
    );
    expect(await loadUIMessages(client, id)).toEqual(history);
  });

  it('a repeated id is refused the same way', async () => {
    requests.length = 0;
    const twice = [text('m1', 'user', 'q'), text('m1', 'assistant', 'a')];
    await expect(
      saveUIMessages(client, 'chat-repeated-id', twice, { known: [] }),
    ).rejects.toBeInstanceOf(TypeError);
    expect(requests).toEqual([]);
  });

  it('ids from generateMessageId: both turns stored in order', async () => {
    const id = 'chat-own-ids';
    const turn1 = [text('u1', 'user', 'first question'), text('a1', 'assistant', 'first answer')];
    await saveUIMessages(client, id, turn1);
    const history = await loadUIMessages(client, id);
    const turn2 = [
      ...history,
      text('u2', 'user', 'second question'),
      text('a2', 'assistant', 'second answer'),
    ];
    expect(await saveUIMessages(client, id, turn2, { known: history })).toEqual({ appended: 2 });
    expect(await loadUIMessages(client, id)).toEqual(turn2);
  });
});
