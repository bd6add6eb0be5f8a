// Review s60e, finding 1: saveUIMessages took every message whose id was not stored for a new one. With
// the AI SDK's usual persistence (onFinish saves the whole chat every turn), each group the size cap had
// dropped came back after the newest turn, out of order, and every save grew, pushing out the newer turns
// the cap would have kept. A trim by another device came back the same way.
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages, UI_MESSAGE_FIELD } from '../../lib/adapters/ai-sdk.js';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
beforeAll(async () => {
  // About 330 bytes a message: the cap drops older turns from the fourth on.
  server = await startSatchelServer({ env: { SATCHEL_MAX_SESSION_BYTES: '6000' } });
  client = new SatchelClient({ url: server.url });
});
afterAll(() => server?.close());

const turn = (n: number): UIMessage[] => [
  {
    id: `u${n}`,
    role: 'user',
    parts: [{ type: 'text', text: `question ${n} ` + 'x'.repeat(300) }],
  },
  {
    id: `a${n}`,
    role: 'assistant',
    parts: [{ type: 'text', text: `answer ${n} ` + 'y'.repeat(300) }],
  },
];

/** The stored messages' UIMessage ids, oldest first ("-" for one another writer stored: the marker). */
async function storedIds(id: string): Promise<string[]> {
  const { session } = await client.get(id);
  return session.messages.map(
    (m) => (m[UI_MESSAGE_FIELD] as { id?: string } | undefined)?.id ?? '-',
  );
}

/** Head, the cap's marker once it has dropped something, then the newest turns in sequence. */
function expectCappedInOrder(stored: string[], chat: readonly UIMessage[]) {
  const ids = chat.map((m) => m.id);
  if (stored[1] !== '-') return expect(stored).toEqual(ids);
  expect(stored[0]).toBe('u1');
  const rest = stored.slice(2);
  expect(rest.length).toBeGreaterThanOrEqual(2);
  expect(rest).toEqual(ids.slice(-rest.length));
}

describe('AI SDK: a save of the whole chat after the size cap dropped older turns', () => {
  it('appends only the new turn and keeps the stored chat in order (no known: one GET)', async () => {
    const id = 'capped-whole-chat';
    const chat: UIMessage[] = [];
    for (let n = 1; n <= 8; n++) {
      chat.push(...turn(n));
      expect(await saveUIMessages(client, id, chat)).toEqual({ appended: 2 });
      expectCappedInOrder(await storedIds(id), chat);
    }
    const stored = await storedIds(id);
    expect(stored[1]).toBe('-'); // the cap did drop turns
    expect(stored.slice(-3)).toEqual(['a7', 'u8', 'a8']);
    // The same onFinish again writes nothing.
    expect(await saveUIMessages(client, id, chat)).toEqual({ appended: 0 });
  });

  it('does the same with known: the history loaded, and the browser’s whole copy as messages', async () => {
    const id = 'capped-known-history';
    const chat: UIMessage[] = [];
    for (let n = 1; n <= 8; n++) {
      const history = await loadUIMessages(client, id);
      chat.push(...turn(n));
      expect(await saveUIMessages(client, id, chat, { known: history })).toEqual({ appended: 2 });
      expectCappedInOrder(await storedIds(id), chat);
    }
  });

  it('a trim by another device is not undone by a stale copy’s save', async () => {
    const id = 'trimmed-elsewhere';
    const chat = [...turn(1), ...turn(2)];
    await saveUIMessages(client, id, chat);
    await client.trim(id, 2); // another device keeps the newest turn only
    chat.push(...turn(3));
    expect(await saveUIMessages(client, id, chat)).toEqual({ appended: 2 });
    expect(await storedIds(id)).toEqual(['u2', 'a2', 'u3', 'a3']);
  });
});
