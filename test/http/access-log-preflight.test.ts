import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

// Contract v1.1 "Logs": one line per request. With SATCHEL_CORS_ORIGINS set, the CORS middleware was
// registered before the access log and answered every OPTIONS under /v1 itself, so preflights had no
// line (review s53b). The access log now runs first. A preflight's method (OPTIONS) is one no route
// serves, so its line names no pattern (`-`), as a 405's does.
const ORIGIN = 'https://app.example.com';

describe('access log with CORS configured', () => {
  it('a preflight gets its request line', async () => {
    const app = await makeApp({ env: { SATCHEL_CORS_ORIGINS: ORIGIN } });
    const pre = await app.call('OPTIONS', '/v1/sessions', {
      token: null,
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    const lines = app.logs.find('request');
    expect(lines.map((l) => [l.method, l.route, l.status, l.namespace])).toEqual([
      ['OPTIONS', '-', 204, undefined],
    ]);
    expect(lines[0]!.ms).toEqual(expect.any(Number));
  });

  it('a preflight from an origin that is not listed is logged too, without its id', async () => {
    const app = await makeApp({ env: { SATCHEL_CORS_ORIGINS: ORIGIN } });
    const id = 'preflight-secret-looking-id';
    const pre = await app.call('OPTIONS', `/v1/sessions/${id}/messages`, {
      token: null,
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(app.logs.find('request').map((l) => l.status)).toEqual([204]);
    expect(JSON.stringify(app.logs.records)).not.toContain(id);
  });
});
