// Review s56a, finding 2 (fixed 2026-12-06; both tests failed on the code before the fix).
// lib/search/engine.ts afterDelete ran `records.flush → lexical.remove(ns, id) → lexical.purge(ns, [id])` as
// one chain, and the vectors' `storedVectors → remove → purge` as another. One failed request in a step
// before the purge (the LIST of the session's index records, the GET of x/vectors_meta.json) ended the
// chain: the purge was never asked for, so its own retries (LsmIndex.purge, 1 s, 2 s, 4 s …) never
// started, and the deleted session stayed in the index segments of a quiet namespace for good
// (docs/design.md, "Deleting"). The purge now runs whatever happens to the steps before it, and the
// vectors' space is read again when that read fails.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import { StorageUnavailableError, type ListOptions } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { eventually } from '../support/eventually.js';
import { holders } from '../support/holders.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

/** A local folder whose listings of a session's lexical records, and reads of the vectors' space, fail. */
class Flaky extends LocalStore {
  failRecordLists = 0;
  failMetaReads = 0;
  override async list(prefix: string, options?: ListOptions) {
    if (this.failRecordLists > 0 && /^ns\/alice\/x\/d\/[^/]+\/$/.test(prefix)) {
      this.failRecordLists--;
      throw new StorageUnavailableError('list: storage did not answer');
    }
    return super.list(prefix, options);
  }
  override async get(key: string) {
    if (this.failMetaReads > 0 && key === 'ns/alice/x/vectors_meta.json') {
      this.failMetaReads--;
      throw new StorageUnavailableError('get: storage did not answer');
    }
    return super.get(key);
  }
}

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

it("a delete whose listing of the session's index records fails once still purges the segments", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s56a-remove-'));
  const objects = new Flaky(dir);
  const app = await makeApp({ objects });
  const word = 'zqbdfghkmnpx';
  const made = await app.call('POST', '/v1/sessions', {
    body: { task: 'a task', messages: [{ role: 'user', content: `the ${word} plan` }] },
  });
  const id = made.json.id as string;
  await settleAll(app);
  await app.search.lexical.compact('alice', true); // its document in a segment
  await settleAll(app);
  expect(holders(dir, [word]).some((h) => h.includes('/x/g/'))).toBe(true);

  objects.failRecordLists = 1; // the remove's LIST fails once; storage answers again after it
  expect((await app.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
  await settleAll(app);
  // Before the fix the segment kept the word for good: no purge was asked for.
  await eventually(async () => holders(dir, [word]).length === 0, 10_000);
  expect(objects.failRecordLists).toBe(0);
}, 30_000);

it("a delete whose read of the vectors' space fails once still erases the session's vectors", async () => {
  stub = await startOpenAiStub(64);
  const objects = new Flaky(mkdtempSync(join(tmpdir(), 'satchel-s56a-vectors-')));
  const env = {
    SATCHEL_EMBEDDINGS_URL: stub.url,
    SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
    SATCHEL_EMBEDDINGS_DIMS: '64',
  };
  const app = await makeApp({ env, objects });
  const made = await app.call('POST', '/v1/sessions', {
    body: { task: 'zeppelin hangar lease', messages: [{ role: 'user', content: 'renews in May' }] },
  });
  const id = made.json.id as string;
  await settleAll(app);
  await (await app.search.vectors('alice'))!.compact('alice', true); // its vector in a segment
  await settleAll(app);
  /** The vector objects naming the session: its records, and segment tables holding its id. */
  const vectorObjects = async () => {
    const out: string[] = [];
    for (const k of await listAll(objects, 'ns/alice/x/v/')) {
      const got = await objects.get(k);
      if (k.includes(`/d/${id}/`) || new TextDecoder().decode(got?.body).includes(id)) out.push(k);
    }
    return out;
  };
  expect((await vectorObjects()).length).toBeGreaterThan(0);

  // A process that has not read the space yet (a restart) deletes while that read fails once.
  const second = await makeApp({ env, objects });
  objects.failMetaReads = 1;
  expect((await second.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
  await settleAll(second);
  expect(objects.failMetaReads).toBe(0);
  // Before the fix the vectors stayed for good: the space was never read again.
  await eventually(async () => (await vectorObjects()).length === 0, 10_000);
}, 30_000);
