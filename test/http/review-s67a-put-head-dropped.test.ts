// docs/api.md "The size cap's answers": a create, and since 2026-12-06 a PUT, answers
// Satchel-Dropped-First-User-Message: true when the system prompt and first user message alone are over
// the cap. Review s67a: a create did, a PUT that dropped the first user message the same way did not (only
// the write loop's create carried the pipeline's head_dropped to the route).
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

const env = { SATCHEL_MAX_SESSION_BYTES: '4096' };
const system = (n: number) => ({
  role: 'system',
  content: 'You are careful. ' + 'rule '.repeat(n),
});
const user = { role: 'user', content: 'please look at ' + 'this '.repeat(300) };

describe('PUT that drops the first user message', () => {
  it('create says so', async () => {
    const app = await makeApp({ env });
    const res = await app.call('POST', '/v1/sessions', {
      body: { id: 'c1', task: 't', messages: [system(560), user] },
    });
    expect(res.headers.get('satchel-dropped-first-user-message')).toBe('true');
  });

  it('PUT says so too', async () => {
    const app = await makeApp({ env });
    const made = await app.call('POST', '/v1/sessions', {
      body: { id: 'p1', task: 't', messages: [system(2), user] },
    });
    expect(made.status).toBe(201);
    // The system prompt grows (the user message is sent as stored): head alone over the cap.
    const res = await app.call('PUT', '/v1/sessions/p1', {
      body: { task: 't', messages: [system(560), user] },
      headers: { 'if-match': made.headers.get('etag')! },
    });
    const got = await app.call('GET', '/v1/sessions/p1');
    expect(res.status).toBe(200);
    expect(got.json.messages.some((m: any) => m.role === 'user')).toBe(false); // it was dropped
    expect(res.headers.get('satchel-dropped-first-user-message')).toBe('true');
  });
});
