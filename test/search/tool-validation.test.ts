// The contract's conventions make a body that fails validation a 400 problem with `errors`; session_search's
// 200 `{"error"}` is for its tool-level errors: an unknown action, an empty query, an unknown id. A version
// of 2026-12-06 answered wrong types with the tool error (reverted the same day, review s52e).
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

it('wrong types are a 400 problem naming the field; an unknown action, an empty query, an unknown id are the tool error', async () => {
  const app = await makeApp();
  const call = (body: unknown) => app.call('POST', '/v1/session_search', { body });
  for (const [body, path] of [
    [{ action: 5 }, 'action'],
    [{ action: 'search', query: 'x', limit: '5' }, 'limit'],
    [{ action: 'search', query: 'x'.repeat(5000) }, 'query'],
  ] as const) {
    const res = await call(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json.errors.map((e: { path: string }) => e.path)).toContain(path);
  }
  for (const body of [
    { action: 'explode' },
    { action: 'search', query: '  ' },
    { action: 'get', id: 'no-such-session' },
  ]) {
    const res = await call(body);
    expect(res.status).toBe(200);
    expect(typeof res.json.error).toBe('string');
  }
});
