import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { convertToModelMessages, createIdGenerator, streamText, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { startStreamProxy } from './stream-proxy.js';
import { inChild, startStack, storedText, type Stack } from './stack.js';

const OPENAI_KEY = 'sk-proj-Xq7Lm2Vn9Tz4Wb8Kc3Yd6Hf1Js5Pa0Qe7Rg2Uh4Mi9Nk';

describe('AI SDK helpers (loadUIMessages, saveUIMessages) on radosgw', () => {
  let stack: Stack;
  let proxy: Awaited<ReturnType<typeof startStreamProxy>>;
  let POST: (request: Request) => Promise<Response>;
  const saves: Promise<unknown>[] = [];

  beforeAll(async () => {
    stack = await startStack('ai-sdk');
    proxy = await startStreamProxy(stack.chat.url);
    const model = createOpenAICompatible({
      name: 'test',
      baseURL: proxy.url,
      apiKey: 'k',
    }).chatModel('test-model');
    // The route handler of docs/adapters.md and examples/ai-sdk-route.ts.
    POST = async (request) => {
      const { id, message }: { id: string; message: UIMessage } = await request.json();
      const history = await loadUIMessages(stack.client, id);
      const messages = [...history, message];
      const result = streamText({ model, messages: await convertToModelMessages(messages) });
      return result.toUIMessageStreamResponse({
        originalMessages: messages,
        generateMessageId: createIdGenerator({ prefix: 'msg', size: 16 }),
        onFinish: ({ messages }) => {
          const saved = saveUIMessages(stack.client, id, messages, { known: history });
          saves.push(saved);
          return saved.then(() => undefined);
        },
      });
    };
  });
  afterAll(async () => {
    await proxy?.close();
    await stack?.close();
  });

  const say = async (chatId: string, parts: UIMessage['parts']) => {
    const before = stack.requests.length;
    const response = await POST(
      new Request('http://app/api/chat', {
        method: 'POST',
        body: JSON.stringify({
          id: chatId,
          message: { id: crypto.randomUUID(), role: 'user', parts },
        }),
      }),
    );
    await response.text();
    await Promise.all(saves.splice(0));
    return stack.requests.slice(before);
  };

  it('a streamed multi-turn chat with image and file parts is stored and reloads identical in a fresh process', async () => {
    stack.chat.script({ reply: 'Hello, I am a test model.' }, { reply: 'A cat and a PDF.' });
    const first = await say('ai-chat', [{ type: 'text', text: 'Hi! Who are you?' }]);
    // A new chat: one read, then the save (an append that finds no session, a create, the append).
    expect(first).toEqual([
      'GET /v1/sessions/ai-chat',
      'POST /v1/sessions/ai-chat/messages',
      'POST /v1/sessions',
      'POST /v1/sessions/ai-chat/messages',
    ]);
    const second = await say('ai-chat', [
      { type: 'text', text: 'What is in these?' },
      // Inline: the AI SDK downloads URLs before the model call, and tests reach no other host.
      {
        type: 'file',
        mediaType: 'image/png',
        url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==',
      },
      {
        type: 'file',
        mediaType: 'application/pdf',
        filename: 'report.pdf',
        url: 'data:application/pdf;base64,JVBERi0xLjQK',
      },
    ]);
    expect(second).toEqual(['GET /v1/sessions/ai-chat', 'POST /v1/sessions/ai-chat/messages']);
    // The model's second request carried the first turn, loaded from Satchel.
    expect(stack.chat.requests.at(-1)!.body.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);

    const here = await loadUIMessages(stack.client, 'ai-chat');
    expect(here.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(here[2]!.parts).toHaveLength(3);
    expect(here[3]!.parts.filter((p) => p.type === 'text')).toEqual([
      expect.objectContaining({ type: 'text', text: 'A cat and a PDF.' }),
    ]);
    const fresh = await inChild<{ messages: UIMessage[]; model: unknown }>(
      'ai-load',
      stack.server.url,
      'ai-chat',
    );
    expect(fresh.messages).toEqual(here);
    expect(fresh.model).toEqual(JSON.parse(JSON.stringify(await convertToModelMessages(here))));

    // odek reads string content: the text of the parts.
    const stored = (await stack.client.get('ai-chat')).session;
    expect(stored.metadata).toMatchObject({ framework: 'ai-sdk' });
    expect(stored.task).toBe('Hi! Who are you?');
  });

  it('saving the same messages again (a repeated onFinish) stores nothing twice', async () => {
    const messages: UIMessage[] = [
      { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'once' }] },
      { id: 'm2', role: 'assistant', parts: [{ type: 'text', text: 'only once' }] },
    ];
    expect(await saveUIMessages(stack.client, 'ai-repeat', messages, { known: [] })).toEqual({
      appended: 2,
    });
    // Same new ids, same key: the server replays the first write.
    await saveUIMessages(stack.client, 'ai-repeat', messages, { known: [] });
    // Without `known`, the stored ids are read first and nothing is new.
    expect(await saveUIMessages(stack.client, 'ai-repeat', messages)).toEqual({ appended: 0 });
    expect(await loadUIMessages(stack.client, 'ai-repeat')).toEqual(messages);
  });

  it('8 processes saving to one chat at once lose nothing', { timeout: 300_000 }, async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        inChild('ai-save', stack.server.url, 'ai-concurrent', String(w), '4'),
      ),
    );
    const ids = (await loadUIMessages(stack.client, 'ai-concurrent')).map((m) => m.id);
    expect(ids).toHaveLength(64);
    expect(new Set(ids).size).toBe(64);
  });

  it('secrets inside parts never reach storage', async () => {
    await saveUIMessages(
      stack.client,
      'ai-secrets',
      [
        {
          id: 's1',
          role: 'user',
          parts: [
            { type: 'text', text: `my token is ${OPENAI_KEY}` },
            { type: 'file', mediaType: 'image/png', url: `https://x.test/a.png?t=${OPENAI_KEY}` },
          ],
        },
      ],
      { known: [] },
    );
    const text = await storedText(stack.objects);
    expect(text).toContain('ai-secrets');
    expect(text).not.toContain(OPENAI_KEY);
  });
});
