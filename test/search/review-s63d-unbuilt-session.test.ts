// Review s63d, finding 2 (fixed 2026-12-07; the test failed on the code before the fix). On Node and Lambda
// a search whose manifest view (up to 1 s old) names a version the index can neither find nor build (the
// session deleted since by another process, or moved on past a version whose record was never stored)
// fell back to DeepSearch: it read every session object of the namespace, for every search until the view
// was listed again. docs/design.md ("When DeepSearch runs"): only an index missing, unreadable, or behind
// by more than 512 sessions does that. Now every runtime reads the few sessions alone, as Workers did.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { deepSearch } from '../../lib/search/engine.js';
import { CountingStore } from '../../lib/storage/counting.js';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import { searchDevice } from '../support/search-device.js';

const N = 120;
const message = (content: string) => ({ messages: [{ role: 'user' as const, content }] });
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * Writer A (a Lambda container: pending markers idle 0, so its log records are what another process
 * lists) and searcher B (a Node server) as two processes over one folder, the index compacted and B warm.
 */
async function twoProcesses() {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s63d-unbuilt-'));
  dirs.push(dir);
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
  const a = searchDevice(new LocalStore(dir), {}, null, { pipeline, markerIdleMs: 0 });
  for (let i = 0; i < N; i++) {
    const content = `hello common words ${i}${i === 7 ? ' zqneedle' : ''}`;
    const id = `s${String(i).padStart(4, '0')}`;
    await a.sessions.create('ns', { id, task: `task ${i}`, ...message(content) }, a.ctx);
  }
  await a.drainAll();
  await a.engine.lexical.compact('ns');
  await a.drainAll();
  const counted = new CountingStore(new LocalStore(dir));
  // B's view is reused for 60 s instead of 1 s only so that a busy machine's steps fit in the window.
  const b = searchDevice(counted, { freshnessMs: 60_000 }, null);
  await b.search('ns', 'zqneedle', 5);
  await b.drainAll();
  /** B's search, with the session objects it read, and DeepSearch's ids over the same view. */
  const search = async (query: string) => {
    counted.reset();
    const hits = (await b.search('ns', query, 5)).map((h) => h.id);
    const reads = counted.counts.getsByKind['sessions'] ?? 0;
    const live = (await b.sessions.manifest.view('ns', undefined, { maxAgeMs: 60_000 })).entries;
    const deep = (await deepSearch(b.sessions, 'ns', live, query, 5)).map((h) => h.id);
    return { hits, reads, deep };
  };
  return { a, b, search };
}

it('a session another process deleted inside the view window: the search reads it alone', async () => {
  const { a, b, search } = await twoProcesses();
  await a.sessions.append('ns', 's0020', message('one more'), undefined, a.ctx);
  await a.drainAll();
  // B lists the manifest (its view names s0020 at r2), then A deletes it and the purge erases its records.
  expect((await b.sessions.manifest.view('ns')).entries.some((e) => e.id === 's0020')).toBe(true);
  await a.sessions.delete('ns', 's0020', a.ctx);
  await a.drainAll();
  const { hits, reads, deep } = await search('zqneedle');
  expect(hits).toEqual(['s0007']);
  expect(hits).toEqual(deep);
  expect(reads).toBeLessThan(5); // before the fix: every one of the 120
}, 60_000);

it('a session moved on past a version whose record is lost: found by its current text, read alone', async () => {
  const { a, b, search } = await twoProcesses();
  await a.sessions.append('ns', 's0030', message('first append'), undefined, a.ctx);
  await a.drainAll();
  const viewed = (await b.sessions.manifest.view('ns')).entries.find((e) => e.id === 's0030');
  expect(viewed?.revision).toBe(2);
  // r2's record lost (a crash; or never stored: superseded within A's record linger), then r3 saved.
  const records = await listAll(a.sessions.objects, 'ns/ns/x/d/s0030/');
  await a.sessions.objects.delete(records.filter((k) => k.endsWith('-2.json')));
  await a.sessions.append('ns', 's0030', message('zqmoved second append'), undefined, a.ctx);
  await a.drainAll();
  const { hits, reads, deep } = await search('zqmoved');
  expect(hits).toEqual(['s0030']);
  expect(hits).toEqual(deep);
  expect(reads).toBeLessThan(5); // before the fix: every one of the 120
}, 60_000);
