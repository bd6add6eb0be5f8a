// Review s52h (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// Review s52h. refuseNew (lib/pipeline/save.ts, 641a8e8) says "... (N bytes without the head;
// Idempotency-Key records among them)" whenever the session's other fields take a quarter of the cap, even
// when no Idempotency-Key was ever sent: here a 3 KB task takes the room. Standard: "every answer must be
// true".
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

it('a 413 does not blame Idempotency-Key records a session never had', async () => {
  const app = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '8192' } });
  const c = await app.call('POST', '/v1/sessions', {
    body: {
      id: 's',
      task: 'plan: ' + 'word '.repeat(600),
      messages: [{ role: 'user', content: 'go' }],
    },
  });
  expect(c.status).toBe(201);
  const r = await app.call('POST', '/v1/sessions/s/messages', {
    body: { messages: [{ role: 'assistant', content: 'z'.repeat(6000) }] },
  });
  expect(r.status).toBe(413);
  expect(r.json.detail).not.toMatch(/Idempotency-Key/);
  // What takes the room is said (review s52f): the head, the other fields and the write records.
  expect(r.json.detail).toMatch(
    /its other fields \(task, metadata, refs\) and the write records it keeps/,
  );
  expect(r.json.detail).toMatch(/records it keeps \(\d+ bytes without the head\)/);
});
