/**
 * Before 2026-12-05 (found by review): a gateway's own error page (an HTML 504, not Satchel's problem
 * JSON) answering an import's create was reported as that file's failure, `failed: 504 …`, exit 4, though
 * Satchel went on and stored the session; `export` listed such pages per session the same way, exit 4.
 * Every other write command takes such a page as "may have been stored" (io.ts keyedWrite). Now the import
 * stops there, exit 3, naming the file that may have been imported and the rerun (which is safe: what it
 * made is then unchanged); an export stops with exit 3 as for no answer.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { main } from '../../lib/cli/main.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let work: string;
beforeAll(async () => {
  server = await startSatchelServer();
  work = mkdtempSync(join(tmpdir(), 'cli-gateway-page-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

/** A gateway that passes every request on, but answers a create with its own 504 page once Satchel is done. */
const gateway: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  const answer = await fetch(url, init);
  if (init?.method === 'POST' && new URL(url).pathname === '/v1/sessions') {
    await answer.arrayBuffer();
    return new Response('<html><body><h1>504 Gateway Time-out</h1></body></html>', {
      status: 504,
      statusText: 'Gateway Time-out',
      headers: { 'content-type': 'text/html' },
    });
  }
  return answer;
};

async function run(args: string[], fetchImpl: typeof fetch) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: (s: string) => void (stderr += s) },
    env: { SATCHEL_URL: server.url },
    fetch: fetchImpl,
  });
  return { code, stdout, stderr };
}

it('stops an import whose create met a gateway page: may have been imported, exit 3', async () => {
  const dir = join(work, 'sessions');
  mkdirSync(dir);
  const file = join(dir, 'slow-1.json');
  writeFileSync(
    file,
    JSON.stringify({ id: 'slow-1', task: 'a task', messages: [{ role: 'user', content: 'hi' }] }),
  );
  const r = await run(['import', dir], gateway);
  expect((await new SatchelClient({ url: server.url }).get('slow-1')).session.task).toBe('a task');
  expect(r.code).toBe(3);
  expect(r.stdout).not.toContain('failed');
  expect(r.stderr).toContain(
    `import stopped after 0 of 1 files (0 created); may have been imported: ${file}`,
  );
  expect(r.stderr).toContain(
    "the answer 504 Gateway Time-out (504 Gateway Time-out) is not Satchel's",
  );
  expect(r.stderr).toContain(`${file} may have been imported`);
  expect(r.stderr).toContain(`Rerunning the import is safe`);
  expect(r.stderr).toContain(`\n  satchel import ${dir}\n`);
  // The rerun it names is safe: the session is there, unchanged.
  const again = await run(['import', dir], fetch);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain('0 created, 1 unchanged');
});

it('export behind a gateway that answers its own 502 pages exits 3, not 4', async () => {
  await new SatchelClient({ url: server.url }).create({ id: 'gw-export-1', task: 'one' });
  const down: typeof fetch = async () =>
    new Response('<html><body><h1>502 Bad Gateway</h1>nginx</body></html>', {
      status: 502,
      statusText: 'Bad Gateway',
      headers: { 'content-type': 'text/html' },
    });
  const r = await run(['export', 'gw-export-1', join(work, 'out')], down);
  expect(r.code).toBe(3);
  expect(r.stdout).not.toContain('failed');
  expect(r.stderr).toContain("is not Satchel's: is SATCHEL_URL a Satchel server");
});
