// Review s53f (2026-12-06), fixed the same day; this test failed on the code before the fix.
// e8449bc (lib/http/app.ts isPreflight): only an OPTIONS "to a path the API serves" is a preflight, and
// "a path the API serves" is tested with pathPatterns (`^/v1/sessions$`, `^/v1/sessions/[^/]+$`, ...). The
// router serves those paths with a trailing slash too (Hono is not strict: GET /v1/sessions/ and
// GET /v1/sessions/{id}/ answer 200, and lib/ui/shell.ts relies on the same), so a browser's preflight
// to them (no Authorization: a preflight never carries it) now falls through to bearer auth and gets 401
// with no Access-Control-Allow-Methods: the browser blocks the request the API would have answered.
// Before e8449bc every OPTIONS under /v1 was answered 204.
import { expect, it } from 'vitest';
import { makeApp } from './helpers.js';

const ORIGIN = 'https://app.example.com';

it('a preflight to a path the API answers (trailing slash) is answered as a preflight', async () => {
  const app = await makeApp({ env: { SATCHEL_CORS_ORIGINS: ORIGIN } });
  expect((await app.call('POST', '/v1/sessions', { body: { id: 'abc', task: 't' } })).status).toBe(
    201,
  );
  for (const path of ['/v1/sessions/', '/v1/sessions/abc/']) {
    const get = await app.call('GET', path, { headers: { origin: ORIGIN } });
    expect(get.status, `GET ${path}`).toBe(200); // the API serves it
    const pre = await app.call('OPTIONS', path, {
      token: null,
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(pre.status, `preflight ${path}`).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(pre.headers.get('access-control-allow-methods')).toContain('GET');
  }
});
