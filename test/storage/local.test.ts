import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { utf8 } from '../../lib/storage/port.js';
import { describeConformance } from './conformance.js';

const root = mkdtempSync(join(tmpdir(), 'satchel-local-'));
describeConformance('local folder', () => new LocalStore(root));

describe('local folder specifics', () => {
  it('writes real files under the root and leaves no temp files behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-local-'));
    const store = new LocalStore(dir);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.put(`ns/a/sessions/s${i}.json`, utf8(`{"i":${i}}`)),
      ),
    );
    const files = readdirSync(join(dir, 'ns', 'a', 'sessions'));
    expect(files.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `s${i}.json`).sort());
  });

  it('a second process-level instance on the same folder sees the data (restart)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-local-'));
    await new LocalStore(dir).put('k/v', utf8('x'));
    const reopened = new LocalStore(dir);
    const got = await reopened.get('k/v');
    expect(got && new TextDecoder().decode(got.body)).toBe('x');
    await reopened.put('k/v', utf8('y'), { ifMatch: got!.etag });
  });

  it('ping reports a folder that cannot be used, without naming its absolute path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-local-'));
    writeFileSync(join(dir, 'a-file'), 'x');
    const store = new LocalStore(join(dir, 'a-file', 'data'));
    const out = await store.ping(2000);
    expect(out).toMatchObject({ ok: false, reason: 'not-found', error: 'ENOTDIR' });
    expect(JSON.stringify(out)).not.toContain(dir);
    expect(await new LocalStore(join(dir, 'fresh')).ping(2000)).toMatchObject({ ok: true });
  });
});
