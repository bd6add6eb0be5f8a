import { describe, expect, it } from 'vitest';
import { ConfigError, parseOrigins } from '../../lib/server/config.js';
import { makeApp } from './helpers.js';

// SATCHEL_CORS_ORIGINS (contract v1.1): a browser app on a listed origin may call the API; a preflight
// is answered without a token; other origins get no CORS headers; none are allowed by default.

const ORIGIN = 'https://app.example.com';

describe('CORS', () => {
  it('answers a preflight from a listed origin without a token, and exposes the API headers', async () => {
    const app = await makeApp({
      env: { SATCHEL_CORS_ORIGINS: `${ORIGIN}, http://localhost:5173` },
    });
    const pre = await app.call('OPTIONS', '/v1/sessions', {
      token: null,
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Idempotency-Key/);
    const created = await app.call('POST', '/v1/sessions', {
      headers: { origin: ORIGIN },
      body: { task: 'from a browser' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(created.headers.get('access-control-expose-headers')).toMatch(/ETag/);
  });

  it('gives another origin no CORS headers, and none at all when unset', async () => {
    const listed = await makeApp({ env: { SATCHEL_CORS_ORIGINS: ORIGIN } });
    const other = await listed.call('GET', '/v1/sessions', {
      headers: { origin: 'https://evil.example' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const unset = await makeApp();
    const res = await unset.call('GET', '/v1/sessions', { headers: { origin: ORIGIN } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a value that is not an origin, naming it', () => {
    expect(() => parseOrigins('https://app.example.com/path')).toThrow(ConfigError);
    expect(() => parseOrigins('app.example.com')).toThrow(/app\.example\.com/);
    expect(parseOrigins(' https://a.example , http://localhost:3000 ')).toEqual([
      'https://a.example',
      'http://localhost:3000',
    ]);
  });
});
