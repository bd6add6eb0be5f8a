import { expect } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text, type ObjectStore } from '../../lib/storage/port.js';
import type { makeApp } from '../http/helpers.js';

/**
 * "Deleted means gone" (contract v1.1, issue 11 item 5), through the HTTP API on any object store: after
 * DELETE and after cleanup, once background work has drained, no object in the bucket holds a deleted
 * session's task or a phrase of its messages, while the other sessions still list, read and search.
 * Shared by test/http/deleted.test.ts (local folder) and test/http/deleted.s3.test.ts (radosgw).
 */

type App = Awaited<ReturnType<typeof makeApp>>;

const NS = 'alice'; // the namespace of TOKENS.laptop

/** A word no other test writes, that the tokenizer keeps whole and the stemmer leaves alone. */
function uniqueWord(): string {
  const letters = 'bcdfghjklmnpqrstvwz';
  let w = 'zq';
  for (let i = 0; i < 10; i++) w += letters[Math.floor(Math.random() * letters.length)];
  return w + 'x';
}

interface Planted {
  id: string;
  task: string;
  /** Strings that must not survive the session's delete anywhere in the bucket. */
  needles: string[];
  word: string;
}

/** Every object of the bucket (under the store's prefix) holding one of the needles, as `key: needle`. */
async function holders(objects: ObjectStore, needles: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const key of await listAll(objects, '')) {
    const got = await objects.get(key);
    if (!got) continue;
    // Bytes as latin1 too, so binary segments are searched byte for byte whatever their encoding.
    const body = text(got.body) + '\n' + Buffer.from(got.body).toString('latin1');
    for (const n of needles) if (body.includes(n)) found.push(`${key}: ${n}`);
  }
  return found;
}

export async function deletedMeansGone(app: App): Promise<void> {
  const old = new Date(Date.now() - 30 * 86_400_000).toISOString();
  const plant = async (label: string, updatedAt?: string): Promise<Planted> => {
    const word = uniqueWord();
    const task = `${label} task about ${word} and its secrets`;
    const phrase = `the ${word} migration plan for ${label}`;
    const res = await app.call('POST', '/v1/sessions', {
      body: {
        task,
        messages: [
          { role: 'user', content: phrase },
          { role: 'assistant', content: `noted: ${phrase}, step one` },
        ],
        ...(updatedAt ? { created_at: updatedAt, updated_at: updatedAt } : {}),
      },
    });
    expect(res.status).toBe(201);
    return { id: res.json.id, task, needles: [task, phrase, word], word };
  };
  const append = async (s: Planted, content: string) => {
    const res = await app.call('POST', `/v1/sessions/${s.id}/messages`, {
      body: { messages: [{ role: 'user', content }] },
    });
    expect(res.status).toBe(200);
  };
  const search = async (word: string): Promise<string[]> => {
    const res = await app.call('POST', '/v1/session_search', {
      body: { action: 'search', query: `${word} migration`, limit: 20 },
    });
    expect(res.status).toBe(200);
    const results: { id?: string; session_id?: string }[] = res.json.results ?? [];
    return results.map((r) => r.id ?? r.session_id ?? '');
  };
  const listed = async (): Promise<string[]> => {
    const res = await app.call('GET', '/v1/sessions?limit=100');
    expect(res.status).toBe(200);
    return res.json.sessions.map((s: { id: string }) => s.id);
  };
  const settle = () => app.background.drain();

  const keepers = [
    await plant('keeper one'),
    await plant('keeper two'),
    await plant('keeper three'),
  ];
  const deleted = [await plant('deleted one'), await plant('deleted two')];
  // Old sessions (updated 30 days ago) for cleanup; one is then appended to, which makes it recent: kept.
  const stale = [
    await plant('stale one', old),
    await plant('stale two', old),
    await plant('stale three', old),
    await plant('stale four', old),
  ];
  await append(deleted[0]!, `more about ${deleted[0]!.word}: second revision`);
  await append(keepers[0]!, `more about ${keepers[0]!.word}: second revision`);

  // Copies everywhere: a search and a list (records, documents), then pages and segments, then more
  // log records and index records on top of them.
  expect(await search(keepers[1]!.word)).toContain(keepers[1]!.id);
  expect(await search(deleted[1]!.word)).toContain(deleted[1]!.id);
  await listed();
  await settle();
  await app.sessions.manifest.compact(NS, true);
  await app.search.lexical.compact(NS);
  await append(deleted[1]!, `a third copy of ${deleted[1]!.word} in a fresh log record`);
  await append(stale[0]!, `a fresh copy of ${stale[0]!.word}`); // stale[0] becomes recent: kept
  await settle();
  expect(await search(deleted[1]!.word)).toContain(deleted[1]!.id);
  await settle();

  // The scan can see them: every session's text sits in manifest pages and in index segments.
  const before = await holders(app.objects, [deleted[0]!.word, deleted[1]!.word, stale[1]!.word]);
  expect(before.some((h) => h.includes('/m/g/'))).toBe(true);
  expect(before.some((h) => h.includes('/x/g/'))).toBe(true);

  const stillThere = async (kept: Planted[], gone: Planted[]) => {
    const ids = await listed();
    for (const k of kept) {
      expect(ids).toContain(k.id);
      expect((await app.call('GET', `/v1/sessions/${k.id}`)).json.task).toBe(k.task);
    }
    for (const g of gone) {
      expect(ids).not.toContain(g.id);
      expect((await app.call('GET', `/v1/sessions/${g.id}`)).status).toBe(404);
      expect(await search(g.word)).not.toContain(g.id);
    }
    for (const k of kept) expect(await search(k.word)).toContain(k.id);
  };

  // DELETE: nothing of the two sessions is left once the background work has drained.
  for (const d of deleted)
    expect((await app.call('DELETE', `/v1/sessions/${d.id}`)).status).toBe(204);
  await settle();
  expect(
    await holders(
      app.objects,
      deleted.flatMap((d) => d.needles),
    ),
  ).toEqual([]);
  await stillThere([...keepers, ...stale], deleted);
  await settle();

  // Cleanup of the three sessions still 30 days old: the same, with one purge for all of them.
  const res = await app.call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 7 } });
  expect(res.status).toBe(200);
  expect(res.json.deleted).toBe(3);
  await settle();
  const cleaned = stale.slice(1);
  expect(
    await holders(
      app.objects,
      [...deleted, ...cleaned].flatMap((d) => d.needles),
    ),
  ).toEqual([]);
  await stillThere([...keepers, stale[0]!], [...deleted, ...cleaned]);
  await settle();
  // Later upkeep (a full manifest compaction, an index rebuild) brings nothing back.
  await app.sessions.manifest.compact(NS, true);
  await app.search.lexical.compact(NS, true);
  await settle();
  expect(
    await holders(
      app.objects,
      [...deleted, ...cleaned].flatMap((d) => d.needles),
    ),
  ).toEqual([]);
  await stillThere([...keepers, stale[0]!], [...deleted, ...cleaned]);
}
