import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { chatClient, MODEL_ANSWER_MAX_BYTES, ModelError } from '../../lib/continue/model.js';
import { makeApp } from '../http/helpers.js';

// Review s52a (finding 6): the model client read the whole answer with `res.text()`, however large: an
// endpoint streaming without end filled the memory. It now reads at most MODEL_ANSWER_MAX_BYTES.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers
      .splice(0)
      .map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))),
  );
});

/** A model endpoint whose answer never ends (chunked, no length), or declares `declared` bytes. */
async function streamingServer(status = 200, declared?: number) {
  const seen = { sent: 0, closed: 0 };
  const chunk = Buffer.alloc(1024 * 1024, 'x');
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(declared ? { 'content-length': String(declared) } : {}),
    });
    res.on('close', () => seen.closed++);
    res.write('{"choices":[{"message":{"content":"');
    const more = () => {
      // A bound for the test itself: 1 GiB, far past any limit here.
      while (!res.destroyed && seen.sent < 1024 * chunk.length) {
        seen.sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
    };
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

describe('the model answer is read to a bound', () => {
  it('a body past the bound is an invalid answer, and the stream is cancelled', async () => {
    const endpoint = await streamingServer();
    const chat = chatClient({ url: endpoint.url }, fetch, 256 * 1024);
    const err = await chat(request, AbortSignal.timeout(20_000)).catch((e: unknown) => e);
    expect(ModelError.is(err)).toBe(true);
    expect(err).toMatchObject({ kind: 'invalid' });
    expect((err as Error).message).toBe('the model endpoint answered more than 262144 bytes');
    await expect.poll(() => endpoint.seen.closed, { timeout: 5000 }).toBe(1);
    expect(endpoint.seen.sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('a declared length past the bound is refused before reading', async () => {
    const endpoint = await streamingServer(200, 64 * 1024 * 1024);
    const chat = chatClient({ url: endpoint.url }, fetch, 1024);
    const err = await chat(request, AbortSignal.timeout(20_000)).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'invalid' });
  });

  it('an error status is answered without reading its body', async () => {
    const endpoint = await streamingServer(500);
    const chat = chatClient({ url: endpoint.url }, fetch, 1024);
    const err = await chat(request, AbortSignal.timeout(20_000)).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'status', status: 500 });
  });

  it('a continue whose model streams past MODEL_ANSWER_MAX_BYTES answers 502, message stored', async () => {
    const endpoint = await streamingServer();
    const app = await makeApp({
      env: { SATCHEL_MODEL_URL: endpoint.url, SATCHEL_MODEL: 'test-model' },
    });
    expect((await app.call('POST', '/v1/sessions', { body: { id: 's1', task: 't' } })).status).toBe(
      201,
    );
    const res = await app.call('POST', '/v1/sessions/s1/continue', { body: { message: 'hi' } });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json.detail).toContain(`more than ${MODEL_ANSWER_MAX_BYTES} bytes`);
    expect(res.json.detail).toContain('your message was stored');
    expect(endpoint.seen.sent).toBeLessThan(MODEL_ANSWER_MAX_BYTES + 64 * 1024 * 1024);
    const stored = (await app.call('GET', '/v1/sessions/s1')).json.messages;
    expect(stored.map((m: { role: string }) => m.role)).toEqual(['user']);
  });
});
