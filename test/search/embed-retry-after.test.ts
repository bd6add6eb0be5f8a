import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpEmbedder } from '../../lib/search/embed.js';

// A rate-limited embeddings service (OpenAI, Azure, a proxy) names its own wait in Retry-After; the embedder
// waited a fixed 30 s either way (left since stop 59): a wait of 2 s kept search lexical 28 s too long, and
// one of 10 minutes was met with a request every 30 s. Now the cooldown is the service's wait (1 s to 15 min).
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A service answering every request `status` with `headers`. */
async function service(status: number, headers: Record<string, string>): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end('{}'),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** The cooldown (ms) after one failed query, on a fixed clock. */
async function cooldownAfter(status: number, headers: Record<string, string>): Promise<number> {
  const now = Date.UTC(2026, 11, 7, 12);
  const embedder = new HttpEmbedder({
    url: await service(status, headers),
    model: 'm',
    now: () => now,
  });
  await expect(embedder.embed(['hello'], true)).rejects.toThrow(/answered/);
  return Date.parse(embedder.state().cooldown_until!) - now;
}

describe('the embeddings cooldown after a failure', () => {
  it("is the service's Retry-After when a 429 or 503 names one", async () => {
    expect(await cooldownAfter(429, { 'retry-after': '2' })).toBe(2000);
    expect(await cooldownAfter(503, { 'retry-after': '600' })).toBe(600_000);
  });

  it('is held to 1 s .. 15 min, and is 30 s without a wait in seconds', async () => {
    expect(await cooldownAfter(429, { 'retry-after': '0' })).toBe(1000);
    expect(await cooldownAfter(429, { 'retry-after': '86400' })).toBe(900_000);
    expect(await cooldownAfter(429, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' })).toBe(
      30_000,
    );
    expect(await cooldownAfter(500, {})).toBe(30_000);
  });
});
