// Review s60b, finding 2: on a short-lived runtime (Workers: 1,000 storage operations per request) a
// compaction of the lexical index folds at most `sliceRecords` lagging records, the oldest first, and the
// next one goes on; a search too far behind folds slices inline and answers 503 with Retry-After while it
// catches up, rather than read every session object. Until 2026-12-07 a compaction read every lagging
// record in one go, so past about 1,000 it never finished on Workers, and a search more than 512 behind
// read every session (DeepSearch).
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SatchelError } from '../../lib/model/errors.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import type { SearchOptions } from '../../lib/search/engine.js';
import { CountingStore } from '../../lib/storage/counting.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { searchDevice } from '../support/search-device.js';

/** One process over `objects`: as on a short-lived runtime, no pending marker left standing for a reader. */
const device = (objects: ObjectStore, options: SearchOptions = {}) => {
  const d = searchDevice(objects, options, null, {
    pipeline: defaultPipeline({ maxSessionBytes: 1 << 20 }),
    markerIdleMs: 0,
    recordLingerMs: 0,
  });
  return {
    ...d,
    drain: d.drainAll,
    search: (ns: string, q: string, limit = 20) => d.search(ns, q, limit),
  };
};

const dirOf = (name: string) => mkdtempSync(join(tmpdir(), `satchel-s60b-${name}-`));
const QUERIES = [
  'kubernetes deploy',
  'zqrare7',
  'zqrare33',
  'database migration',
  'cluster',
  'task',
];

/** Every query's answer (ids and scores) from a cold process. */
async function answers(objects: ObjectStore): Promise<unknown[]> {
  const cold = device(objects);
  const out: unknown[] = [];
  for (const q of QUERIES) out.push((await cold.search('ns', q)).map((h) => [h.id, h.score]));
  return out;
}

