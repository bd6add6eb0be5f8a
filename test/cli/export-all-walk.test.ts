/**
 * Before 2026-12-05 (found by review): `satchel export --all` walked GET /v1/sessions page by page and
 * nothing more. A session written during that walk moves above its cursor and the walk does not show it
 * (docs/api.md), so a session that existed before and after the export, only appended to while it ran
 * (another device working), was missing from the folder, and the export said "Exported N sessions",
 * exit 0. Now, after the walk, the sessions updated since it began (less 60 s) are listed too, until a
 * list brings nothing new, and each one not seen yet is exported.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { main } from '../../lib/cli/main.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let work: string;
// More than one page of 100, so that the walk reads a second page after the append.
const N = 105;
beforeAll(async () => {
  server = await startSatchelServer();
  work = mkdtempSync(join(tmpdir(), 'cli-export-walk-'));
  const c = new SatchelClient({ url: server.url });
  // s000 is the oldest: on the second page of the walk.
  for (let i = 0; i < N; i++)
    await c.create({ id: `s${String(i).padStart(3, '0')}`, task: `t${i}` });
}, 120_000);
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

it('exports a session that another device appended to while the walk ran', async () => {
  const c = new SatchelClient({ url: server.url });
  const lists: string[] = [];
  // Another device appends to the oldest session right after the export read the first page.
  const otherDevice: typeof fetch = async (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const answer = await fetch(input, init);
    if (init?.method === 'GET' && url.pathname === '/v1/sessions') {
      lists.push(url.search);
      if (lists.length === 1)
        await c.append('s000', { messages: [{ role: 'user', content: 'still working on it' }] });
    }
    return answer;
  };
  const out = join(work, 'backup');
  let stdout = '';
  const code = await main(['export', '--all', out], {
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: () => true },
    env: { SATCHEL_URL: server.url },
    fetch: otherDevice,
  });
  expect(code).toBe(0);
  // The walk (two pages) missed s000; a list of what was updated since it began found it.
  expect(lists.filter((q) => !q.includes('updated_after'))).toHaveLength(2);
  expect(lists.some((q) => q.includes('updated_after'))).toBe(true);
  expect(existsSync(join(out, 's000.json'))).toBe(true);
  expect(readdirSync(out).filter((f) => f.endsWith('.json'))).toHaveLength(N);
  expect(stdout).toBe(`Exported ${N} sessions to ${out}\n`);
}, 120_000);
