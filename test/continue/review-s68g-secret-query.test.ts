// Review s68g: a continue's own secrets (Satchel-Secrets) reached the embeddings service inside a
// session_search query of its model turn: only the rules and configured values were taken out of a query.
// Now the turn's queries leave without the request's values too.
import { expect, it } from 'vitest';
import { startChatServer } from '../support/chat-server.js';
import { startEmbeddingsServer } from '../support/embeddings-server.js';
import { holders } from '../support/holders.js';
import { makeApp, settleAll } from '../http/helpers.js';

it('a session_search query of a continue’s turn reaches the embeddings service without its secrets', async () => {
  const secret = 'qz7Kd9wPvLm3Rt8x';
  const emb = await startEmbeddingsServer(64);
  const chat = await startChatServer(
    {
      toolCalls: [
        { name: 'session_search', arguments: { action: 'search', query: `deploy ${secret}` } },
      ],
    },
    { reply: 'nothing found' },
  );
  try {
    const app = await makeApp({
      env: {
        SATCHEL_EMBEDDINGS_URL: emb.url,
        SATCHEL_EMBEDDINGS_MODEL: 'm',
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'x',
      } as never,
    });
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        id: 'a',
        task: 'deploy notes',
        messages: [{ role: 'user', content: 'deploy the app' }],
      },
    });
    expect(created.status).toBe(201);
    await settleAll(app);
    const continued = await app.call('POST', '/v1/sessions/a/continue', {
      body: { message: `where did I deploy with ${secret}?` },
      headers: { 'satchel-secrets': Buffer.from(JSON.stringify([secret])).toString('base64') },
    });
    expect(continued.status).toBe(200);
    await settleAll(app);
    const queries = emb.requests
      .flatMap((q) => q.input)
      .filter((t) => !t.startsWith('deploy notes'));
    expect(queries).toEqual(['deploy [REDACTED]']);
    expect(holders(app.dir, [secret])).toEqual([]);
  } finally {
    await emb.close();
    await chat.close();
  }
});
