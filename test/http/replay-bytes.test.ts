// A replayed write answered its receipt with the fields in another order than the first answer (review
// s52g): equal as JSON, but a client comparing the bytes of the two answers saw a difference. Now the
// replay is the first answer's bytes, for an append and a trim; a pop's replay differs only in `popped`,
// empty by design (the popped messages are kept nowhere: docs/api.md).
import { expect, it } from 'vitest';
import { makeApp } from './helpers.js';

it('a replay answers the same bytes as the write it replays', async () => {
  const app = await makeApp();
  const messages = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'u1' },
    { role: 'assistant', content: 'a1' },
    { role: 'user', content: 'u2' },
    { role: 'assistant', content: 'a2' },
  ];
  await app.call('POST', '/v1/sessions', { body: { id: 'rb', task: 't', messages } });
  const twice = async (path: string, body: unknown, key: string) => {
    const send = () => app.call('POST', path, { body, headers: { 'idempotency-key': key } });
    const first = await send();
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.status).toBe(first.status);
    if (!path.endsWith('/pop')) return expect(again.text).toBe(first.text);
    expect(again.text).toBe(first.text.replace(/"popped":\[.*\]\}$/, '"popped":[]}'));
    expect(first.json.popped).toHaveLength(1);
  };
  await twice(
    '/v1/sessions/rb/messages',
    { messages: [{ role: 'user', content: 'u3' }] },
    'k-append',
  );
  await twice('/v1/sessions/rb/pop', { count: 1 }, 'k-pop');
  await twice('/v1/sessions/rb/trim', { keep: 3 }, 'k-trim');
});
