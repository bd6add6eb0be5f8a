/**
 * Fixed on 2026-12-04 (found by review): `satchel import --overwrite` of a file that has fewer external refs than the stored session
 * reports `replaced` (exit 0), but PUT never removes refs (they are sticky), so the stored session still
 * differs from the file. importOdekFile (lib/odek/transfer.ts) never checks what the replace stored.
 * Every further `import --overwrite` "replaces" again (a new revision and audit record each time, so
 * re-importing is not a no-op as docs/cli.md promises), and a plain `import` keeps failing with "exists
 * with different content (external_refs …)".
 *
 * Consequence: the report says the file replaced the session when it did not; scripted syncs never
 * converge, write a revision per run, and hide that the ref the user removed is still attached.
 *
 * Fix: lib/odek/transfer.ts importOdekFile: after `client.replace`, run firstDifference(file, answer) and
 * report a remaining difference (status failed, or a note "external refs cannot be removed: … still
 * stored"); and do not PUT when the only difference is one a PUT cannot change (refs/flags the file lacks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { newFormat } from '../support/odek-files.js';
import { satchel } from './run.js';

let server: RunningServer;
let dir: string;
beforeAll(async () => {
  server = await startSatchelServer();
  dir = mkdtempSync(join(tmpdir(), 'review-cli-refs-'));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('import --overwrite of a file with a ref removed', () => {
  it('does not report "replaced" while the stored session still differs from the file', async () => {
    const env = { SATCHEL_URL: server.url };
    const file = newFormat('refs-overwrite');
    writeFileSync(join(dir, 'refs-overwrite.json'), JSON.stringify(file));
    expect((await satchel(['import', dir], env)).code).toBe(0);

    (file.external_refs as unknown[]).pop(); // the user removed a ref in odek
    writeFileSync(join(dir, 'refs-overwrite.json'), JSON.stringify(file));
    const overwrite = await satchel(['import', dir, '--overwrite'], env);

    // Either the overwrite made the stored session the file's (a plain re-import is then unchanged)...
    const after = await satchel(['import', dir], env);
    if (overwrite.code === 0 && overwrite.stdout.includes('1 replaced')) {
      expect(after.stdout).toContain('1 unchanged');
      expect(after.code).toBe(0);
    }
    // ...and a second --overwrite changes nothing ("Re-importing changes nothing").
    const c = new SatchelClient({ url: server.url });
    const before = (await c.get('refs-overwrite')).session.revision;
    await satchel(['import', dir, '--overwrite'], env);
    expect((await c.get('refs-overwrite')).session.revision).toBe(before);
  });
});
