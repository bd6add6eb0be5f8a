// Review s68h, a regression of a160a95 (fixed in its next commit): regenerateSave with the message sent again no longer stored (at < 0: trimmed by
// another writer, e.g. the oldest messages dropped, between the route's load and its save) removes every
// known message the client dropped from anywhere in the session, later turns included. Before a160a95 such
// a save removed nothing; docs/adapters.md and the commit say later turns stay.
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
beforeAll(async () => {
  server = await startSatchelServer();
  client = new SatchelClient({ url: server.url });
});
afterAll(() => server?.close());

const text = (id: string, role: 'user' | 'assistant', t: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text: t }],
});

it('a regenerate of an older answer keeps later turns when the question was trimmed meanwhile', async () => {
  const id = 'regen-sent-gone';
  const u1 = text('u1', 'user', 'What is 2+2?');
  const a1 = text('a1', 'assistant', '4');
  const u2 = text('u2', 'user', 'My flight is LH 400 on Friday');
  const a2 = text('a2', 'assistant', 'Noted: LH 400, Friday');
  await saveUIMessages(client, id, [u1, a1, u2, a2], { known: [] });
  // The route loads the chat (known), the user regenerates the first answer: the model is asked [u1].
  const history = await loadUIMessages(client, id);
  // Meanwhile another writer trims the oldest message (a size cap, an agent's trim).
  const { session, etag } = await client.get(id);
  await client.replace(id, { ...session, messages: session.messages.slice(1) }, { ifMatch: etag });
  // The model's new answer is saved as the documented route does.
  const a1b = text('a1b', 'assistant', 'Four');
  const result = await saveUIMessages(client, id, [u1, a1b], { known: history, regenerate: true });
  const after = (await loadUIMessages(client, id)).map((m) => m.id);
  // Nothing is removed (the question is gone: no answer to it to replace); the new answer is appended.
  expect(result).toEqual({ appended: 1 });
  expect(after).toEqual(['a1', 'u2', 'a2', 'a1b']);
});
