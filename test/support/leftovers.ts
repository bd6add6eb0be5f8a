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
