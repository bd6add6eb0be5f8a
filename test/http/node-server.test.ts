import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeServer } from '../../lib/http/node-server.js';

// Requests Node's HTTP parser refuses never reach the app: lib/http/node-server.ts answers them as
// problem+json, on a kept-alive connection too, and then frees the socket as Node's own handler does.
// (test/server/node-entry.test.ts sends such requests to `npm start`'s server on fresh connections.)

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function listen(): Promise<{ server: Server; port: number }> {
  const server = createNodeServer(() => Response.json({ status: 'ok' }));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Everything the server sends until it closes the connection. */
function collect(sock: Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    sock.on('data', (d: Buffer) => (data += d.toString('latin1')));
    sock.on('close', () => resolve(data));
  });
}

/** A good request answered in full on a kept-alive connection, then `second` on the same connection. */
async function afterAnAnswer(port: number, second: string): Promise<string> {
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  let first = '';
  await new Promise<void>((resolve) => {
    const on = (d: Buffer) => {
      first += d.toString('latin1');
      const end = first.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(first);
      if (end >= 0 && length && first.length >= end + 4 + Number(length[1])) {
        sock.off('data', on);
        resolve();
      }
    };
    sock.on('data', on);
    sock.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
  });
  expect(first).toMatch(/^HTTP\/1\.1 200/);
  const rest = collect(sock);
  sock.write(second);
  return rest;
}

describe('the Node server, for a request its parser refuses (review)', () => {
  it('answers problem+json on a kept-alive connection after a finished response', async () => {
    const { port } = await listen();
    const malformed = await afterAnAnswer(
      port,
      'GET / HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n',
    );
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(malformed.toLowerCase()).toContain('content-type: application/problem+json');
    const big = `GET / HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`;
    const oversized = await afterAnAnswer(port, big);
    expect(oversized).toMatch(/^HTTP\/1\.1 431 /);
    const body = JSON.parse(oversized.slice(oversized.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ status: 431, title: 'Request Header Fields Too Large' });
  });

  it('frees the socket once answered, though the client keeps its side open', async () => {
    const { server, port } = await listen();
    const sock = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    sock.on('error', () => undefined);
    let data = '';
    sock.on('data', (d: Buffer) => (data += d.toString('latin1')));
    await new Promise((r) => sock.once('connect', r));
    sock.write('GET / HTTP/1.1\r\nHost: x\r\nbad header\r\n\r\n');
    // The server's side closes (`end` from the server): the client sees the end of the stream.
    await new Promise((r) => sock.once('end', r));
    expect(data).toMatch(/^HTTP\/1\.1 400 /);
    const open = () => new Promise<number>((r) => server.getConnections((_e, n) => r(n)));
    // Half-open, it would stay counted until the server's headers timeout (about 60 s).
    for (let i = 0; i < 100 && (await open()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await open()).toBe(0);
    sock.destroy();
  });
});
