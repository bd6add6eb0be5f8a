/**
 * Fixed on 2026-12-04 (found by review): when the answer to an import's create is lost and the client's retry gets 409 (the lost attempt
 * created the session), importOdekFile (lib/odek/transfer.ts) takes the 409 for "the id already existed",
 * compares, and reports the session `unchanged`, without the pipeline notes (secrets redacted, size cap)
 * that a `created` outcome carries. SatchelApiError.afterLostAttempt says exactly this case, but
 * importOdekFile ignores it.
 *
 * Consequence: the report says "0 created, 1 unchanged" for a session this very run created, and hides
 * that secrets in it were redacted (the user is never told their file's secret was replaced by
 * [REDACTED] in the store).
 *
 * Fix: lib/odek/transfer.ts importOdekFile: on a 409 with err.afterLostAttempt, read the session and, when
 * it matches the file, report `created` with pipelineNotes(client, session, stored) (only its audit has a
 * single create record from this import).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { startFlakyProxy } from '../client/flaky-proxy.js';
import { oldFormat } from '../support/odek-files.js';
import { SatchelClient } from '../../lib/client/index.js';
import { satchel } from './run.js';

let server: RunningServer;
let dir: string;
beforeAll(async () => {
  server = await startSatchelServer();
  dir = mkdtempSync(join(tmpdir(), 'review-cli-lost-import-'));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('import whose create answer was lost', () => {
  it('reports the session created (with its redaction note), not unchanged', async () => {
    const file = oldFormat('lost-import-1');
    file.messages[1]!.content =
      'use key sk-proj-Q7vXk2LmN9pR4tY6wZ8aB1cD3eF5gH7jK9mN2pQ4rS6tU8vW0xY2 please';
    writeFileSync(join(dir, 'lost-import-1.json'), JSON.stringify(file));
    // The first POST lands but its answer is lost; everything after goes through.
    let posts = 0;
    const p = await startFlakyProxy(server.url, (_n, req) =>
      req.method === 'POST' && posts++ === 0 ? 'forward-then-drop' : 'forward',
    );
    let r;
    try {
      r = await satchel(['import', dir], { SATCHEL_URL: p.url });
    } finally {
      await p.close();
    }
    // A plain import into an empty store says the same (the reference outcome):
    const fresh = await startSatchelServer();
    try {
      const plain = await satchel(['import', dir], { SATCHEL_URL: fresh.url });
      expect(plain.stdout).toContain('1 created');
      expect(plain.stdout).toContain('redacted');
    } finally {
      await fresh.close();
    }
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 created');
    expect(r.stdout).toContain('redacted');
  });

  it('says created too for an id whose earlier session was deleted (the new one starts above revision 1)', async () => {
    const id = 'lost-import-2';
    const client = new SatchelClient({ url: server.url });
    await client.create({ id, task: 'before' });
    await client.append(id, { messages: [{ role: 'user', content: 'earlier' }] });
    await client.delete(id);
    const own = mkdtempSync(join(tmpdir(), 'review-cli-lost-import-'));
    writeFileSync(join(own, `${id}.json`), JSON.stringify(oldFormat(id)));
    let posts = 0;
    const p = await startFlakyProxy(server.url, (_n, req) =>
      req.method === 'POST' && posts++ === 0 ? 'forward-then-drop' : 'forward',
    );
    try {
      const r = await satchel(['import', own], { SATCHEL_URL: p.url });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('1 created');
    } finally {
      await p.close();
      rmSync(own, { recursive: true, force: true });
    }
    expect((await client.get(id)).session.revision).toBe(1003); // above the deleted session's floor
  });
});
