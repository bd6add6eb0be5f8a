/**
 * Before 2026-12-05 (found by review): after creating a session, `satchel import` read its audit log for
 * what the save pipeline did (lib/odek/transfer.ts), inside the same try as the create. When that read
 * failed (storage 503 after the retries) the created session was reported `failed: 503 …`, exit 4; on a
 * deployment of several instances the record may not be stored yet, and "1 secret redacted" was left out.
 * Now the counts come from the create's own answer (Satchel-Redactions, Satchel-Dropped-Groups,
 * Satchel-Dropped-First-User-Message, through SatchelClient.create's `pipeline`); the audit is read only
 * for a create whose answer was lost, and when that read fails the session is still `created`, with a
 * note that what the pipeline changed could not be read.
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
  work = mkdtempSync(join(tmpdir(), 'cli-audit-read-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const SECRET = 'use OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD';

function sessionFolder(name: string, id: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, `${id}.json`),
    JSON.stringify({ id, task: 'deploy', messages: [{ role: 'user', content: SECRET }] }),
  );
  return dir;
}

const pathOf = (input: string | URL | Request) =>
  new URL(String(input instanceof Request ? input.url : input)).pathname;

/** The audit log's storage is down: Satchel's own 503 problem, for every read of it. */
function auditDown(next: typeof fetch): typeof fetch {
  return async (input, init) => {
    if (/\/audit$/.test(pathOf(input)))
      return Response.json(
        { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'storage down' },
        {
          status: 503,
          headers: { 'content-type': 'application/problem+json', 'retry-after': '0' },
        },
      );
    return next(input, init);
  };
}

async function importJson(dir: string, fetchImpl: typeof fetch) {
  let stdout = '';
  const code = await main(['import', dir, '--json'], {
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: () => true },
    env: { SATCHEL_URL: server.url },
    fetch: fetchImpl,
  });
  return { code, report: JSON.parse(stdout) };
}

it('reports a created session created, with its redaction, when the audit cannot be read', async () => {
  const dir = sessionFolder('audit-down', 'with-secret');
  const { code, report } = await importJson(dir, auditDown(fetch));
  const stored = await new SatchelClient({ url: server.url }).get('with-secret');
  expect(stored.session.messages[0]!.content).toContain('[REDACTED]');
  expect(report.results[0]).toMatchObject({
    id: 'with-secret',
    status: 'created',
    notes: ['1 secret redacted'],
  });
  expect(code).toBe(0);
});

it('names the secrets redacted when reads land on another instance', async () => {
  const other = await startSatchelServer({ dir: server.dir });
  try {
    const dir = sessionFolder('two-instances', 'balanced');
    // A load balancer: reads go to the other instance, which has no audit record yet.
    const balanced: typeof fetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      return fetch(init?.method === 'GET' ? url.replace(server.url, other.url) : url, init);
    };
    const { code, report } = await importJson(dir, balanced);
    expect(code).toBe(0);
    expect(report.results[0]).toMatchObject({ status: 'created', notes: ['1 secret redacted'] });
  } finally {
    await other.close(true);
  }
});

it('a create whose answer was lost is created, saying its pipeline notes could not be read', async () => {
  const dir = sessionFolder('lost-and-audit-down', 'lost-secret');
  let creates = 0;
  // The first create lands, but its answer is lost; the retry meets the session (409).
  const lostOnce: typeof fetch = async (input, init) => {
    const answer = await fetch(input, init);
    if (init?.method === 'POST' && pathOf(input) === '/v1/sessions' && ++creates === 1) {
      await answer.arrayBuffer();
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      });
    }
    return answer;
  };
  const { code, report } = await importJson(dir, auditDown(lostOnce));
  expect(creates).toBe(2);
  expect(code).toBe(0);
  expect(report.results[0]).toMatchObject({ id: 'lost-secret', status: 'created' });
  expect(report.results[0].notes).toEqual([
    expect.stringMatching(/^what the save pipeline changed could not be read \(503 /),
  ]);
});
