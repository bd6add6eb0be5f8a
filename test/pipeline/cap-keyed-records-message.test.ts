// Review s52f: under the minimum cap (4096), the write records a session keeps for 24 hours (up to 24
// Idempotency-Key records in the object) can take the room a small message needs; the 413 said "the new
// message (33 bytes) cannot be stored in a session of at most 4096 bytes", which was not why. Now the 413
// says what takes the room. (The records still take it: left, with the cap's minimum, in the notes.)
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

it('a 413 under a small cap names the write records kept beside the head when they take the room', async () => {
  const app = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '4096' } });
  await app.call('POST', '/v1/sessions', {
    body: {
      id: 's',
      task: 't',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'first' },
      ],
    },
  });
  let refused: { status: number; json: { detail: string } } | undefined;
  for (let i = 0; i < 20 && !refused; i++) {
    const r = await app.call('POST', '/v1/sessions/s/messages', {
      body: {
        messages: [{ role: i % 2 ? 'assistant' : 'user', content: `m${i} ` + 'z'.repeat(100) }],
      },
      headers: { 'idempotency-key': `k${i}` },
    });
    if (r.status !== 200) refused = r;
  }
  const small = await app.call('POST', '/v1/sessions/s/messages', {
    body: { messages: [{ role: 'user', content: 'short' }] },
  });
  const answer = refused ?? small;
  expect(answer.status).toBe(413);
  expect(answer.json.detail).toMatch(/write records it keeps for 24 hours \(\d+ bytes/);
});
