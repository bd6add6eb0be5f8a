// Before 2026-12-05 the size cap protected the first user message only when it came right after the system
// prompt: a second system message or an assistant's greeting before it made it an ordinary group, dropped
// oldest first (turns 0, no Satchel-Dropped-First-User-Message), though the head was a hundred bytes. The
// contract protects the system prompt and the first user message, and drops the first user message only
// when the head alone exceeds the cap. Now the head is those two wherever the first user message is; the
// groups between them go first (they are the oldest), then those after it.
import { expect, it } from 'vitest';
import { makeApp } from './helpers.js';

const big = (c: string) => ({ role: 'assistant', content: c.repeat(3000) });

it('a second system message before the first user message does not unprotect it', async () => {
  const { call } = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '8192' } });
  const first = { role: 'user', content: 'the original request, which the cap must keep' };
  const created = await call('POST', '/v1/sessions', {
    body: {
      task: 'x',
      messages: [
        { role: 'system', content: 'you are terse' },
        { role: 'system', content: 'repository context: main branch' },
        first,
        big('a'),
        big('b'),
        big('c'),
      ],
    },
  });
  expect(created.status).toBe(201);
  // The head (system prompt + first user message) is ~100 bytes, far under 8192: it is not cut...
  expect(created.headers.get('satchel-dropped-first-user-message')).toBeNull();
  // ...so the first user message is still there, with the marker right after it (the second system
  // message, the oldest group, went first).
  const at = created.json.messages.findIndex((m: { role: string }) => m.role === 'user');
  expect(created.json.messages[at]).toEqual(first);
  expect(created.json.messages[at + 1].content).toMatch(
    /^\[satchel\] \d+ (earlier )?message groups? /,
  );
  expect(created.json.turns).toBe(1);
});

it('an assistant greeting before the first user message does not unprotect it', async () => {
  const { call } = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '8192' } });
  const first = { role: 'user', content: 'please fix the flaky test' };
  const created = await call('POST', '/v1/sessions', {
    body: {
      id: 'greet',
      task: 'x',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'assistant', content: 'Hi! How can I help?' },
        first,
      ],
    },
  });
  expect(created.status).toBe(201);
  for (const c of ['a', 'b', 'c'])
    expect(
      (await call('POST', '/v1/sessions/greet/messages', { body: { messages: [big(c)] } })).status,
    ).toBe(200);
  const got = await call('GET', '/v1/sessions/greet');
  expect(got.json.messages).toContainEqual(first);
  expect(got.json.turns).toBe(1);
});
