// Review s53a, finding 2: without SATCHEL_EMBEDDINGS_DIMS a process learns its embedding space from its
// first answer. A DELETE (or a cleanup) in a process that had not learned it yet (a restart) while the
// embeddings service failed purged no vector at all: afterDelete's `vectors(ns)` embedded a probe first,
// which threw. design.md, "Deleting": vector records and segments go by the same purge. Purging now needs
// no embedder: the namespace's space is read from x/vectors_meta.json.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

type App = Awaited<ReturnType<typeof makeApp>>;
/** The vector objects (records, segment tables) that name the session. */
async function vectorObjectsOf(app: App, id: string): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(app.objects, '')) {
    if (!k.includes('/x/v/')) continue;
    if (k.includes(`/d/${id}/`)) out.push(k);
    else if (k.endsWith('.json')) {
      const got = await app.objects.get(k);
      if (got && new TextDecoder().decode(got.body).includes(id)) out.push(k);
    }
  }
  return out;
}

const cases = [
  { how: 'DELETE', dims: undefined, compacted: false, unset: false },
  { how: 'DELETE', dims: undefined, compacted: true, unset: false },
  { how: 'DELETE', dims: '64', compacted: true, unset: false },
  { how: 'cleanup', dims: undefined, compacted: true, unset: false },
  // The deployment no longer configures a service at all (until 2026-12-06 its deletes left the vectors).
  { how: 'DELETE', dims: undefined, compacted: false, unset: true },
  { how: 'cleanup', dims: '64', compacted: true, unset: true },
] as const;

describe('a delete in a process whose embeddings service fails, or is no longer configured', () => {
  for (const c of cases)
    it(`erases the session's vectors (${c.how}, DIMS ${c.dims ?? 'unset'}, ${c.compacted ? 'in a segment' : 'a record'}${c.unset ? ', service no longer configured' : ''})`, async () => {
      stub = await startOpenAiStub(64);
      const objects = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-del-vec-')));
      const env = {
        SATCHEL_EMBEDDINGS_URL: stub.url,
        SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
        ...(c.dims ? { SATCHEL_EMBEDDINGS_DIMS: c.dims } : {}),
      };
      const first = await makeApp({ env, objects });
      const ids: string[] = [];
      for (const task of ['zeppelin hangar lease', 'kafka consumer lag']) {
        const made = await first.call('POST', '/v1/sessions', {
          body: { task, messages: [{ role: 'user', content: `${task}: renews in May` }] },
        });
        expect(made.status).toBe(201);
        ids.push(made.json.id as string);
      }
      await settleAll(first);
      if (c.compacted) await (await first.search.vectors('alice'))!.compact('alice', true);
      const [gone, kept] = ids as [string, string];
      expect((await vectorObjectsOf(first, gone)).length).toBeGreaterThan(0);

      // The server restarts while the embeddings provider has an outage.
      stub.mode = 'fail';
      const second = await makeApp({ env: c.unset ? {} : env, objects });
      const before = stub.requests.length;
      if (c.how === 'DELETE') {
        expect((await second.call('DELETE', `/v1/sessions/${gone}`)).status).toBe(204);
      } else {
        const res = await second.call('POST', '/v1/sessions/cleanup', {
          body: { older_than_days: 0 },
        });
        expect(res.json).toEqual({ deleted: 2 });
      }
      await settleAll(second);
      expect(await vectorObjectsOf(second, gone)).toEqual([]);
      if (c.how === 'DELETE')
        expect((await vectorObjectsOf(second, kept)).length).toBeGreaterThan(0);
      else expect(await vectorObjectsOf(second, kept)).toEqual([]);
      // The purge asked the service nothing (no probe to learn the space).
      expect(stub.requests.length).toBe(before);
    });
});
