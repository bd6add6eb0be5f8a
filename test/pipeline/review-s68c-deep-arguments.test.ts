// Review s68c: a tool call's arguments are JSON inside a string, which the body's depth check cannot see;
// redactArguments parsed and walked them at any depth (review s59e), and JSON.parse builds every level
// first: 4 Mi levels in one call's arguments took 41 s and a heap of gigabytes. Past 65,536 levels (no
// tool's arguments) they are not parsed: they go whole as `{"redacted":true}`, counted as a redaction.
import { afterEach, expect, it, vi } from 'vitest';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { redactArguments } from '../../lib/pipeline/save.js';
import { makeApp, settleAll } from '../http/helpers.js';

afterEach(() => vi.restoreAllMocks());

const redactor = createRedactor(rules);
const text = (s: string) => redactor.redact(s).text;
const PASSWORD = 'Tr0ub4dor&3xyz';
const args = (depth: number) =>
  `{"password": ["${PASSWORD}"], "d": ${'['.repeat(depth)}${']'.repeat(depth)}}`;

it('arguments nested past 65,536 levels go whole, counted, and are never parsed', () => {
  const parse = vi.spyOn(JSON, 'parse');
  let hits = 0;
  expect(redactArguments(args(100_000), text, () => void hits++)).toBe('{"redacted":true}');
  expect(hits).toBe(1);
  expect(parse).not.toHaveBeenCalled();
  parse.mockRestore();
  // Within the bound they are read as JSON, as review s59e made them.
  expect(redactArguments(args(60_000), text)).toBe(
    `{"password":["[REDACTED]"],"d":${'['.repeat(60_000)}${']'.repeat(60_000)}}`,
  );
});

it('a create with such a tool call is stored, its arguments replaced and the redaction said', async () => {
  const app = await makeApp();
  const created = await app.call('POST', '/v1/sessions', {
    body: {
      task: 'deep arguments',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: args(100_000) } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
      ],
    },
  });
  expect(created.status).toBe(201);
  expect(created.headers.get('satchel-redactions')).toBe('1');
  await settleAll(app);
  const got = await app.call('GET', `/v1/sessions/${created.json.id}`);
  expect(got.json.messages[1].tool_calls[0].function.arguments).toBe('{"redacted":true}');
});
