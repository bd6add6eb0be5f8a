import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

// docs/client.md, "Using the client": the example, run as printed against a fresh server (only the URL
// changed). Review s56d: its last line was `client.delete(session.id, { ifMatch: 7 })`, which threw 412 (the
// session is at revision 4 there); it now deletes at the revision the clear answered. Keep in step with
// the doc.

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

it('the client.md example runs to its end', async () => {
  const client = new SatchelClient({ url: server.url, token: process.env.SATCHEL_TOKEN });
  const { session } = await client.create({
    task: 'support chat',
    metadata: { user: 'u_42', thread: 't_7' },
  });
  await client.append(session.id, {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on this receipt?' },
          { type: 'image_url', image_url: { url: 'https://example.com/receipt.png' } },
        ],
      },
    ],
  });
  await client.list({ metadata: { user: 'u_42' } });
  await client.pop(session.id, 1);
  const cleared = await client.clear(session.id);
  await client.delete(session.id, { ifMatch: cleared.session.revision });
  await expect(client.get(session.id)).rejects.toMatchObject({ status: 404 });
});
