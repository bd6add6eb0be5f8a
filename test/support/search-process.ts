import { defaultPipeline } from '../../lib/pipeline/default.js';
import { SearchEngine } from '../../lib/search/engine.js';
import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import type { ListOptions, ObjectStore, PutOptions } from '../../lib/storage/port.js';

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
