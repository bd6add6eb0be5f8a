// A fresh process for the adapter tests: reads or writes a session through an adapter and prints JSON.
//   agents-items <url> <id>                      the items SatchelSession.getItems() gives
//   agents-add <url> <id> <writer> <calls>       <calls> addItems calls of two items each
//   ai-load <url> <id>                           loadUIMessages, and convertToModelMessages of them
//   ai-save <url> <id> <writer> <calls>          <calls> saveUIMessages calls of two new messages each
import { convertToModelMessages } from 'ai';
import { SatchelClient } from '../../lib/client/index.js';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';

const [mode, url, id, ...rest] = process.argv.slice(2);
const client = new SatchelClient({ url: url! });

if (mode === 'agents-items') {
  const session = new SatchelSession({ client, sessionId: id! });
  console.log(JSON.stringify(await session.getItems()));
} else if (mode === 'agents-add') {
  const [writer, calls] = rest;
  const session = new SatchelSession({ client, sessionId: id! });
  for (let i = 0; i < Number(calls); i++) {
    await session.addItems([
      { role: 'user', content: `writer ${writer} call ${i}` },
      {
        type: 'function_call',
        callId: `call-${writer}-${i}`,
        name: 'note',
        arguments: JSON.stringify({ writer, i }),
      },
    ]);
  }
  console.log(JSON.stringify({ done: Number(calls) }));
} else if (mode === 'ai-load') {
  const messages = await loadUIMessages(client, id!);
  console.log(JSON.stringify({ messages, model: await convertToModelMessages(messages) }));
} else if (mode === 'ai-save') {
  const [writer, calls] = rest;
  for (let i = 0; i < Number(calls); i++) {
    const ids = [`u-${writer}-${i}`, `a-${writer}-${i}`];
    await saveUIMessages(
      client,
      id!,
      [
        {
          id: ids[0]!,
          role: 'user',
          parts: [{ type: 'text', text: `writer ${writer} call ${i}` }],
        },
        { id: ids[1]!, role: 'assistant', parts: [{ type: 'text', text: `ok ${writer} ${i}` }] },
      ],
      { known: [] },
    );
  }
  console.log(JSON.stringify({ done: Number(calls) }));
} else {
  throw new Error(`unknown mode ${mode}`);
}
