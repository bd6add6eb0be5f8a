// Sessions copied into a bucket as odek files, with no manifest and no index (the Worker's sliced rebuild
// tests: test/functions/review-s61-sliced-rebuild, review-s61g-rebuild-race).
import { keys } from '../../lib/model/keys.js';
import { text, utf8, type ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { oldFormat } from './odek-files.js';

/** The id of copied session `i`: `s0000`, `s0001`, … */
export const copiedId = (i: number) => `s${String(i).padStart(4, '0')}`;

/** `n` odek files in namespace `edge`, session i with task `copied task <i>`, updated i minutes into 2026. */
export async function copiedIn(store: ObjectStore, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const file: Record<string, unknown> = { ...oldFormat(copiedId(i)), task: `copied task ${i}` };
    file.updated_at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
    await store.put(keys.session('edge', copiedId(i)), utf8(JSON.stringify(file)));
  }
}

/** The keys under namespace `edge` whose object holds `needle` (a deleted session's text must be in none). */
export async function holdersOf(store: ObjectStore, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await listAll(store, 'ns/edge/')) {
    const found = await store.get(key);
    if (found && text(found.body).includes(needle)) out.push(key);
  }
  return out;
}

/**
 * `store` whose first PUT matching `match` after `arm()` waits for `release()`; `reached` once it does (an
 * isolate whose write lands after another's, in the manifest rebuild races).
 */
export function gatedPut(store: ObjectStore, match: (key: string) => boolean) {
  let reachedIt!: () => void;
  const reached = new Promise<void>((r) => (reachedIt = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let gating = false;
  const gated = new Proxy(store, {
    get(target, prop, recv) {
      if (prop === 'put')
        return async (key: string, body: Uint8Array, opts?: unknown) => {
          if (gating && match(key)) {
            gating = false;
            reachedIt();
            await gate;
          }
          return (target.put as (...a: unknown[]) => unknown).call(target, key, body, opts);
        };
      const v = Reflect.get(target, prop, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as ObjectStore;
  return { store: gated, reached, release: () => release(), arm: () => void (gating = true) };
}
