// Review s61d (finding 2), fixed the same day; this test failed on the code before the fix.
// The router (hono/tiny's PatternRouter) takes one trailing slash on every route: GET /v1/sessions/latest/
// answers as GET /v1/sessions/latest. The 405 decision and the open-route decision (lib/http/app.ts
// pathPatterns, isOpen, notFoundOrNotAllowed) tested the path as sent, so with the slash a wrong method
// answered 404 instead of 405 with `Allow`, GET /v1/health/ without a token answered 401, and a webhook
// URL written with a slash answered a bearer-token 401 instead of the hook's own answers.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

const SECRET = 'trailing-slash-hook-secret';
const HOOKS = JSON.stringify({ ci: { secret: SECRET, namespace: 'alice', session: 'ops-log' } });

/** An app with session `s` in alice and the hook `ci`. */
async function setup() {
  const app = await makeApp({ env: { SATCHEL_HOOKS: HOOKS } });
  const made = await app.call('POST', '/v1/sessions', {
    body: { id: 's', task: 't', messages: [{ role: 'user', content: 'u' }] },
  });
  expect(made.status).toBe(201);
  return app;
}

/** Headers of the Satchel webhook scheme for `body`, signed now with `secret`. */
function signed(body: string, secret = SECRET): Record<string, string> {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return { 'content-type': 'application/json', 'x-satchel-signature': `t=${t},v1=${v1}` };
}

describe('a trailing slash is answered as the path without it', () => {
  it.each([
    ['PUT', '/v1/sessions/latest', 'GET, HEAD'],
    ['DELETE', '/v1/sessions/latest', 'GET, HEAD'],
    ['PATCH', '/v1/sessions/s', 'GET, PUT, DELETE, HEAD'],
    ['GET', '/v1/sessions/s/messages', 'POST'],
    ['POST', '/v1/health', 'GET, HEAD'],
    ['GET', '/v1/hooks/ci', 'POST'],
  ])('%s %s/ is 405 with Allow: %s', async (method, path, allow) => {
    const app = await setup();
    for (const p of [path, `${path}/`]) {
      const r = await app.call(method, p, {
        token: path.startsWith('/v1/sessions') ? undefined : null,
      });
      expect(r.status, `${method} ${p}`).toBe(405);
      expect(r.headers.get('allow'), `${method} ${p}`).toBe(allow);
    }
  });

  it('GET and HEAD /v1/health/ need no token', async () => {
    const app = await setup();
    for (const method of ['GET', 'HEAD'])
      for (const path of ['/v1/health', '/v1/health/'])
        expect((await app.call(method, path, { token: null })).status, `${method} ${path}`).toBe(
          200,
        );
  });

  it("a webhook URL with a slash gets the hook's own answers, not a bearer-token 401", async () => {
    const app = await setup();
    const body = JSON.stringify({ type: 'deploy', ok: true });
    const unknown = await app.call('POST', '/v1/hooks/nope/', { token: null, raw: body });
    expect(unknown.status).toBe(404);
    expect(unknown.json.detail).toContain('no webhook called "nope"');
    const forged = await app.call('POST', '/v1/hooks/ci/', {
      token: null,
      raw: body,
      headers: signed(body, 'not-the-secret'),
    });
    expect(forged.status).toBe(401);
    expect(forged.json.detail).not.toContain('Bearer');
    const delivered = await app.call('POST', '/v1/hooks/ci/', {
      token: null,
      raw: body,
      headers: signed(body),
    });
    expect(delivered.status).toBe(202);
  });

  it('two trailing slashes are not a route (the router takes one): 404 with a token', async () => {
    const app = await setup();
    for (const [method, path] of [
      ['PUT', '/v1/sessions/latest//'],
      ['PATCH', '/v1/sessions/s//'],
      ['GET', '/v1/health//'],
    ] as const) {
      const r = await app.call(method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.headers.get('allow')).toBeNull();
    }
    // Without a token an unknown path stays 401: it says nothing of what exists.
    expect((await app.call('GET', '/v1/health//', { token: null })).status).toBe(401);
  });
});
