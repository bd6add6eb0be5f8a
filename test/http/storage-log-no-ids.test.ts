import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { unreachableS3 } from '../support/s3.js';
import { PassThrough } from '../support/search-process.js';
import { makeApp } from './helpers.js';

// docs/configuration.md: with an unusable local folder the log names "the failure's code, such as ENOSPC
// or ENOTDIR, never the path"; SATCHEL_LOG: "never a token, a body or a raw id". The `storage
// unavailable` line logged the cause's text (the raw fs error: the folder's path, the namespace and the
// session id; for S3, the key), and `request failed` a 5xx's message, which names ids and keys (review
// s53b). Both now keep the words and the code, and replace keys and ids.
const ID = 'client-acme-merger-plan';

describe('storage failures in the log', () => {
  it('an unusable local folder: the code, never the path or the session id', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'satchel-s53b-')), 'not-a-folder');
    writeFileSync(file, 'x');
    const app = await makeApp({ objects: new LocalStore(file) });
    expect((await app.call('GET', `/v1/sessions/${ID}`)).status).toBe(503);
    const created = await app.call('POST', '/v1/sessions', { body: { id: ID, task: 'nowhere' } });
    expect(created.status).toBe(503);
    const lines = app.logs.find('storage unavailable', 'error');
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l.error).toMatch(/^the local folder refused a \w+ \(ENOTDIR\)$/);
    const all = JSON.stringify(app.logs.records);
    expect(all).not.toContain(file);
    expect(all).not.toContain(ID);
  });

  it('unreachable S3: the words and the cause code, never the key', async () => {
    const objects = unreachableS3();
    const app = await makeApp({ objects });
    expect((await app.call('GET', `/v1/sessions/${ID}`)).status).toBe(503);
    const [line] = app.logs.find('storage unavailable', 'error');
    expect(line!.error).toMatch(/^GET <key> failed after 2 attempts in \d+ ms \(ECONNREFUSED\)$/);
    expect(JSON.stringify(app.logs.records)).not.toContain(ID);
  });

  it('a corrupt object: `request failed` names no key', async () => {
    const app = await makeApp();
    expect((await app.call('POST', '/v1/sessions', { body: { id: ID, task: 't' } })).status).toBe(
      201,
    );
    const dir = join(app.dir, 'ns', 'alice', 'sessions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${ID}.json`), '{not json');
    const res = await app.call('GET', `/v1/sessions/${ID}`);
    expect(res.status).toBe(500);
    expect(res.json.detail).toContain(ID); // the caller's own id, in the answer only
    const [line] = app.logs.find('request failed', 'error');
    expect(line).toMatchObject({ kind: 'corrupt', error: 'the object at <key> is not valid JSON' });
    expect(JSON.stringify(app.logs.records)).not.toContain(ID);
  });

  it("a delete's and a cleanup's 503 name no id in the log", async () => {
    const refuse = { on: false };
    class RefuseErasing extends PassThrough {
      override async delete(k: string | string[]) {
        if (refuse.on && [k].flat().some((x) => /\/audit\//.test(x)))
          throw new StorageUnavailableError('refused');
        return this.inner.delete(k);
      }
    }
    const dir = mkdtempSync(join(tmpdir(), 'satchel-s53b-'));
    const app = await makeApp({ objects: new RefuseErasing(new LocalStore(dir)) });
    const ids = [ID, 'acme-layoffs-list', 'acme-q3-numbers'];
    for (const id of ids)
      expect((await app.call('POST', '/v1/sessions', { body: { id, task: 't' } })).status).toBe(
        201,
      );
    refuse.on = true;
    const deleted = await app.call('DELETE', `/v1/sessions/${ID}`);
    expect(deleted.status).toBe(503);
    expect(deleted.json.detail).toMatch(/^session client-acme-merger-plan is gone/);
    const cleanup = await app.call('POST', '/v1/sessions/cleanup', {
      body: { older_than_days: 0 },
    });
    expect(cleanup.status).toBe(503);
    expect(cleanup.json.detail).toContain('acme-q3-numbers');
    const failed = app.logs.find('request failed', 'error').map((l) => l.error);
    expect(failed).toEqual([
      expect.stringMatching(/^session <id> is gone, but erasing/),
      expect.stringMatching(/delete each again: <ids>$/),
    ]);
    const all = JSON.stringify(app.logs.records);
    for (const id of ids) expect(all).not.toContain(id);
  });
});
