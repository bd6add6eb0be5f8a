// The contract: session_search's tool-level errors (unknown action, empty query, unknown id) come back as
// {"error"} with 200, as a tool result does; a body that is not JSON is a 400. Until 2026-12-06 a call
// whose arguments had the wrong type (`"action": 5`, `"limit": "5"`, what a model sends) was a 400 problem,
// which an agent's tool loop does not hand back to the model as a result.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

it('a call of the wrong shape is the tool error with 200, naming the field; JSON that does not parse is 400', async () => {
  const app = await makeApp();
  const call = (body: unknown) => app.call('POST', '/v1/session_search', { body });
  for (const [body, field] of [
    [{ action: 5 }, 'action'],
    [{ action: 'search', query: 5 }, 'query'],
    [{ action: 'search', query: 'x', limit: '5' }, 'limit'],
    [{ action: 'get', id: 7 }, 'id'],
    [{ action: 'search', query: 'x'.repeat(5000) }, 'query'],
    [[], '(body)'],
    [null, '(body)'],
  ] as const) {
    const res = await call(body);
    expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(200);
    expect(res.json.error).toMatch(/^session_search takes \{"action"/);
    expect(res.json.error).toContain(`${field}: `);
  }
  const broken = await app.call('POST', '/v1/session_search', {
    raw: '{"action": "list"',
    headers: { 'content-type': 'application/json' },
  });
  expect(broken.status).toBe(400);
  expect(broken.headers.get('content-type')).toContain('application/problem+json');
  // Other routes still answer a body of the wrong shape with a 400 problem.
  expect((await app.call('POST', '/v1/sessions', { body: { task: 5 } })).status).toBe(400);
});
