// Review s53f (2026-12-06), fixed the same day; this test failed on the code before the fix.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';
import { LocalStore } from '../../lib/storage/local.js';
import { unreachableS3 } from '../support/s3.js';
import type { PutOptions } from '../../lib/storage/port.js';

// docs/configuration.md, SATCHEL_LOG: "never ... a raw id; an error line names a storage failure's words and
// code ... with object keys as <key> and session ids as <id>" (commit e8449bc). The request's own
// `storage unavailable` line is cleaned (problem.ts storageFailure), but the background work's warn lines
// (services.ts/background.ts: `log.warn(what, { error: describeError(err) })`) log the S3 error's raw text:
// its key, which holds the session id (x/d/<id>/…, audit/<id>/…).
const ID = 'client-acme-merger-plan';

it("a background storage failure's warn line names no key and no session id", async () => {
  const dead = unreachableS3();
  const down = { on: false };
  // The session objects stay reachable; every other object (index, log, audit records) is on an S3 that
  // refuses connections: S3Store's own error text.
  class Split extends PassThrough {
    override put(key: string, body: Uint8Array, o?: PutOptions) {
      return down.on && !/\/sessions\//.test(key)
        ? dead.put(key, body, o)
        : this.inner.put(key, body, o);
    }
  }
  const app = await makeApp({
    objects: new Split(new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s53f-')))),
  });
  const made = await app.call('POST', '/v1/sessions', {
    body: { id: ID, task: 't', messages: [{ role: 'user', content: 'hello world' }] },
  });
  expect(made.status).toBe(201);
  await app.background.drain();
  down.on = true;
  const appended = await app.call('POST', `/v1/sessions/${ID}/messages`, {
    body: { messages: [{ role: 'user', content: 'more' }] },
  });
  expect(appended.status).toBe(200);
  await app.call('DELETE', `/v1/sessions/${ID}`);
  await app.background.drain().catch(() => undefined);
  const warned = app.logs.records.filter((r) => r.level !== 'info');
  expect(warned.length).toBeGreaterThan(0);
  for (const r of warned) {
    expect(JSON.stringify(r)).not.toContain(ID);
    expect(JSON.stringify(r)).not.toMatch(/ns\/alice\//);
  }
});
