import { keys } from '../../lib/model/keys.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { text } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';

/**
 * Helpers of the tests that look for what a deleted session left behind ("Deleted means gone from every
 * object"): a labelled append whose label is a word to look for, and the objects still holding a word.
 */

/** An append of one message holding an untrusted wrapper labelled `label`, under Idempotency-Key `key`. */
export const labelled = (label: string, body: string, key: string) => {
  const tag = 'untrusted_content_0123456789abcdef';
  const content = `<${tag} source="${label}">\n${body}\n</${tag}>`;
  return { headers: { 'idempotency-key': key }, body: { messages: [{ role: 'user', content }] } };
};

/** The keys under `prefix` of objects whose bytes hold `needle`. */
export async function holding(
  store: ObjectStore,
  prefix: string,
  needle: string,
): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(store, prefix)) {
    const got = await store.get(k);
    if (got && text(got.body).includes(needle)) out.push(k);
  }
  return out;
}

/** `store` with each call's operation and key given to `before` (which may hold it), then to `after`. */
export function hooked(
  store: ObjectStore,
  before: (op: string, key: string) => unknown,
  after: (op: string, key: string) => void = () => {},
): ObjectStore {
  return new Proxy(store, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv) as unknown;
      if (typeof v !== 'function') return v;
      if (!['get', 'put', 'delete', 'list', 'head'].includes(prop as string)) return v.bind(target);
      return async (...args: unknown[]) => {
        await before(prop as string, String(args[0]));
        const out = await (v as (...a: unknown[]) => unknown).apply(target, args);
        after(prop as string, String(args[0]));
        return out;
      };
    },
  });
}

/** Renames the pending markers of `id` but standing ones (`-s`, a live process's) as if 20 minutes old. */
export async function backdate(store: ObjectStore, id: string): Promise<void> {
  for (const k of await listAll(store, keys.pending('alice', id, ''))) {
    const slash = k.lastIndexOf('/') + 1;
    if (k.slice(slash).includes('-s')) continue;
    const old = String(Date.now() - 20 * 60_000).padStart(13, '0');
    await store.put(k.slice(0, slash) + old + k.slice(slash + 13), new Uint8Array(0));
    await store.delete(k);
  }
}
