// Before 2026-12-05 GET /v1/sessions refused a metadata filter given twice ("which would otherwise be
// ignored and answer every session"), but took the first of two `limit`, `cursor` or `updated_after`
// values without reading the second, and ignored a misspelled parameter (`updated_afer`), answering every
// session: 200 to a question the client did not ask. Now both are 400 naming the parameter.
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

describe('GET /v1/sessions parameters', () => {
  for (const query of [
    'updated_after=2999-01-01T00:00:00Z&updated_after=not-a-time',
    'updated_after=2000-01-01T00:00:00Z&updated_after=2999-01-01T00:00:00Z',
    'limit=1&limit=abc',
    'limit=1&limit=50',
    'cursor=&cursor=not-a-cursor',
    'updated_afer=2999-01-01T00:00:00Z',
    'limt=1',
  ]) {
    it(`${query}: 400 naming the parameter`, async () => {
      const app = await makeApp();
      await app.call('POST', '/v1/sessions', { body: { task: 'one' } });
      const res = await app.call('GET', `/v1/sessions?${query}`);
      expect(res.status, res.text.slice(0, 200)).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.json.errors?.[0]?.path).toBe(query.split('=')[0]);
    });
  }

  it('each known parameter once, with a metadata filter, still answers', async () => {
    const app = await makeApp();
    await app.call('POST', '/v1/sessions', { body: { task: 'one', metadata: { k: 'v' } } });
    await app.call('POST', '/v1/sessions', { body: { task: 'two' } });
    const res = await app.call(
      'GET',
      '/v1/sessions?limit=5&updated_after=2000-01-01T00:00:00Z&metadata.k=v',
    );
    expect(res.status).toBe(200);
    expect(res.json.sessions.map((s: { task: string }) => s.task)).toEqual(['one']);
  });
});
