// Review s56f, finding 2.
// functions/node.ts cuts model turns off 2 s before its 10 s grace (Continuer.stopTurns), so that each
// releases its lease and answers 502 before the connections are closed and the process exits. The
// signal is only checked by the chat fetch and *after* a tool call returns (lib/continue/turn.ts): a turn
// inside its `session_search` call (the query's embedding waits up to 10 s, lib/search/embed.ts) is not
// cut off until the search ends, long after the stop has closed the connection and exited: the lease stays
// live (turn timeout + 30 s) and the CLI's retry answers 409, the very bug review s56d fixed.
// Now a tool call ends with the turn's signal (lib/continue/turn.ts `untilAborted`); the search finishes on
// its own, its result unused.
import { afterEach, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.js';

const servers: (ChatServer | EmbeddingsServer)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

it('a turn cut off by stopTurns while its session_search runs answers and releases its lease within the 2 s left', async () => {
  const chat = await startChatServer(
    {
      toolCalls: [
        { name: 'session_search', arguments: { action: 'search', query: 'deploy failure' } },
      ],
    },
    { reply: 'done' },
  );
  const embed = await startEmbeddingsServer();
  servers.push(chat, embed);
  const app = await makeApp({
    env: {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
      SATCHEL_CONTINUE_WAIT_MS: '200',
      SATCHEL_EMBEDDINGS_URL: `${embed.url}`,
      SATCHEL_EMBEDDINGS_MODEL: 'test-embed',
      SATCHEL_EMBEDDINGS_DIMS: '64',
    },
  });
  const id = (await app.call('POST', '/v1/sessions', { body: { task: 'deploy failure notes' } }))
    .json.id as string;
  await app.background.drain();
  embed.mode = 'hang';
  const before = embed.requests.length;
  const asked = app.call('POST', `/v1/sessions/${id}/continue`, {
    body: { message: 'what failed?' },
    headers: { 'idempotency-key': 'k-tool-1' },
  });
  // The model asked for the search; the search waits on the embeddings service.
  await expect.poll(() => chat.requests.length, { timeout: 10_000 }).toBe(1);
  await expect
    .poll(
      () =>
        embed.requests.slice(before).some((r) => r.input.some((s) => s.includes('deploy failure'))),
      {
        timeout: 30_000,
      },
    )
    .toBe(true);
  // 8 s after the signal: the stop cuts the turn off; it has 2 s before the connections close.
  app.continuer.stopTurns();
  const t0 = performance.now();
  const cut = await Promise.race([
    asked,
    new Promise<{ status: string }>((r) =>
      setTimeout(() => r({ status: 'no answer within 2 s' }), 2000),
    ),
  ]);
  const leaseLeft = (await app.objects.get(keys.lease('alice', id))) !== null;
  expect({ status: cut.status, leaseLeft }).toEqual({ status: 502, leaseLeft: false });
  expect(performance.now() - t0).toBeLessThan(2000);
  await asked; // let it end before the servers close
}, 60_000);
