// Review s67i, 1: a message another writer stored (the API, the CLI, a continue) got the UIMessage id
// `satchel-<index>`, its position. A position names another message once anything before it is removed
// (a pop, a trim, the size cap's marker), so a save of a copy loaded earlier overwrote another writer's
// acknowledged message, or threw on every save once the cap had dropped groups.
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let capped: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
  capped = await startSatchelServer({ env: { SATCHEL_MAX_SESSION_BYTES: '6000' } });
});
afterAll(async () => {
  await server?.close();
  await capped?.close();
});

const msg = (id: string, role: 'user' | 'assistant', text: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text }],
});
const texts = (ms: { role: string; content: unknown }[]) =>
  ms.map(
    (m) => `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
  );

describe("review s67i: ids of other writers' messages", () => {
  it.each([
    ['another note stored since', 'NOTE B'],
    ['nothing stored since', undefined],
  ])(
    "a save keeps another writer's message stored where a popped one was, and never restores the popped one (%s)",
    async (_, note) => {
      const client = new SatchelClient({ url: server.url });
      const id = `c-s67i-overwrite-${note ? 'b' : 'none'}`;
      await saveUIMessages(client, id, [msg('u1', 'user', 'hello'), msg('a1', 'assistant', 'hi')]);
      await client.append(id, { messages: [{ role: 'assistant', content: 'NOTE A' }] });
      const browser = await loadUIMessages(client, id);
      expect(browser).toHaveLength(3);
      // Elsewhere: the note is popped, and another writer may store a new one.
      await client.pop(id, 1);
      if (note) await client.append(id, { messages: [{ role: 'assistant', content: note }] });
      // The browser's next turn as useChat sends it (every message; `known` left out).
      const next = [...browser, msg('u3', 'user', 'next'), msg('a3', 'assistant', 'answer')];
      expect(await saveUIMessages(client, id, next)).toEqual({ appended: 2 });
      expect(texts((await client.get(id)).session.messages)).toEqual([
        'user:[{"type":"text","text":"hello"}]',
        'assistant:[{"type":"text","text":"hi"}]',
        ...(note ? [`assistant:${note}`] : []),
        'user:[{"type":"text","text":"next"}]',
        'assistant:[{"type":"text","text":"answer"}]',
      ]);
    },
  );

  it("another writer's message is never taken as continued: changed, it is refused and nothing written", async () => {
    const client = new SatchelClient({ url: server.url });
    const id = 'c-s67i-not-continued';
    await saveUIMessages(client, id, [msg('u1', 'user', 'hello')]);
    await client.append(id, { messages: [{ role: 'assistant', content: 'from the CLI' }] });
    const history = await loadUIMessages(client, id);
    const edited = { ...history[1]!, parts: [{ type: 'text' as const, text: 'edited' }] };
    await expect(
      saveUIMessages(client, id, [history[0]!, edited], { known: history }),
    ).rejects.toThrow(TypeError);
    expect(texts((await client.get(id)).session.messages)).toEqual([
      'user:[{"type":"text","text":"hello"}]',
      'assistant:from the CLI',
    ]);
  });

  it('an id names the message, not its place: the same after a message before it is removed', async () => {
    const client = new SatchelClient({ url: server.url });
    const id = 'c-s67i-same-id';
    await client.create({
      id,
      task: 't',
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'same' },
        { role: 'assistant', content: 'same' },
      ],
    });
    const before = (await loadUIMessages(client, id)).map((m) => m.id);
    expect(new Set(before).size).toBe(3);
    const { session, etag } = await client.get(id);
    await client.replace(
      id,
      { ...session, messages: session.messages.slice(1) },
      { ifMatch: etag },
    );
    expect((await loadUIMessages(client, id)).map((m) => m.id)).toEqual(before.slice(1));
  });

  it('a chat begun by another writer and capped is saved turn after turn', async () => {
    const client = new SatchelClient({ url: capped.url });
    const id = 'c-s67i-capped';
    await client.create({
      id,
      task: 'support',
      messages: [
        { role: 'user', content: 'first question via API' },
        { role: 'assistant', content: 'first answer via API' },
      ],
    });
    let browser = await loadUIMessages(client, id);
    const pad = 'x'.repeat(900);
    let dropped = false;
    for (let turn = 1; turn <= 6; turn++) {
      const next = [
        ...browser,
        msg(`u${turn}`, 'user', `q${turn} ${pad}`),
        msg(`a${turn}`, 'assistant', `r${turn} ${pad}`),
      ];
      expect(await saveUIMessages(client, id, next)).toEqual({ appended: 2 });
      browser = next;
      const stored = (await client.get(id)).session.messages;
      dropped ||= stored.length < 2 + 2 * turn;
      expect(texts(stored).at(-1)).toBe(`assistant:[{"type":"text","text":"r${turn} ${pad}"}]`);
    }
    expect(dropped).toBe(true);
  });
});
