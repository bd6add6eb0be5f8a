import { expect, it } from 'vitest';
import { makeApp } from './helpers.js';

// A PUT answers the session rather than a receipt, as a create does: what the save pipeline did comes in
// the same headers (until 2026-12-06 a PUT whose body the size cap cut, or that grew only its metadata
// near the cap, said nothing of the groups dropped but the marker message: review s54c).
it('a PUT says what the save pipeline did: secrets redacted and groups the size cap dropped', async () => {
  const { call } = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '4096' } });
  const made = await call('POST', '/v1/sessions', { body: { id: 'p', task: 't' } });
  expect(made.headers.get('satchel-dropped-groups')).toBe('0');
  const messages = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'key sk-proj-Q7vXk2LmN9pR4tY6wZ8aB1cD3eF5gH7jK9mN2pQ4rS6tU8vW0xY2' },
    ...[1, 2, 3, 4].map((i) => ({ role: 'assistant', content: String(i).repeat(1200) })),
  ];
  const put = await call('PUT', '/v1/sessions/p', {
    headers: { 'if-match': '"1"' },
    body: { task: 't', messages },
  });
  expect(put.status).toBe(200);
  expect(put.headers.get('satchel-redactions')).toBe('1');
  const dropped = Number(put.headers.get('satchel-dropped-groups'));
  expect(dropped).toBeGreaterThan(0);
  const marker = new RegExp(`^\\[satchel\\] ${dropped} message groups? (was|were) removed`);
  expect(put.json.messages.filter((m: { content: string }) => marker.test(m.content))).toHaveLength(
    1,
  );
});
