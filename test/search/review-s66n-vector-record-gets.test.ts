// Review s66n, finding 3. On a short-lived runtime (Lambda, Workers) a save stores no vector record
// (embedOnSave false: the vector index's compaction embeds from the sessions), yet a search's vector
// resolve GETed the record of every lagging version on its own path, each a miss (on Workers up to 256
// of the request's 1,000 storage operations).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import type { StoredObject } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
const dir = mkdtempSync(join(tmpdir(), 'satchel-s66n-vec-'));
afterEach(async () => {
  await stub?.close();
  stub = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A real local store that counts the GETs of vector records (`x/v/<hash>/d/…`). */
class CountingStore extends LocalStore {
  vectorRecordGets = 0;
  override async get(key: string): Promise<StoredObject | null> {
    if (/\/x\/v\/[0-9a-f]+\/d\//.test(key)) this.vectorRecordGets++;
    return super.get(key);
  }
}

describe('a search on a short-lived runtime', () => {
  it('reads no vector record of the lagging versions (saves store none)', async () => {
    stub = await startOpenAiStub(16);
    const objects = new CountingStore(dir);
    const app = await makeApp({
      objects,
      shortLived: true,
      answersAfterBackground: true,
      env: {
        SATCHEL_EMBEDDINGS_URL: stub.url,
        SATCHEL_EMBEDDINGS_MODEL: 'm',
        SATCHEL_EMBEDDINGS_DIMS: '16',
      },
    });
    const save = async (from: number, n: number) => {
      for (let i = from; i < from + n; i++) {
        const made = await app.call('POST', '/v1/sessions', {
          body: {
            task: `kafka task ${i}`,
            messages: [{ role: 'user', content: `consumer lag ${i}` }],
          },
        });
        expect(made.status).toBe(201);
      }
      await app.background.drain();
    };
    const search = async () => {
      objects.vectorRecordGets = 0;
      const found = await app.call('POST', '/v1/session_search', {
        body: { action: 'search', query: 'kafka consumer lag', limit: 5 },
      });
      expect(found.status).toBe(200);
      expect(found.json.results).toHaveLength(5);
      const gets = objects.vectorRecordGets;
      await app.background.drain();
      return gets;
    };
    await save(0, 12);
    expect(await search()).toBe(0);
    // The compaction the search scheduled built the vectors; the versions saved since lag again.
    await save(12, 12);
    expect(await search()).toBe(0);
    const inputs = stub.requests.flatMap((r) => r.input);
    expect(inputs.filter((t) => t.startsWith('kafka task')).length).toBeGreaterThanOrEqual(24);
  });
});
