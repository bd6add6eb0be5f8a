// Review s64j. The page's call deadline ended when the answer started (review s64i, so that a large session
// on a slow link loads), and a body that stalled after its first bytes held the call, and so the live
// updates, for good (the hang of review s64a again). Now each silence of the body is bounded too.
import { createServer } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"sessions":['); // the headers and a first chunk, then nothing more
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("the page's api()", () => {
  it('answers as unsent when the body stalls, after its deadline', async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    // The page's globals, as a browser gives them.
    const g = globalThis as Record<string, unknown>;
    g.document = { body: { getAttribute: () => null } };
    g.location = { href: `${origin}/ui/` };
    g.sessionStorage = { getItem: () => 'tok', setItem() {}, removeItem() {} };
    const realFetch = fetch;
    const { api } = await import('../../lib/ui/client.js');
    g.fetch = (u: string, init: RequestInit) => realFetch(new URL(u, origin), init);
    const t0 = Date.now();
    const pending = Symbol('pending');
    const answer = await Promise.race([
      api('GET', '/v1/sessions?limit=100', { wait: 1000 }),
      new Promise((r) => setTimeout(() => r(pending), 8000)),
    ]);
    expect(answer).not.toBe(pending);
    expect(answer).toMatchObject({ status: 0 });
    expect(Date.now() - t0).toBeLessThan(5000);
  }, 15_000);
});
