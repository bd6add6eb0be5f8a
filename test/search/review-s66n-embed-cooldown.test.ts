// Review s66n, findings 1 and 2. Since the cooldown after a failure became the service's Retry-After
// (1 s .. 15 min), the server's log line still said "lexical search for 30 s" whatever the wait was; and on
// Workers, where each embed() call has its own request in flight, a second failure naming a longer wait
// was dropped: the isolate called the service again at the first, shorter wait.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { makeApp } from '../http/helpers.js';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
  delete (globalThis as { SATCHEL_SHORT_LIVED?: true }).SATCHEL_SHORT_LIVED;
});

/** A service answering every request 429 with the `Retry-After` (seconds) `waits` gives, after `delayMs`. */
async function limited(waits: (i: number) => string, delayMs = (_i: number) => 0): Promise<string> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    const i = n++;
    req.on('end', () =>
      setTimeout(
        () =>
          res
            .writeHead(429, { 'retry-after': waits(i), 'content-type': 'application/json' })
            .end('{"error":{"message":"rate limited"}}'),
        delayMs(i),
      ),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe('the embeddings cooldown', () => {
  it("the server's log line names the wait in force, not 30 s", async () => {
    const app = await makeApp({
      env: {
        SATCHEL_EMBEDDINGS_URL: await limited(() => '600'),
        SATCHEL_EMBEDDINGS_MODEL: 'm',
        SATCHEL_EMBEDDINGS_DIMS: '16',
      },
    });
    const made = await app.call('POST', '/v1/sessions', { body: { task: 'deploy failure notes' } });
    expect(made.status).toBe(201);
    await app.background.drain();
    const found = await app.call('POST', '/v1/session_search', {
      body: { action: 'search', query: 'deploy notes' },
    });
    expect(found.status).toBe(200);
    await app.background.drain();
    const lines = app.logs.find(/embeddings call failed/).map((r) => r.msg);
    expect(lines).toEqual(['embeddings call failed; lexical search for 600 s']);
  });

  // On Workers two requests are in flight at once (two calls, two lanes): the first answers its Retry-After
  // after 50 ms, the second after 150 ms. Each wait that moved the cooldown's end is reported, so the log says
  // what is in force; a shorter one later neither shortens it nor is reported.
  it.each([
    [
      'a later failure naming a longer Retry-After lengthens the cooldown',
      '2',
      '600',
      [2000, 600_000],
    ],
    [
      'a shorter wait from a later failure does not shorten it, and is not reported',
      '600',
      '2',
      [600_000],
    ],
  ])('on Workers, %s', async (_name, first, second, reported) => {
    (globalThis as { SATCHEL_SHORT_LIVED?: true }).SATCHEL_SHORT_LIVED = true;
    const url = await limited(
      (i) => (i === 0 ? first : second),
      (i) => (i === 0 ? 50 : 150),
    );
    const now = 1_000_000;
    const waits: number[] = [];
    const embedder = new HttpEmbedder({
      url,
      model: 'm',
      dims: 4,
      now: () => now,
      onError: (_err, waitMs) => waits.push(waitMs),
    });
    const a = embedder.embed(['query of request A'], true);
    const b = embedder.embed(['query of request B'], true);
    await expect(a).rejects.toThrow(/answered 429/);
    await expect(b).rejects.toThrow(/answered 429/);
    expect(embedder.calls).toBe(2);
    expect(Date.parse(embedder.state().cooldown_until!) - now).toBe(600_000);
    expect(waits).toEqual(reported);
  });
});
