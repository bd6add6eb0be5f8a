// Review s58e, 2: saveUIMessages compares the client's copy of a known message with the stored one and
// takes a difference redaction explains as no edit. It understood only a literal `[REDACTED]` in a stored
// string, but the server redacts more: a text file sent as a `data:` URL (what useChat sends for an
// attached file) is decoded, redacted and encoded again, so the stored URL holds no literal marker; an
// object key holding a secret is renamed (`[REDACTED]`, a second one `[REDACTED] 2`). Each made the
// message look "changed under its id": older than the newest, every later save of the chat threw a
// TypeError (the new turns stored nowhere); the newest, the save PUT the whole session and answered
// `replaced: 1` for a message it only sent again.
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelClient } from '../../lib/client/index.js';
import { makeApp, TOKENS } from '../http/helpers.js';

async function client() {
  const built = await makeApp();
  return new SatchelClient({
    url: 'http://satchel.test',
    token: TOKENS.laptop,
    fetch: async (input, init) => built.app.fetch(new Request(input as string, init)),
  });
}

const token = 'ghp_' + 'Zk3pQ9xW7vLm2aB4cD6eF8gH0iJ1kL3mN5oP';
const other = 'ghp_' + 'Qm7rT2yU4iO6pA8sD0fG1hJ3kL5zX9cV7bN2';
const text = (id: string, role: 'user' | 'assistant', t: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text: t }],
});
const dataUrl = (content: string | Buffer, base64url = false) =>
  `data:text/plain;base64,${Buffer.from(content).toString(base64url ? 'base64url' : 'base64')}`;
const withFile = (url: string): UIMessage => ({
  id: 'u1',
  role: 'user',
  parts: [
    { type: 'text', text: 'what is in this .env?' },
    { type: 'file', mediaType: 'text/plain', filename: '.env', url },
  ],
});
const turn2 = [text('u2', 'user', 'thanks'), text('a2', 'assistant', 'You are welcome.')];

/** Saves `[u1, a1]`, loads the stored chat, and saves turn 2 with the client's copies as sent. */
async function secondSave(chatId: string, u1: UIMessage, a1: UIMessage) {
  const c = await client();
  expect(await saveUIMessages(c, chatId, [u1, a1], { known: [] })).toEqual({ appended: 2 });
  const history = await loadUIMessages(c, chatId);
  const saved = await saveUIMessages(c, chatId, [u1, a1, ...turn2], { known: history }).catch(
    (e: Error) => `${e.name}: ${e.message}`,
  );
  return { saved, history, stored: await loadUIMessages(c, chatId) };
}

describe('review s58e: saveUIMessages takes what the server redacted for no edit', () => {
  const a1 = text('a1', 'assistant', 'A GitHub token.');

  it('an attached text file holding a secret (data: URL, encoded again): later turns are saved', async () => {
    const { saved, history, stored } = await secondSave(
      'chat-file',
      withFile(dataUrl(`GITHUB_TOKEN=${token}\n`)),
      a1,
    );
    expect(JSON.stringify(history)).not.toContain(
      Buffer.from(token).toString('base64').slice(0, 12),
    );
    // Before the fix: "TypeError: saveUIMessages: a stored message other than the newest changed …".
    expect(saved).toEqual({ appended: 2 });
    expect(stored.map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });

  it('the same in UTF-16 with its byte order mark, and in unpadded base64url', async () => {
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`KEY=${token}\r\n`, 'utf16le'),
    ]);
    expect((await secondSave('chat-utf16', withFile(dataUrl(utf16)), a1)).saved).toEqual({
      appended: 2,
    });
    const url = dataUrl(`token ${token} ok`, true);
    expect((await secondSave('chat-b64url', withFile(url), a1)).saved).toEqual({ appended: 2 });
  });

  it('a tool input whose keys hold secrets, the newest known message: appended, not replaced', async () => {
    const tool: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-kv',
          toolCallId: 't1',
          state: 'output-available',
          input: { [token]: 'github', [other]: 'github too', plain: 1 },
          output: 'ok',
        },
        { type: 'text', text: 'Stored.' },
      ],
    } as UIMessage;
    const { saved, history } = await secondSave('chat-key', text('u1', 'user', 'store it'), tool);
    expect(JSON.stringify(history)).not.toContain(token);
    // Before the fix: { appended: 2, replaced: 1 }, after a needless PUT of the whole session.
    expect(saved).toEqual({ appended: 2 });
  });

  it('a file changed under its id is still an edit a save cannot store', async () => {
    const c = await client();
    const u1 = withFile(dataUrl(`GITHUB_TOKEN=${token}\n`));
    await saveUIMessages(c, 'chat-edit', [u1, a1], { known: [] });
    const history = await loadUIMessages(c, 'chat-edit');
    const edited = withFile(dataUrl(`REGION=eu\nGITHUB_TOKEN=${token}\n`));
    await expect(
      saveUIMessages(c, 'chat-edit', [edited, a1, ...turn2], { known: history }),
    ).rejects.toThrow(/a stored message other than the newest changed/);
  });
});
