/**
 * Before 2026-12-05 (found by review): when every answer to an import's create was lost (the connection
 * reset after the request went out, the retries too), `satchel import` printed "import stopped after 0
 * of 1 files (0 created)" and the plain "Is the server running?" error, which docs/cli.md keeps for
 * attempts that were all refused; the session was stored. Now the stop names the file in flight as one
 * that may have been imported and prints the rerun, which is safe (what it made is then unchanged);
 * an import that reached nothing still gets the plain error.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
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
  work = mkdtempSync(join(tmpdir(), 'cli-lost-answer-stop-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

/** Passes requests on; every answer to a create is lost on the way back (a reset connection). */
const answersLost: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  const answer = await fetch(url, init);
  if (init?.method === 'POST' && new URL(url).pathname === '/v1/sessions') {
    await answer.arrayBuffer();
    throw new TypeError('fetch failed', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    });
  }
  return answer;
};

async function run(args: string[], env: Record<string, string>, fetchImpl?: typeof fetch) {
  let stderr = '';
  const code = await main(args, {
    stdout: { write: () => true },
    stderr: { write: (s: string) => void (stderr += s) },
    env,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  return { code, stderr };
}

it('names the file whose create got no answer as maybe imported, with the rerun', async () => {
  const dir = join(work, 'sessions');
  mkdirSync(dir);
  const file = join(dir, 'lost-1.json');
  writeFileSync(
    file,
    JSON.stringify({ id: 'lost-1', task: 'a task', messages: [{ role: 'user', content: 'hi' }] }),
  );
  const r = await run(['import', dir, '--overwrite'], { SATCHEL_URL: server.url }, answersLost);
  expect(r.code).toBe(3);
  expect((await new SatchelClient({ url: server.url }).get('lost-1')).session.task).toBe('a task');
  expect(r.stderr).toContain(`(0 created); may have been imported: ${file}\n`);
  expect(r.stderr).toContain('ECONNRESET');
  expect(r.stderr).toContain(`${file} may have been imported`);
  expect(r.stderr).toContain(`\n  satchel import --overwrite ${dir}\n`);
  expect(r.stderr).not.toContain('Is the server running?');
});

it('says "Is the server running?" when nothing was listening', async () => {
  const file = join(work, 'refused-1.json');
  writeFileSync(file, JSON.stringify({ id: 'refused-1', task: 'a task', messages: [] }));
  // A port nothing listens on (any more): every attempt is refused, nothing was sent.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const r = await run(['import', file], { SATCHEL_URL: `http://127.0.0.1:${port}` });
  expect(r.code).toBe(3);
  expect(r.stderr).toContain('Is the server running?');
  expect(r.stderr).not.toContain('may have been');
});
