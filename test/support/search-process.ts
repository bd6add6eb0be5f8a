import { defaultPipeline } from '../../lib/pipeline/default.js';
import { SearchEngine } from '../../lib/search/engine.js';
import { decodeLexSegment, encodeLexSegment } from '../../lib/search/segment.js';
import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import type { ListOptions, ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';

/** A store that passes every request on: tests extend it to count, delay or fail the ones they watch. */
export class PassThrough implements ObjectStore {
  readonly name: string;
  constructor(readonly inner: ObjectStore) {
    this.name = inner.name;
  }
  get(key: string) {
    return this.inner.get(key);
  }
  put(key: string, body: Uint8Array, options?: PutOptions) {
    return this.inner.put(key, body, options);
  }
  delete(keys: string | string[]) {
    return this.inner.delete(keys);
  }
  list(prefix: string, options?: ListOptions) {
    return this.inner.list(prefix, options);
  }
}

/**
 * One process with search on: a SessionStore that stores sessions of 16 KiB or more as base, 2 KiB segments
 * and delta, and the SearchEngine listening to it. `schedule` keeps background work for `settle`, which
 * drains the store's records, the index records and that work (`rounds` times, for work that schedules
 * more); `errors` holds what the engine reported.
 */
export function searchProcess(objects: ObjectStore, options: SessionStoreOptions = {}) {
  const sessions = new SessionStore(objects, {
    pipeline: defaultPipeline({ maxSessionBytes: 4 << 20 }),
    splitBytes: 16 * 1024,
    segmentBytes: 2048,
    ...options,
  });
  const errors: unknown[] = [];
  const tasks: Promise<unknown>[] = [];
  const schedule = (p: Promise<unknown>) => void tasks.push(p);
  const engine = new SearchEngine(sessions, null, {
    freshnessMs: 0,
    onError: (what, err) => errors.push([what, err]),
  });
  sessions.addListener(engine);
  const settle = async (rounds = 1) => {
    for (let i = 0; i < rounds; i++) {
      await sessions.settled();
      await engine.flushRecords();
      await Promise.allSettled(tasks.splice(0));
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { sessions, engine, settle, errors, schedule };
}

/** A message of about 1 KB whose text starts with `tag` (and holds `zeppelin` when `marked`). */
export const kb = (tag: string, marked = false) => ({
  role: 'user' as const,
  content: `${tag} ${marked ? 'zeppelin ' : ''}${'lorem ipsum '.repeat(80)}`,
});

/**
 * Creates a session of 30 messages of about 1 KB through `p`, appended in one write after an empty create,
 * so that it is stored as base and delta; its records are drained.
 */
export async function createSplit(
  p: ReturnType<typeof searchProcess>,
  ns: string,
  id: string,
  task: string,
  marked = false,
): Promise<void> {
  await p.sessions.create(ns, { id, task, messages: [] });
  const messages = Array.from({ length: 30 }, (_, i) => kb(`h${i}`, marked));
  await p.sessions.append(ns, id, { messages }, undefined);
  await p.settle();
}

/** The bytes with the format version of their JSON (a record's, or a segment's header) set to `v`. */
export function withVersion(bytes: Uint8Array, v: number): Uint8Array {
  const out = Buffer.from(bytes);
  const at = out.indexOf('{"v":');
  if (at < 0) throw new Error('no format version in the bytes');
  out.write(String(v), at + 5, 'latin1');
  return new Uint8Array(out);
}

/**
 * An index stored by an older tokenizer, then read by a process of today's: one session (`task`, one user
 * message `content`) indexed and compacted, its segments rewritten with only the tokens `older` keeps and
 * format version `v`; then another process searches `query`. Returns the ids it found and the postings of
 * `token` in each segment the rebuild wrote (null where it lacks it), for the test to check.
 */
export async function olderIndexRead(o: {
  task: string;
  content: string;
  older: (token: string) => boolean;
  v: number;
  query: string;
  token: string;
}): Promise<{ id: string; hits: string[]; rebuilt: unknown[] }> {
  const objects = new MemoryStore();
  const a = searchProcess(objects);
  const { session } = await a.sessions.create(
    'ns',
    { task: o.task, messages: [{ role: 'user', content: o.content }] },
    { schedule: a.schedule },
  );
  await a.settle();
  await a.engine.lexical.compact('ns');
  await a.settle();
  const lex = (await listAll(objects, 'ns/ns/x/g/')).filter((k) => k.endsWith('.lex'));
  if (lex.length === 0) throw new Error('the compaction wrote no lexical segment');
  for (const key of lex) {
    const seg = decodeLexSegment((await objects.get(key))!.body);
    const docs = seg.all().map((doc, i) => ({
      key: seg.docs[i]!,
      doc: { len: doc.len, tf: new Map([...doc.tf].filter(([t]) => o.older(t))) },
    }));
    await objects.put(key, withVersion(encodeLexSegment(docs), o.v));
  }
  const b = searchProcess(objects); // another process, after the deploy
  const hits = (await b.engine.search('ns', o.query, 5, { schedule: b.schedule })).map((h) => h.id);
  await b.settle(2);
  const rebuilt = (await listAll(objects, 'ns/ns/x/g/')).filter(
    (k) => k.endsWith('.lex') && !lex.includes(k),
  );
  const postings = [];
  for (const key of rebuilt)
    postings.push(decodeLexSegment((await objects.get(key))!.body).postingsOf(o.token));
  return { id: session.id, hits, rebuilt: postings };
}
