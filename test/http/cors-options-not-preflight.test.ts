import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

// Contract v1.1 "Methods": a known path with a method it does not serve answers 405 with Allow; an
// unknown path is 404. With SATCHEL_CORS_ORIGINS set, every OPTIONS under /v1 was answered 204 (review
// s53b), also one that is no CORS preflight (no Origin or no Access-Control-Request-Method) and one to
// a path that does not exist. Only a preflight to a path the API serves is answered 204 now.
const ORIGIN = 'https://app.example.com';

describe('OPTIONS with SATCHEL_CORS_ORIGINS set', () => {
  it('an OPTIONS that is not a preflight answers as without CORS: 405 with Allow', async () => {
    const plain = await makeApp();
    const cors = await makeApp({ env: { SATCHEL_CORS_ORIGINS: ORIGIN } });
    const without = await plain.call('OPTIONS', '/v1/sessions');
    expect(without.status).toBe(405);
    const notPreflights: Record<string, string>[] = [
      {},
      { origin: ORIGIN },
      { 'access-control-request-method': 'POST' },
    ];
    for (const headers of notPreflights) {
      const withCors = await cors.call('OPTIONS', '/v1/sessions', { headers });
      expect(withCors.status, JSON.stringify(headers)).toBe(405);
      expect(withCors.headers.get('allow')).toBe(without.headers.get('allow'));
      expect(withCors.headers.get('content-type')).toBe('application/problem+json');
    }
    // Without a token it is the 401 every other method gets there.
    expect((await cors.call('OPTIONS', '/v1/sessions', { token: null })).status).toBe(401);
  });

  it('an OPTIONS to a path that does not exist is a 404, a preflight to it too', async () => {
    const cors = await makeApp({ env: { SATCHEL_CORS_ORIGINS: ORIGIN } });
    expect((await cors.call('OPTIONS', '/v1/no/such/path')).status).toBe(404);
    const pre = await cors.call('OPTIONS', '/v1/no/such/path', {
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET' },
    });
    expect(pre.status).toBe(404);
    expect(pre.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('a preflight to a path the API serves is still a 204 without a token', async () => {
    const cors = await makeApp({ env: { SATCHEL_CORS_ORIGINS: ORIGIN } });
    for (const path of ['/v1/sessions', '/v1/sessions/abc', '/v1/sessions/abc/messages']) {
      const pre = await cors.call('OPTIONS', path, {
        token: null,
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
      });
      expect(pre.status, path).toBe(204);
      expect(pre.headers.get('access-control-allow-methods')).toBe('GET,POST,PUT,DELETE');
    }
  });
});
