// Contract v1.1 "Logs": one line per request. lib/http/node-server.ts answers some requests itself,
// before the app and its access log: an HTTP/1.1 request without Host (400), an Expect it cannot meet
// (417), a request its parser refuses (431, 400), a malformed Host or request target (400). None had a
// line, so a flood of them was invisible in the operator's log (review s53b). Each now gets its
// `request` line (method when known, route `-`, status, ms), in functions/node.ts too.
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeServer } from '../../lib/http/node-server.js';
import { makeApp } from '../http/helpers.js';
import { listeningUrl, spawnEntry } from '../support/node-entry.js';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** Sends `request` on a new connection; everything the server sends until it closes it. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(request));
    let out = '';
    sock.on('data', (d: Buffer) => (out += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => resolve(out));
  });
}

const REQUESTS: [string, RegExp][] = [
  ['GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 400 /],
  [
    'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: bogus\r\nContent-Length: 2\r\n' +
      'Connection: close\r\n\r\n{}',
    /^HTTP\/1\.1 417 /,
  ],
  [
    `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20000)}\r\nConnection: close\r\n\r\n`,
    /^HTTP\/1\.1 431 /,
  ],
  ['GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nbad header line\r\n\r\n', /^HTTP\/1\.1 400 /],
  ['GET /v1/health HTTP/1.1\r\nHost: [bad\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 400 /],
  ['GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 200 /],
];

describe('requests the Node server answers before the app', () => {
  it('get a request line each, and those the app answers still exactly one', async () => {
    const app = await makeApp();
    const server = createNodeServer(app.app.fetch, '127.0.0.1', app.logs);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    for (const [request, answer] of REQUESTS) expect(await raw(port, request)).toMatch(answer);
    await expect
      .poll(() => app.logs.find('request').length, { timeout: 5000 })
      .toBe(REQUESTS.length);
    const lines = app.logs.find('request', 'info');
    expect(lines.map((l) => [l.method, l.route, l.status])).toEqual([
      ['GET', '-', 400],
      ['POST', '-', 417],
      [undefined, '-', 431],
      [undefined, '-', 400],
      ['GET', '-', 400],
      ['GET', '/v1/health', 200],
    ]);
    for (const l of lines) expect(l.ms).toEqual(expect.any(Number));
    expect(JSON.stringify(app.logs.records)).not.toContain('aaaaaaaa');
  });

  it('functions/node.ts logs them', async () => {
    const child = spawnEntry();
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    try {
      const port = Number(new URL(await listeningUrl(child)).port);
      expect(await raw(port, REQUESTS[0]![0])).toMatch(/^HTTP\/1\.1 400 /);
      await expect.poll(() => stdout.includes('"status":400'), { timeout: 5000 }).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    const line = stdout.split('\n').find((l) => l.includes('"status":400'))!;
    expect(JSON.parse(line)).toMatchObject({
      msg: 'request',
      method: 'GET',
      route: '-',
      status: 400,
    });
  }, 60_000);
});
