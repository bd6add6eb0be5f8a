// Review s66b, suspected item 1, checked on Node: a continue turn gives up on its session_search at its
// deadline (lib/continue/turn.ts `untilAborted`) while the query waits on the embeddings service, and its
// search "finishes on its own". On Workers the embedder's loop then died with the request (finding 1, fixed
// in test/functions/review-s66b-embed-searches.test.ts). In a long-lived process nothing ends that loop: its
// request ends at the call's timeout, and the next query is sent, so the queue is not left stopped.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createApp } from '../../lib/http/app.js';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { loadConfig } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { captureLogs } from '../support/logs.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.js';

const servers: (ChatServer | EmbeddingsServer)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

it('a turn that gave up on its search leaves the embeddings queue going: later searches ask the service', async () => {
  const chat = await startChatServer({
    toolCalls: [
      { name: 'session_search', arguments: { action: 'search', query: 'deploy failure' } },
    ],
  });
  const embed = await startEmbeddingsServer(64);
  servers.push(chat, embed);
  const config = await loadConfig(
    {
      SATCHEL_TOKENS: 'alice/laptop=tok_s66b_node_8Hn3',
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
      SATCHEL_MODEL_TIMEOUT_MS: '2000',
    },
    'local',
  );
  // A call timeout past the turn's but short, and no cooldown: the abandoned request ends soon after the
  // turn, and its failure stops nothing.
  const embedder = new HttpEmbedder({
    url: embed.url,
    model: 'm',
    dims: 64,
    timeoutMs: 3000,
    cooldownMs: 0,
  });
  const objects = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s66b-')));
  const built = createApp({ config, objects, log: captureLogs(), embedder });
  const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await built.app.fetch(
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer tok_s66b_node_8Hn3',
          'content-type': 'application/json',
          ...headers,
        },
        body: JSON.stringify(body),
      }),
    );
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const id = (await call('/v1/sessions', { task: 'deploy failure notes' })).json.id as string;
  await built.background.drain();
  embed.mode = 'hang';
  const turn = await call(
    `/v1/sessions/${id}/continue`,
    { message: 'what failed?' },
    { 'idempotency-key': 'k-s66b-1' },
  );
  // The turn ran out of time inside its search (one model round), whose query waits on the service: sent
  // and held, or queued behind the held request of the message's own save text.
  expect({ status: turn.status, rounds: chat.requests.length }).toEqual({ status: 502, rounds: 1 });
  expect(String(turn.json.detail)).toMatch(/ran out of time/);
  expect(embedder.flushing).toBe(true); // the loop outlives the turn
  embed.mode = 'ok';
  const later = await call('/v1/session_search', { action: 'search', query: 'deploy notes' });
  expect(later.status).toBe(200);
  expect((later.json.results as { id: string }[]).map((r) => r.id)).toEqual([id]);
  const again = await call('/v1/session_search', { action: 'search', query: 'failure notes' });
  expect(again.status).toBe(200);
  await expect.poll(() => embedder.flushing).toBe(false); // nothing left stuck
  const asked = embed.requests.flatMap((r) => r.input);
  expect(asked).toEqual(expect.arrayContaining(['deploy notes', 'failure notes']));
}, 60_000);
