import { request as httpRequest } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { makeApp, TOKENS } from '../http/helpers.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('the access log', () => {
  it('one line per request: method, route pattern, status, ms, namespace, device; never a token or an id', async () => {
    const app = await makeApp();
    const created = await app.call('POST', '/v1/sessions', { body: { task: 'logged' } });
    const id = created.json.id as string;
    await app.call('GET', `/v1/sessions/${id}`, { token: TOKENS.phone });
    await app.call('GET', '/v1/sessions/latest');
    await app.call('GET', '/v1/sessions', { token: 'tok_unknown_0123456789' });
    await app.call('GET', '/v1/health', { token: null });
    const lines = app.logs.find('request');
    expect(lines.map((l) => [l.method, l.route, l.status, l.namespace, l.device])).toEqual([
      ['POST', '/v1/sessions', 201, 'alice', 'laptop'],
      ['GET', '/v1/sessions/:id', 200, 'alice', 'phone'],
      ['GET', '/v1/sessions/latest', 200, 'alice', 'laptop'],
      ['GET', '/v1/sessions', 401, undefined, undefined],
      ['GET', '/v1/health', 200, undefined, undefined],
    ]);
    for (const l of lines) expect(l.ms).toEqual(expect.any(Number));
    const all = JSON.stringify(app.logs.records);
    expect(all).not.toContain(id);
    for (const token of Object.values(TOKENS)) expect(all).not.toContain(token);
    expect(all).not.toContain('tok_unknown');
  });

  it('a secret-looking id in the path never reaches the log, on 4xx or 5xx', async () => {
    const app = await makeApp();
    const secretId = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    expect((await app.call('GET', `/v1/sessions/${secretId}`)).status).toBe(404);
    expect((await app.call('PATCH', `/v1/sessions/${secretId}`)).status).toBe(405);
    const all = JSON.stringify(app.logs.records);
    expect(all).not.toContain(secretId);
    // A method no route serves names no pattern.
    expect(app.logs.find('request').map((l) => l.route)).toEqual(['/v1/sessions/:id', '-']);
  });

  it('through the Node server, a HEAD the path does not serve answers 405 with Allow (review)', async () => {
    const server = await startSatchelServer();
    servers.push(server);
    for (const [path, allow] of [
      ['/v1/session_search', 'POST'],
      ['/v1/sessions/abc/messages', 'POST'],
    ]) {
      const res = await fetch(`${server.url}${path}`, { method: 'HEAD' });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow'), path).toBe(allow);
    }
  });

  it('a client that aborts its upload is logged at info as an abort, not as a 500', async () => {
    const server = await startSatchelServer();
    servers.push(server);
    const { port } = new URL(server.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/sessions',
        headers: { 'content-type': 'application/json', 'content-length': '100000' },
      });
      req.on('error', () => resolve());
      req.write('{"task": "half a body');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    await expect
      .poll(() => server.logs.find('request aborted by the client').length, { timeout: 5000 })
      .toBe(1);
    const [line] = server.logs.find('request aborted by the client');
    expect(line).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/v1/sessions',
      aborted: true,
    });
    expect(server.logs.records.filter((r) => r.level !== 'info')).toEqual([]);
  });
});
