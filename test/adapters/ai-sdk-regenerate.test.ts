// useChat's regenerate() through the documented route (docs/adapters.md, examples/ai-sdk-route.ts), driven
// by the AI SDK's own chat client (AbstractChat over DefaultChatTransport, as useChat runs it) against a
// real Satchel server. regenerate() drops the answer and sends the message before it again (trigger
// `regenerate-message`): the route gives the model the chat up to that message, and the save removes the
// dropped answer. Until review s67i the model was asked `[old answer, question]` and both answers stayed.
import {
  AbstractChat,
  convertToModelMessages,
  createIdGenerator,
  DefaultChatTransport,
  streamText,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages, type SaveResult } from '../../lib/adapters/ai-sdk.js';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
beforeAll(async () => {
  server = await startSatchelServer();
  client = new SatchelClient({ url: server.url });
});
afterAll(() => server?.close());

/** What the model was asked, each call: role and text of each message. */
const prompts: string[][] = [];
let replies = 0;
const model = new MockLanguageModelV3({
  doStream: async ({ prompt }) => {
    prompts.push(
      prompt.map((m) =>
        typeof m.content === 'string'
          ? `${m.role}:${m.content}`
          : `${m.role}:${m.content.map((p) => ('text' in p ? p.text : p.type)).join('')}`,
      ),
    );
    const text = `answer ${++replies}`;
    return {
      stream: simulateReadableStream({
        chunks: [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: text },
          { type: 'text-end', id: 't' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: 'stop' },
            usage: {
              inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
              outputTokens: { total: 1, text: 1, reasoning: 0 },
            },
          },
        ],
      }),
    } as never;
  },
});

/** The saves' answers, in order. */
const saves: SaveResult[] = [];

/** The documented route (docs/adapters.md), with the scripted model. */
async function POST(request: Request): Promise<Response> {
  const { id, message, trigger }: { id: string; message: UIMessage; trigger?: string } =
    await request.json();
  const history = await loadUIMessages(client, id);
  const regenerate = trigger === 'regenerate-message';
  const at = history.findIndex((m) => m.id === message.id);
  const messages =
    regenerate && at >= 0
      ? [...history.slice(0, at), message]
      : [...history.filter((m) => m.id !== message.id), message];
  const result = streamText({ model, messages: await convertToModelMessages(messages) });
  return result.toUIMessageStreamResponse({
    originalMessages: messages,
    generateMessageId: createIdGenerator({ prefix: 'msg', size: 16 }),
    onFinish: async ({ messages }) => {
      saves.push(await saveUIMessages(client, id, messages, { known: history, regenerate }));
    },
  });
}

/** useChat's state, without React. */
class State implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined;
  messages: UIMessage[] = [];
  pushMessage = (m: UIMessage) => void this.messages.push(m);
  popMessage = () => void this.messages.pop();
  replaceMessage = (i: number, m: UIMessage) => void (this.messages[i] = m);
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class Chat extends AbstractChat<UIMessage> {
  constructor(id: string) {
    super({
      id,
      state: new State(),
      transport: new DefaultChatTransport({
        api: 'http://app.test/api/chat',
        fetch: (async (url: string, init: RequestInit) =>
          POST(new Request(url, init))) as unknown as typeof fetch,
        // As docs/adapters.md: the chat id, its newest message, and why it is sent.
        prepareSendMessagesRequest: ({ id, messages, trigger }) => ({
          body: { id, message: messages.at(-1), trigger },
        }),
      }),
    });
  }
}

/** The stored chat as role:text. */
async function stored(id: string): Promise<string[]> {
  return (await loadUIMessages(client, id)).map(
    (m) => `${m.role}:${m.parts.map((p) => ('text' in p ? p.text : '')).join('')}`,
  );
}

/** Waits for the save of the last request (onFinish runs as the stream closes). */
async function saved(count: number): Promise<void> {
  for (let i = 0; i < 200 && saves.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  expect(saves).toHaveLength(count);
}

it('regenerate() replaces the answer: the model is asked the chat up to the question, one answer stays', async () => {
  const chat = new Chat('regenerate-chat');
  await chat.sendMessage({ text: 'What is 2+2?' });
  await saved(1);
  await chat.sendMessage({ text: 'And 3+3?' });
  await saved(2);
  expect(await stored('regenerate-chat')).toEqual([
    'user:What is 2+2?',
    'assistant:answer 1',
    'user:And 3+3?',
    'assistant:answer 2',
  ]);

  await chat.regenerate();
  await saved(3);
  expect(prompts[2]).toEqual(['user:What is 2+2?', 'assistant:answer 1', 'user:And 3+3?']);
  expect(saves[2]).toEqual({ appended: 1, removed: 1 });
  expect(await stored('regenerate-chat')).toEqual([
    'user:What is 2+2?',
    'assistant:answer 1',
    'user:And 3+3?',
    'assistant:answer 3',
  ]);

  // An older answer: regenerate() drops it and every message after it in the page; the save replaces that
  // answer and keeps the later turn, which the route cannot tell from one the page never showed.
  const first = chat.messages[1]!;
  await chat.regenerate({ messageId: first.id });
  await saved(4);
  expect(prompts[3]).toEqual(['user:What is 2+2?']);
  expect(saves[3]).toEqual({ appended: 1, removed: 1 });
  expect(await stored('regenerate-chat')).toEqual([
    'user:What is 2+2?',
    'assistant:answer 4',
    'user:And 3+3?',
    'assistant:answer 3',
  ]);
  const ids = (await loadUIMessages(client, 'regenerate-chat')).map((m) => m.id);
  expect(ids.slice(0, 2)).toEqual(chat.messages.map((m) => m.id));
});

it('regenerate() on a page that never loaded another device’s turn keeps that turn (review s68e)', async () => {
  const laptop = new Chat('regenerate-devices');
  await laptop.sendMessage({ text: 'What is 2+2?' });
  await saved(5);
  const phone = new Chat('regenerate-devices');
  phone.messages = await loadUIMessages(client, 'regenerate-devices');
  await phone.sendMessage({ text: 'Note for later: my flight is LH 400' });
  await saved(6);
  // The laptop still shows its one turn.
  await laptop.regenerate();
  await saved(7);
  expect(prompts[6]).toEqual(['user:What is 2+2?']);
  expect(saves[6]).toEqual({ appended: 1, removed: 1 });
  expect(await stored('regenerate-devices')).toEqual([
    'user:What is 2+2?',
    'assistant:answer 7',
    'user:Note for later: my flight is LH 400',
    'assistant:answer 6',
  ]);
});

it('a regenerate saved twice writes nothing the second time; another device’s newer turn stays after it', async () => {
  const id = 'regenerate-twice';
  const u1: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  const a1: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'old' }] };
  await saveUIMessages(client, id, [u1, a1], { known: [] });
  const history = await loadUIMessages(client, id);
  // Another device continues the chat after this route loaded it.
  await client.append(id, { messages: [{ role: 'user', content: 'from the phone' }] });
  const a2: UIMessage = { id: 'a2', role: 'assistant', parts: [{ type: 'text', text: 'new' }] };
  const again = { known: history, regenerate: true };
  expect(await saveUIMessages(client, id, [u1, a2], again)).toEqual({ appended: 1, removed: 1 });
  const revision = (await client.get(id)).session.revision;
  expect(await saveUIMessages(client, id, [u1, a2], again)).toEqual({ appended: 0 });
  expect((await client.get(id)).session.revision).toBe(revision);
  expect(await stored(id)).toEqual(['user:hi', 'assistant:new', 'user:from the phone']);
});