describe('sliced compaction of the lexical index (short-lived runtimes)', () => {
  it('folding the lagging records a slice at a time gives the same index as one compaction', async () => {
    const dir = dirOf('slices');
    // A Node process that never compacts: every save leaves its record lagging.
    const writer = device(new LocalStore(dir), { lsm: { compactAfter: 1e9 } });
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const body = {
        id: `s${String(i).padStart(3, '0')}`,
        task: `task ${i}`,
        messages: [
          {
            role: 'user' as const,
            content: `${i % 2 ? 'kubernetes deploy' : 'database migration'} cluster ${i} zqrare${i}`,
          },
        ],
      };
      ids.push((await writer.sessions.create('ns', body, writer.ctx)).session.id);
      // A segment already in force for the first 20, so slices add to it.
      if (i === 19) {
        await writer.drain();
        await writer.engine.lexical.compact('ns');
      }
    }
    // Superseded versions, deletes, and an id created again after its delete.
    for (let i = 0; i < 10; i++)
      await writer.sessions.append(
        'ns',
        ids[i * 5]!,
        { messages: [{ role: 'user', content: `kubernetes again ${i}` }] },
        undefined,
        writer.ctx,
      );
    for (const i of [7, 26, 33, 45]) await writer.sessions.delete('ns', ids[i]!, writer.ctx);
    const again = {
      id: ids[33]!,
      task: 'again',
      messages: [{ role: 'user' as const, content: 'zqrare33 reborn' }],
    };
    await writer.sessions.create('ns', again, writer.ctx);
    await writer.drain();

    // The same bucket twice: one compaction there, slices of 8 here.
    const fullDir = dirOf('full');
    cpSync(dir, fullDir, { recursive: true });
    const full = new LocalStore(fullDir);
    await device(full).engine.lexical.compact('ns');

    const counted = new CountingStore(new LocalStore(dir));
    const sliced = device(counted, { lsm: { sliceRecords: 8 } });
    const lagging = (await listAll(counted, 'ns/ns/x/d/')).length;
    expect(lagging).toBeGreaterThan(40);
    let runs = 0;
    for (; runs < 20 && (await listAll(counted, 'ns/ns/x/d/')).length > 0; runs++) {
      counted.reset();
      await sliced.engine.lexical.compact('ns');
      // Each run reads at most its slice of records.
      expect(counted.counts.getsByKind['x/d'] ?? 0).toBeLessThanOrEqual(8);
    }
    expect(runs).toBeGreaterThanOrEqual(Math.ceil(lagging / 8) - 1);
    expect(await listAll(counted, 'ns/ns/x/d/')).toEqual([]);

    const fromFull = await answers(full);
    expect(fromFull[1]).toEqual([]); // zqrare7: deleted
    expect(await answers(counted)).toEqual(fromFull);
    expect((fromFull[2] as unknown[]).length).toBe(1); // zqrare33: the session created again
  });

  it('a search far behind catches up within the budget and answers what DeepSearch answers', async () => {
    const dir = dirOf('behind');
    const writer = device(new LocalStore(dir), { lsm: { compactAfter: 1e9 } });
    const n = 700;
    for (let i = 0; i < n; i++)
      await writer.sessions.create(
        'ns',
        {
          id: `s${String(i).padStart(4, '0')}`,
          task: `task ${i}`,
          messages: [
            {
              role: 'user',
              content: `hello common words ${i}${i === 2 ? ' zqrare old' : i === n - 3 ? ' zqrare new' : ''}`,
            },
          ],
        },
        writer.ctx,
      );
    // The manifest compact (its own backlog is finding 1's): only the index lags.
    await writer.sessions.list('ns', { limit: 1 }, writer.ctx);
    await writer.drain();
    // What a process with no budget answers (DeepSearch, 700 behind), on a copy of the bucket.
    const copy = dirOf('behind-copy');
    cpSync(dir, copy, { recursive: true });
    const node = device(new LocalStore(copy));
    const expected = (await node.search('ns', 'zqrare', 5)).map((h) => h.id).sort();
    await node.drain();
    expect(expected).toEqual(['s0002', 's0697']);

    const counted = new CountingStore(new LocalStore(dir));
    const statuses: string[] = [];
    let hits: Awaited<ReturnType<ReturnType<typeof device>['search']>> | undefined;
    for (let k = 0; k < 4 && !hits; k++) {
      // A new isolate each time, its background work counted with its request.
      const edge = device(counted, { operationBudget: true });
      counted.reset();
      try {
        hits = await edge.search('ns', 'zqrare', 5);
        statuses.push('200');
      } catch (err) {
        if (!SatchelError.is(err, 'unavailable')) throw err;
        expect(err.extra.retryAfter).toBe(1);
        expect(err.message).toMatch(/search index is catching up on \d+ saved sessions/);
        statuses.push('503');
      }
      await edge.drain();
      const c = counted.counts;
      const ops = c.get + c.put + c.delete + c.list + c.head;
      expect(ops, `call ${k}`).toBeLessThanOrEqual(700);
      // Never a read of every session object.
      expect(c.getsByKind['sessions'] ?? 0, `call ${k}`).toBeLessThan(50);
    }
    expect(statuses[0]).toBe('503');
    expect(hits?.map((h) => h.id).sort(), statuses.join(',')).toEqual(expected);
  });
  it('a short-lived search also finds a session whose lagging version it could not build', async () => {
    const dir = dirOf('unbuilt');
    const objects = new LocalStore(dir);
    const writer = device(objects, { lsm: { compactAfter: 1e9 } });
    for (let i = 0; i < 12; i++)
      await writer.sessions.create(
        'ns',
        {
          id: `s${i}`,
          task: `task ${i}`,
          messages: [{ role: 'user', content: `common words ${i}` }],
        },
        writer.ctx,
      );
    await writer.drain();
    await writer.engine.lexical.compact('ns');
    const append = async (content: string) => {
      await writer.sessions.append(
        'ns',
        's5',
        { messages: [{ role: 'user', content }] },
        undefined,
        writer.ctx,
      );
      await writer.drain();
    };
    // The reader's session list says revision 2, whose record is lost; the session is at 3 by now.
    await append('second words');
    const edge = device(objects, {
      operationBudget: true,
      lsm: { maxSyncFetch: 4, sliceRecords: 4 },
      freshnessMs: 60_000,
    });
    expect(
      (await edge.sessions.manifest.view('ns')).entries.find((e) => e.id === 's5')?.revision,
    ).toBe(2);
    await objects.delete(
      (await listAll(objects, 'ns/ns/x/d/s5/')).filter((k) => /-2\.json$/.test(k)),
    );
    await append('zqthird words');
    // DeepSearch reads revision 3 and finds it: so does the index with that session read again.
    expect((await edge.search('ns', 'zqthird')).map((h) => h.id)).toEqual(['s5']);
  });
});
