import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

// Host names are case-insensitive (RFC 9110 4.2.3): `curl http://LOCALHOST:8787/…` sends the Host as typed,
// and @hono/node-server answered 400 "malformed" to an upper-case Host with a port (review, 2026-12-05).

const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

function get(port: number, path: string, host: string, token?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const headers: Record<string, string> = { host };
    if (token) headers['authorization'] = `Bearer ${token}`;
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('an upper-case Host with a port', () => {
  it('is the same host: open mode serves LOCALHOST:<port> as localhost', async () => {
    const server = await startSatchelServer();
    servers.push(server);
    for (const host of [`LOCALHOST:${server.port}`, `LocalHost:${server.port}`, 'LOCALHOST']) {
      const res = await get(server.port, '/v1/sessions', host);
      expect(res.status, `${host}: ${res.body}`).toBe(200);
    }
    // Another name is still refused in open mode, whatever its case.
    expect((await get(server.port, '/v1/sessions', `Example.COM:${server.port}`)).status).toBe(403);
  });

  it('with tokens, any name in any case reaches the API', async () => {
    const server = await startSatchelServer({
      env: { SATCHEL_TOKENS: 'alice=tok_alice_0123456789' },
    });
    servers.push(server);
    const res = await get(
      server.port,
      '/v1/sessions',
      'Satchel.Example.com:8787',
      'tok_alice_0123456789',
    );
    expect(res.status, res.body).toBe(200);
  });
});
