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

/** useChat sends the chat id and only its newest message (prepareSendMessagesRequest). */
export async function POST(request: Request): Promise<Response> {
  const { id, message }: { id: string; message: UIMessage } = await request.json();
  const history = await loadUIMessages(client, id); // one GET
  // A continued assistant message (a client-side tool result, an approval) comes back under its id.
  const messages = [...history.filter((m) => m.id !== message.id), message];
  const result = streamText({ model, messages: await convertToModelMessages(messages) });
  return result.toUIMessageStreamResponse({
    originalMessages: messages,
    generateMessageId: createIdGenerator({ prefix: 'msg', size: 16 }),
    // One keyed POST: the user's message and the answer, skipping what `history` holds already (a
    // continued message: one PUT that replaces it).
    onFinish: async ({ messages }) => {
      await saveUIMessages(client, id, messages, { known: history });
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
