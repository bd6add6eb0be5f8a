// Review s59e: a client that sends a whole request and then closes its sending side (shutdown(SHUT_WR):
// `nc -N`, `printf … | nc -q`, some proxies and harnesses) still reads the answer. Before 2026-12-06 the
// Node server kept Node's default (httpAllowHalfOpen false): on the client's FIN it aborted the request and
// ended the socket, so the append went on and landed (the access log said 200) while the client received
// zero bytes and could not tell whether its write happened.
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeServer } from '../../lib/http/node-server.js';
import { makeApp, settleAll, TOKENS } from './helpers.js';

/**
 * Writes `parts` on a new connection, then half-closes it; resolves with what came back before the server
 * closed it (a connection the server leaves open is cut after 5 s and reads as `[left open]`).
 */
function halfClosed(port: number, parts: string[]): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    sock.on('data', (d: Buffer) => (out += d.toString('latin1')));
    sock.on('error', () => undefined);
    const t = setTimeout(() => ((out += '[left open]'), sock.destroy()), 5000);
    sock.on('close', () => (clearTimeout(t), resolve(out)));
    sock.on('connect', () => {
      for (const p of parts) sock.write(p);
      sock.end();
    });
  });
}

const head = (method: string, path: string, length?: number) =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKENS.laptop}\r\n` +
  (length === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${length}\r\n`) +
  '\r\n';

describe('the Node server and a client that half-closes after its request', () => {
  let app: Awaited<ReturnType<typeof makeApp>>;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    app = await makeApp();
    expect((await app.call('POST', '/v1/sessions', { body: { task: 't', id: 'hc' } })).status).toBe(
      201,
    );
    server = createNodeServer(app.app.fetch);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const revision = async () => (await app.call('GET', '/v1/sessions/hc')).json.revision as number;

  it('an append that lands is answered, and the connection closes after it', async () => {
    const before = await revision();
    const msg = '{"messages":[{"role":"user","content":"half-closed"}]}';
    const out = await halfClosed(port, [
      head('POST', '/v1/sessions/hc/messages', msg.length) + msg,
    ]);
    await settleAll(app);
    expect(await revision()).toBe(before + 1); // the append landed ...
    expect(out).toMatch(/^HTTP\/1\.1 200 /); // ... and the client was told (it got "" before)
    expect(out).toContain(`"revision":${before + 1}`);
    expect(out).not.toContain('[left open]');
  });

  it('a GET is answered', async () => {
    const out = await halfClosed(port, [head('GET', '/v1/sessions/hc')]);
    expect(out).toMatch(/^HTTP\/1\.1 200 /);
    expect(out).toContain('"id":"hc"');
  });

  it('two pipelined requests before the close are both answered', async () => {
    const out = await halfClosed(port, [
      head('GET', '/v1/health') + head('GET', '/v1/sessions/hc'),
    ]);
    expect(out.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
  });

  it('a body cut off by the close stores nothing, and the connection still closes', async () => {
    const before = await revision();
    const msg = '{"messages":[{"role":"user","content":"cut off"}]}';
    const out = await halfClosed(port, [
      head('POST', '/v1/sessions/hc/messages', msg.length + 40) + msg,
    ]);
    await settleAll(app);
    expect(await revision()).toBe(before);
    // Whatever is sent (Node's parser sees the end of input mid-body), it is never a 2xx.
    expect(out).not.toMatch(/^HTTP\/1\.1 2/);
    expect(out).not.toContain('[left open]');
  });
});
