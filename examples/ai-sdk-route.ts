// A Next.js-style route handler (app/api/chat/route.ts) for the AI SDK's useChat, with the chat kept in
// Satchel: load the history, stream the model's answer, save what is new when the stream finishes.
//   SATCHEL_URL, SATCHEL_TOKEN: the Satchel server; MODEL_URL, MODEL, MODEL_KEY: an OpenAI-compatible model.
// Run directly (npx tsx ai-sdk-route.ts), it plays two turns of a chat through POST and prints them.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { convertToModelMessages, createIdGenerator, streamText, type UIMessage } from 'ai';
import { SatchelClient } from 'satchel';
import { loadUIMessages, saveUIMessages } from 'satchel/ai-sdk';

const client = new SatchelClient({
  url: process.env.SATCHEL_URL ?? 'http://127.0.0.1:8787',
  token: process.env.SATCHEL_TOKEN,
});
const provider = createOpenAICompatible({
  name: 'model',
  baseURL: process.env.MODEL_URL ?? 'https://api.openai.com/v1',
  apiKey: process.env.MODEL_KEY ?? process.env.OPENAI_API_KEY,
});
const model = provider.chatModel(process.env.MODEL ?? 'gpt-4o-mini');

/**
 * useChat sends the chat id, only its newest message, and the trigger (prepareSendMessagesRequest:
 * `({ id, messages, trigger }) => ({ body: { id, message: messages.at(-1), trigger } })`).
 */
export async function POST(request: Request): Promise<Response> {
  const { id, message, trigger }: { id: string; message: UIMessage; trigger?: string } =
    await request.json();
  const history = await loadUIMessages(client, id); // one GET
  // regenerate() dropped the answer (and all after it) and sent the message before it again: the chat
  // up to that message. Otherwise a continued assistant message (a client-side tool result, an
  // approval) comes back under its id.
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
    // One keyed POST: the user's message and the answer, skipping what `history` holds already (a
    // continued message, or a regenerate: one PUT that replaces it, or removes what the client dropped).
    onFinish: async ({ messages }) => {
      await saveUIMessages(client, id, messages, { known: history, regenerate });
    },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const chatId = process.argv[2] ?? `chat-${Date.now()}`;
  for (const text of ['Hello! Who are you?', 'And what can you do?']) {
    const response = await POST(
      new Request('http://localhost/api/chat', {
        method: 'POST',
        body: JSON.stringify({
          id: chatId,
          message: { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] },
        }),
      }),
    );
    await response.text(); // the UI message stream useChat would read
  }
  // onFinish runs as the stream closes; give its save a moment, then read the chat back.
  let chat: UIMessage[] = [];
  for (let i = 0; i < 50 && chat.length < 4; i++) {
    chat = await loadUIMessages(client, chatId);
    if (chat.length < 4) await new Promise((r) => setTimeout(r, 100));
  }
  console.log(JSON.stringify({ chatId, messages: chat }));
}
