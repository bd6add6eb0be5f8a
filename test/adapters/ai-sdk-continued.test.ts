// saveUIMessages of an assistant message the AI SDK continued under its id, and loadUIMessages of parts
// other writers stored in the chat-completions format.
import type { UIMessage } from 'ai';
import { convertToModelMessages } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
beforeAll(async () => {
  server = await startSatchelServer();
  client = new SatchelClient({ url: server.url });
});
afterAll(() => server.close());

describe('saveUIMessages: an assistant message continued under the same id', () => {
  it('the continued message (tool output, final text) is what loadUIMessages gives back', async () => {
    // Turn 1 ends with a client-side tool call (or, in AI SDK 6, a tool approval request): onFinish saves it.
    const user: UIMessage = {
      id: 'u1',
      role: 'user',
      parts: [{ type: 'text', text: 'Where am I?' }],
    };
    const asking: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'tool-getLocation', toolCallId: 't1', state: 'input-available', input: {} },
      ],
    };
    await saveUIMessages(client, 'ai-continued', [user, asking], { known: [] });
    // useChat adds the tool result to that same assistant message (addToolResult) and sends it; the
    // route (as docs/adapters.md writes it) streams the continuation; toUIMessageStreamResponse keeps
    // the message id (originalMessages ends with an assistant message) and onFinish gets it updated.
    const history = await loadUIMessages(client, 'ai-continued');
    const continued: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-getLocation',
          toolCallId: 't1',
          state: 'output-available',
          input: {},
          output: 'Oslo',
        },
        { type: 'step-start' },
        { type: 'text', text: 'You are in Oslo.', state: 'done' },
      ],
    };
    expect(
      await saveUIMessages(client, 'ai-continued', [user, continued], { known: history }),
    ).toEqual({ appended: 0, replaced: 1 });
    expect(await loadUIMessages(client, 'ai-continued')).toEqual([user, continued]);
    // onFinish running twice (or a retry with the stale history) writes nothing more.
    expect(
      await saveUIMessages(client, 'ai-continued', [user, continued], { known: history }),
    ).toEqual({ appended: 0 });
    // Continued again, with a new message after it: one PUT holds both.
    const next: UIMessage = { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Thanks' }] };
    const again: UIMessage = {
      ...continued,
      parts: [...continued.parts, { type: 'text', text: 'Anything else?' }],
    };
    const history2 = await loadUIMessages(client, 'ai-continued');
    expect(
      await saveUIMessages(client, 'ai-continued', [user, again, next], { known: history2 }),
    ).toEqual({ appended: 1, replaced: 1 });
    expect(
      await saveUIMessages(client, 'ai-continued', [user, again, next], { known: history2 }),
    ).toEqual({ appended: 0 });
    expect(await loadUIMessages(client, 'ai-continued')).toEqual([user, again, next]);
  });
});

describe('loadUIMessages: messages other writers stored', () => {
  it('a user message sent as chat-completions parts (image_url) converts with the image kept', async () => {
    await client.create({
      id: 'ai-foreign-parts',
      task: 't',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
          ],
        },
        { role: 'assistant', content: 'a cat' },
      ],
    });
    const ui = await loadUIMessages(client, 'ai-foreign-parts');
    const model = await convertToModelMessages(ui);
    expect(JSON.stringify(model)).toContain('https://x.test/a.png');
  });
});
