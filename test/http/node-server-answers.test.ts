// Before 2026-12-05 two requests were answered by Node's own http.Server before the app or the
// server's clientError handler saw them, with an empty body and no problem+json: an HTTP/1.1 request
// without Host (an empty chunked 400) and an Expect other than 100-continue (an empty 417). Now both are
// problem+json, as every other request Node parses but cannot serve.
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeServer } from '../../lib/http/node-server.js';
import { makeApp, TOKENS } from './helpers.js';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

function send(port: number, request: string, ms = 2000): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    sock.on('error', () => undefined);
    sock.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const t = setTimeout(() => (sock.destroy(), resolve(out)), ms);
    sock.on('close', () => (clearTimeout(t), resolve(out)));
    sock.on('connect', () => sock.write(request));
  });
}

async function serve() {
  const app = await makeApp();
  await app.call('POST', '/v1/sessions', { body: { task: 't', id: 'existing' } });
  const server = createNodeServer(app.app.fetch);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

function expectProblem(answer: string, status: number) {
  expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  const head = answer.slice(0, answer.indexOf('\r\n\r\n')).toLowerCase();
  expect(head).toContain('content-type: application/problem+json');
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  expect(JSON.parse(body)).toMatchObject({ status, detail: expect.any(String) });
}

describe('requests Node answers before the app (review s51e)', () => {
  it('an HTTP/1.1 request without Host: 400 problem+json, not an empty chunked 400', async () => {
    const port = await serve();
    const answer = await send(
      port,
      `GET /v1/sessions HTTP/1.1\r\nAuthorization: Bearer ${TOKENS.laptop}\r\n\r\n`,
    );
    expectProblem(answer, 400);
  });

  it('an Expect other than 100-continue: 417 problem+json, not an empty 417', async () => {
    const port = await serve();
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'x' }] });
    const answer = await send(
      port,
      `POST /v1/sessions/existing/messages HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKENS.laptop}\r\n` +
        `Content-Type: application/json\r\nExpect: 200-ok\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expectProblem(answer, 417);
  });
});
