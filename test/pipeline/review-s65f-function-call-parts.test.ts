// Review s65f, F7. A Responses-format `function_call` content part carries its arguments as a JSON string,
// as a chat tool call does, but the walk read that string as text: `{"password": 73910264}` (a number) and
// `{"argv": ["psql", "--password", pw]}` were stored, while the same arguments as `tool_calls` were not.
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';
import { PW } from './review-s63f-stored.js';

/** A session created with an assistant message whose content is `parts`: the app and the create's answer. */
async function created(parts: unknown[]) {
  const app = await makeApp();
  const res = await app.call('POST', '/v1/sessions', {
    body: {
      task: 't',
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: parts },
      ],
    },
  });
  expect(res.status, res.text).toBe(201);
  return { app, res };
}

/** The stored files holding one of `secrets` after an assistant message whose content is `parts`. */
async function stored(parts: unknown[], secrets: string[]): Promise<string[]> {
  const { app } = await created(parts);
  await settleAll(app);
  return holders(app.dir, secrets);
}

const call = (args: unknown) => ({
  type: 'function_call',
  call_id: 'c1',
  name: 'sh',
  arguments: JSON.stringify(args),
});

describe("a function_call part's arguments are walked as JSON", () => {
  it.each([
    [{ user: 'app', password: 73910264 }, '73910264'],
    [{ argv: ['psql', '--password', PW] }, PW],
    [{ headers: { token: { value: 'Zx8Kq2Lm9Rt4' } } }, 'Zx8Kq2Lm9Rt4'],
  ])('%j is not stored', async (args, secret) =>
    expect(await stored([call(args)], [secret])).toEqual([]),
  );

  it('arguments that are not JSON, and clean JSON, are stored as sent', async () => {
    const parts = [
      { type: 'output_text', text: 'running it' },
      { ...call({ cmd: 'ls -la', timeout: 30 }) },
      { type: 'function_call', call_id: 'c2', name: 'sh', arguments: 'ls -la {x}' },
    ];
    const { app, res } = await created(parts);
    const got = await app.call('GET', `/v1/sessions/${res.json.id}`);
    expect(got.json.messages[1].content).toEqual(parts);
  });
});
