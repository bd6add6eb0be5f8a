import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { exactJson } from '../../lib/model/exact-json.js';
import { prettyArgs } from '../../lib/ui/client.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

// Review s59c: `satchel session show` printed tool-call arguments as JSON.stringify(JSON.parse(stored)), so
// the transcript showed numbers and keys other than the stored ones: 12345678901234567891 as
// 12345678901234567000, 1e400 as null, 1.50 as 1.5, a repeated key without its first value. The server
// keeps arguments exactly (api.md, "Numbers"); the session browser reformats them only when that reads
// back exactly as stored. Now the CLI keeps the same rule: one line when exact, else as stored.

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

/** Stores a session with one tool call whose arguments are `args`, and prints it with the CLI. */
async function showArguments(args: string): Promise<string> {
  const client = new SatchelClient({ url: server.url });
  const { session } = await client.create({
    task: 'pay',
    messages: [
      { role: 'user', content: 'pay the invoice' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'transfer', arguments: args } },
        ],
      },
    ],
  });
  const r = await satchel(['session', 'show', session.id], { SATCHEL_URL: server.url });
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.split('\n');
  const at = lines.indexOf('  → tool call transfer #c1');
  expect(at, r.stdout).toBeGreaterThan(0);
  return lines.slice(at + 1, lines.indexOf('', at)).join('\n');
}

describe('satchel session show: tool-call arguments (review s59c)', () => {
  it.each([
    ['an integer past 2^53', '{"account":12345678901234567891}'],
    ['a number past float64', '{"amount":1e400}'],
    ['a trailing zero', '{"fee":1.50}'],
    ['a repeated key', '{"a":1,"a":2}'],
    ['an escape JSON.stringify writes otherwise', '{"k":"\\u0041"}'],
    ['an integer-like key after another', '{"b":1,"2":0}'],
  ])('%s: printed as stored', async (_, args) => {
    expect(await showArguments(args)).toBe(`      ${args}`);
  });

  it("the reviewer's arguments: every number as written", async () => {
    const stored = '{"account":12345678901234567891,"amount":1e400,"fee":1.50,"a":1,"a":2}';
    const shown = await showArguments(stored);
    expect(shown).toBe(`      ${stored}`);
    expect(shown).not.toContain('12345678901234567000');
  });

  it('JSON that reads back exactly is still shown on one line', async () => {
    expect(await showArguments('{\n  "path": "config.ts",\n  "lines": [1, 20]\n}')).toBe(
      '      {"path":"config.ts","lines":[1,20]}',
    );
  });

  it('text that is not JSON is shown as stored', async () => {
    expect(await showArguments('seq 30')).toBe('      seq 30');
  });
});

describe('the CLI and the session browser keep the same rule', () => {
  it.each([
    '{"path":"a b"}',
    '{ "x" : [ 1 , 2.5 , -3e-2 ] }',
    '{"account":12345678901234567891}',
    '{"fee":1.50}',
    '{"a":1,"a":2}',
    '{"k":"\\u0041"}',
    '{"s":"tab\\there"}',
    '{"b":1,"2":0}',
    '[1e400]',
    '"text"',
    'null',
    'not json',
    '',
  ])('%j', (args) => {
    const exact = exactJson(args);
    const browser = prettyArgs(args);
    if (exact === undefined) expect(browser.text).toBe(args);
    else {
      expect(browser.text).toBe(JSON.stringify(JSON.parse(args), null, 2));
      expect(exact).toBe(JSON.stringify(JSON.parse(args)));
    }
  });
});
