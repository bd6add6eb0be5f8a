// Review s64d (F1, backstop): a comparison of a file with its stored session that still overflows V8's
// stack (RangeError) is that file's failure, and the import goes on with the next file; before, main()
// threw it (exit 70, "unexpected error") and the files after it were never imported. The comparison is
// iterative now, so a stand-in for it throws here; the server and the CLI are real.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

vi.mock('../../lib/odek/match.js', async (original) => {
  const real = await original<typeof import('../../lib/odek/match.js')>();
  return {
    ...real,
    firstDifference: (...args: Parameters<typeof real.firstDifference>) => {
      if (args[0].task === 'overflows') throw new RangeError('Maximum call stack size exceeded');
      return real.firstDifference(...args);
    },
  };
});

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

it('a RangeError while comparing fails that file; the next file is imported; exit 4', async () => {
  const env = { SATCHEL_URL: server.url, SATCHEL_TOKEN: '' };
  const folder = mkdtempSync(join(tmpdir(), 'satchel-s64d-backstop-'));
  const file = (id: string, task: string) =>
    JSON.stringify({ id, task, messages: [{ role: 'user', content: 'hi' }] });
  writeFileSync(join(folder, 'a.json'), file('bs-a', 'overflows'));
  expect((await satchel(['import', folder], env)).code).toBe(0);
  writeFileSync(join(folder, 'b.json'), file('bs-b', 'later file'));
  const r = await satchel(['import', '-j', '1', folder, '--json'], env);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(4);
  const report = JSON.parse(r.stdout) as {
    results: { id: string; status: string; reason?: string }[];
  };
  expect(report.results.map((x) => [x.id, x.status, x.reason])).toEqual([
    ['bs-a', 'failed', 'could not compare with the stored session: nested too deep'],
    ['bs-b', 'created', undefined],
  ]);
}, 60_000);
