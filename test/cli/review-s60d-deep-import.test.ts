// Review s60d (F2, F3): JSON nested deeper than V8's stack in an odek file.
// F2: JSON.parse takes any depth, but the client's JSON.stringify of the create body recurses: a file with a
// field 20,000 levels deep threw RangeError, which stopped the whole import (exit 70, the files after it
// never imported). The server refuses a body nested deeper than 128 levels anyway: such a file is now that
// file's failure, and the import goes on (exit 4).
// F3: tool-call arguments are a string, so deep arguments are stored (a secret in them redacted). A
// re-import compared them as JSON with the recursive differsAt (lib/odek/match.ts), which overflowed:
// every later sync of the folder died with exit 70. It is now iterative: `unchanged`, exit 0.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchelProcess } from './process.js';
import { satchel } from './run.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

const env = () => ({ SATCHEL_URL: server.url, SATCHEL_TOKEN: '' });
const nested = (n: number, inner = '') => '['.repeat(n) + inner + ']'.repeat(n);
const user = (content: string) => ({ role: 'user', content });

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'satchel-s60d-deep-'));
}

async function ids(prefix: string): Promise<string[]> {
  const res = await fetch(`${server.url}/v1/sessions?limit=100`);
  const body = (await res.json()) as { sessions: { id: string }[] };
  return body.sessions
    .map((s) => s.id)
    .filter((id) => id.startsWith(prefix))
    .sort();
}

describe('F2: an import file nested deeper than JSON.stringify can write', () => {
  it('that file fails with its reason; the files after it are imported; exit 4', async () => {
    const folder = dir();
    for (const p of ['a', 'c'])
      for (const i of [1, 2, 3]) {
        const session = { id: `f2-${p}${i}`, task: p, messages: [user('hi')] };
        writeFileSync(join(folder, `${p}${i}.json`), JSON.stringify(session));
      }
    writeFileSync(
      join(folder, 'b-deep.json'),
      `{"id":"f2-deep","task":"t","messages":[{"role":"user","content":"x","extra":${nested(20_000)}}]}`,
    );
    const r = await satchelProcess(['import', '-j', '1', folder], env());
    expect(r.stderr).not.toMatch(/unexpected error|RangeError/);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(
      /failed {5}\S*b-deep\.json \(f2-deep\): nested deeper than 128 levels at messages\[0\]\.extra /,
    );
    expect(r.stdout).toContain('6 created');
    expect(await ids('f2-')).toEqual(['f2-a1', 'f2-a2', 'f2-a3', 'f2-c1', 'f2-c2', 'f2-c3']);
  }, 120_000);

  it('129 levels fail the same way; 128 import (the server takes that depth)', async () => {
    const folder = dir();
    // The file's object, messages, the message and `extra` are 3 levels above the array's own.
    const file = (id: string, depth: number) =>
      `{"id":"${id}","task":"t","messages":[{"role":"user","content":"x","extra":${nested(depth - 3)}}]}`;
    writeFileSync(join(folder, 'at-limit.json'), file('f2-limit', 128));
    writeFileSync(join(folder, 'past-limit.json'), file('f2-past', 129));
    const r = await satchel(['import', folder, '--json'], env());
    expect(r.code).toBe(4);
    const report = JSON.parse(r.stdout) as {
      results: { id: string; status: string; reason?: string }[];
    };
    expect(report.results.map((x) => [x.id, x.status])).toEqual([
      ['f2-limit', 'created'],
      ['f2-past', 'failed'],
    ]);
    expect(report.results[1]!.reason).toMatch(/^nested deeper than 128 levels/);
  }, 60_000);

  it('deep JSON the import does not send is no failure: an unknown top-level field, a string', async () => {
    const folder = dir();
    writeFileSync(
      join(folder, 'unknown.json'),
      `{"id":"f2-unknown","task":"t","messages":[{"role":"user","content":"x"}],"odd":${nested(20_000)}}`,
    );
    writeFileSync(
      join(folder, 'string.json'),
      JSON.stringify({ id: 'f2-string', task: 't', messages: [user(nested(20_000))] }),
    );
    const r = await satchel(['import', folder, '--json'], env());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { results: { id: string; status: string }[] };
    expect(report.results.map((x) => [x.id, x.status])).toEqual([
      ['f2-string', 'created'],
      ['f2-unknown', 'created'],
    ]);
  }, 60_000);
});

describe('F3: re-importing deep tool-call arguments that had a secret redacted', () => {
  it('is unchanged, exit 0 (before: RangeError, exit 70); so is the session’s own export', async () => {
    const folder = dir();
    const args = nested(20_000, '"sk-abcdefghijklmnopqrstuvwxyz0123456789"');
    const call = { id: 'c', type: 'function', function: { name: 'f', arguments: args } };
    const session = {
      id: 'f3-deeparg',
      task: 't',
      messages: [user('x'), { role: 'assistant', content: '', tool_calls: [call] }],
    };
    const file = join(folder, 'f3-deeparg.json');
    writeFileSync(file, JSON.stringify(session));
    const first = await satchel(['import', file], env());
    expect(first.stdout).toContain('created    f3-deeparg (1 secret redacted)');
    expect(first.code).toBe(0);
    const again = await satchel(['import', file, '--json'], env());
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ unchanged: 1, failed: 0 });
    // A changed secret is still "unchanged" (the placeholder stands for any text); a changed shape is not.
    const other = { ...call, function: { name: 'f', arguments: args.replace('"sk-', '1,"sk-') } };
    writeFileSync(
      file,
      JSON.stringify({
        ...session,
        messages: [user('x'), { ...session.messages[1], tool_calls: [other] }],
      }),
    );
    const changed = await satchel(['import', file], env());
    expect(changed.code).toBe(4);
    expect(changed.stdout).toContain('exists with different content (messages[1].tool_calls[0]');
    const out = join(folder, 'export');
    mkdirSync(out);
    expect((await satchel(['export', 'f3-deeparg', out], env())).code).toBe(0);
    const own = await satchel(['import', out, '--json'], env());
    expect(JSON.parse(own.stdout)).toMatchObject({ unchanged: 1 });
  }, 60_000);
});
