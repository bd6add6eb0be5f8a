import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { describe, expect, it } from 'vitest';
import { apiCors, CORS_ALLOW, CORS_EXPOSE } from '../../lib/http/app.js';

// lib/http/app.ts answers CORS itself (hono/cors's general options cost the Worker bundle about 300 B):
// for the same requests it must send what hono/cors sends with the options the app gave it before.

const ORIGINS = ['https://app.example.com', 'http://localhost:5173'];
// hono/cors with the options the app gave it before, from the same header lists.
const honoOptions = {
  origin: ORIGINS,
  allowMethods: ['GET', 'POST', 'PUT', 'DELETE'],
  allowHeaders: CORS_ALLOW,
  exposeHeaders: CORS_EXPOSE,
  maxAge: 600,
};

function appWith(middleware: ReturnType<typeof cors>) {
  const app = new Hono();
  app.use('/v1/*', middleware);
  app.get('/v1/ok', (c) => c.json({ ok: true }, 200, { ETag: '"1"' }));
  app.post('/v1/ok', (c) => c.body(null, 204));
  app.get('/v1/fails', () => {
    throw new Error('boom');
  });
  app.onError((_err, c) => c.json({ status: 500 }, 500));
  return app;
}

const requests: [string, RequestInit][] = [
  ['/v1/ok', { headers: { origin: ORIGINS[0]! } }],
  ['/v1/ok', { headers: { origin: 'https://evil.example' } }],
  ['/v1/ok', {}],
  ['/v1/ok', { method: 'POST', headers: { origin: ORIGINS[1]! } }],
  [
    '/v1/ok',
    {
      method: 'OPTIONS',
      headers: {
        origin: ORIGINS[0]!,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    },
  ],
  ['/v1/ok', { method: 'OPTIONS', headers: { origin: 'https://evil.example' } }],
  ['/v1/missing', { headers: { origin: ORIGINS[0]! } }],
  ['/v1/fails', { headers: { origin: ORIGINS[0]! } }],
];

describe("the API's CORS answers as hono/cors did", () => {
  it.each(requests)('%s %j', async (path, init) => {
    const ours = await appWith(apiCors(ORIGINS)).request(path, init);
    const theirs = await appWith(cors(honoOptions)).request(path, init);
    expect(ours.status).toBe(theirs.status);
    expect([...ours.headers].sort()).toEqual([...theirs.headers].sort());
    expect(await ours.text()).toBe(await theirs.text());
  });
});
