// Review s53c (2026-12-06), fixed the same day; this test failed on the code before the fix.
// A DELETE answered 204 while storage refused, for a moment, the manifest's and the search index's erasing
// (their PUTs and DELETEs). The purges were logged as failed and waited for the namespace's next delete:
// in a quiet namespace the deleted task stayed in the manifest's pages and log records for good (contract,
// Additions v1.1: "Deleted means gone"). Failed purges now run again on their own (Batcher's retries).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { LocalStore } from '../../lib/storage/local.js';
import { text } from '../../lib/model/bytes.js';
import { listAll } from '../../lib/storage/prefix.js';
import type { ObjectStore } from '../../lib/storage/port.js';

it("a delete's purges refused for a moment run again, and the deleted text goes", async () => {
  const real = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-purge-retry-')));
  let down = false;
  // The purges' own requests: page and root PUTs, log record and index DELETEs (not the delete's marker
  // and log record, which the DELETE needs before it answers).
  const refusedPut = (key: string) =>
    down && /^ns\/alice\/(m|x)\//.test(key) && !/^ns\/alice\/m\/(l|p)\//.test(key);
  const refusedDelete = (key: string) => down && /^ns\/alice\/(m\/l|x)\//.test(key);
  const objects = new Proxy(real, {
    get(target, p) {
      if (p === 'put')
        return (key: string, ...rest: unknown[]) =>
          refusedPut(key)
            ? Promise.reject(new Error('refused'))
            : target.put(key, ...(rest as [Uint8Array]));
      if (p === 'delete')
        return (keys: string | string[]) =>
          [keys].flat().some(refusedDelete)
            ? Promise.reject(new Error('refused'))
            : target.delete(keys);
      const v = Reflect.get(target, p) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as ObjectStore;
  const app = await makeApp({ objects });
  const word = 'quokkaplatypus';
  const c = await app.call('POST', '/v1/sessions', {
    body: { task: `task ${word}`, messages: [{ role: 'user', content: `about the ${word} here` }] },
  });
  const id = c.json.id as string;
  await app.background.drain();
  await app.call('GET', '/v1/sessions');
  await app.call('POST', '/v1/session_search', { body: { action: 'search', query: word } });
  await app.background.drain();
  const holders = async () => {
    const out: string[] = [];
    for (const key of await listAll(real, '')) {
      const got = await real.get(key);
      if (got && text(got.body).includes(word)) out.push(key);
    }
    return out;
  };
  expect((await holders()).some((k) => k.startsWith('ns/alice/m/'))).toBe(true);
  down = true;
  const d = await app.call('DELETE', `/v1/sessions/${id}`);
  expect(d.status).toBe(204);
  await app.background.drain();
  expect((await holders()).length).toBeGreaterThan(0); // the purges failed
  down = false; // storage answers again; nothing else happens in the namespace
  let left = await holders();
  for (let i = 0; i < 60 && left.length; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = await holders();
  }
  expect(left).toEqual([]);
});
