// The first fix (2026-12-05) of a compaction racing a delete made every index purge write a root, prunes
// too: each trim, pop or replace, and each append the size cap trims, then PUT an index root (and deleted
// the old) in a namespace whose index never held the session, and every process's loaded state went stale.
// Now only a purge of a deleted session writes a root when no segment changed.
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from '../http/helpers.js';

class Counting extends LocalStore {
  puts: string[] = [];
  override async put(key: string, body: Uint8Array, options?: Parameters<LocalStore['put']>[2]) {
    this.puts.push(key);
    return super.put(key, body, options);
  }
}

describe('a trim of a session no index segment holds', () => {
  it('writes no search-index root', async () => {
    const objects = new Counting(mkdtempSync(join(tmpdir(), 'satchel-s51f-')));
    const app = await makeApp({ objects });
    const messages = Array.from({ length: 6 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `message number ${i} about deploying websites`,
    }));
    const created = await app.call('POST', '/v1/sessions', { body: { task: 'trim me', messages } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    await app.background.drain();
    objects.puts = [];
    for (const keep of [5, 4, 3]) {
      const trimmed = await app.call('POST', `/v1/sessions/${id}/trim`, { body: { keep } });
      expect(trimmed.status).toBe(200);
      await app.background.drain();
    }
    const roots = objects.puts.filter((k) => /^ns\/alice\/x\/(v\/[^/]+\/)?r\//.test(k));
    expect(roots).toEqual([]);
  });
});
