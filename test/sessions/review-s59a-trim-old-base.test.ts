// Review s59a, finding 1 (fixed 2026-12-06; the first test failed on the code before the fix). A trim (or a
// pop, a PUT, a cap's drop, a fold) of a large session stores a new base; the replaced base, which holds
// the text the write removed, was deleted in the write's background by two immediate attempts, then
// `.catch(() => undefined)` (lib/sessions/write-loop.ts `discard`). Two refused DELETEs in a row left it
// for good in a quiet session: nothing else erases it until the session's next fold sweeps its parts, and
// that sweep spares parts younger than 15 minutes. Its DELETE now runs again after 1 s, 2 s, 4 s …
// (`eraseRetried`), as a delete's erasing does, and the last failure is reported.
import { afterEach, expect, it, vi } from 'vitest';
import { StorageUnavailableError, type ObjectStore } from '../../lib/storage/port.js';
import { ERASE_RETRIES } from '../../lib/sessions/existence.js';
import { tempLocalStore } from '../support/temp-store.js';
import { storeProcess } from '../support/store-process.js';
import { holders } from '../support/holders.js';
import { eventually } from '../support/eventually.js';

/** A store that refuses the next `refuse` DELETEs of each of a session's parts (`b/<id>/…`). */
class RefusePartDeletes implements ObjectStore {
  readonly name = 'refuse-part-deletes';
  refuse = 0;
  /** How many DELETEs of each part were asked for. */
  readonly tried = new Map<string, number>();
  constructor(readonly inner: ObjectStore) {}
  get: ObjectStore['get'] = (k) => this.inner.get(k);
  put: ObjectStore['put'] = (k, b, o) => this.inner.put(k, b, o);
  list: ObjectStore['list'] = (p, o) => this.inner.list(p, o);
  head = (k: string) => this.inner.head!(k);
  async delete(keys: string | string[]) {
    const parts = (Array.isArray(keys) ? keys : [keys]).filter((k) => k.includes('/b/'));
    const before = parts.map((k) => this.tried.get(k) ?? 0);
    for (const k of parts) this.tried.set(k, (this.tried.get(k) ?? 0) + 1);
    if (before.some((n) => n < this.refuse))
      throw new StorageUnavailableError('refused for a moment');
    return this.inner.delete(keys);
  }
}

const WORD = 'zqtrimmedawayx';
const big = (i: number) => `${WORD} ${i} ` + 'lorem ipsum dolor '.repeat(200);

/** A large session (a base and a delta) whose base holds WORD in every message but the first two. */
async function largeSession(label: string, errors: string[] = []) {
  const local = tempLocalStore(label);
  const dir = (local as unknown as { root: string }).root;
  const objects = new RefusePartDeletes(local);
  const { store, ctx, drain } = storeProcess(objects, {
    splitBytes: 16 * 1024,
    onError: (what) => void errors.push(what),
  });
  const first = [
    { role: 'system' as const, content: 'sys' },
    { role: 'user' as const, content: 'q0' },
  ];
  const made = await store.create('alice', { task: 'kept task', messages: first }, ctx);
  const id = made.session.id;
  for (let i = 0; i < 12; i++) {
    const messages = [
      { role: 'user' as const, content: big(i) },
      { role: 'assistant' as const, content: `answer ${i}` },
    ];
    await store.append('alice', id, { messages }, undefined, ctx);
  }
  await drain();
  expect(holders(dir, [WORD]).some((h) => h.includes(`/b/${id}/`))).toBe(true);
  return { dir, objects, store, ctx, drain, id };
}

afterEach(() => void vi.useRealTimers());

it('a trim whose replaced base was refused its first DELETEs still erases the trimmed text', async () => {
  const { dir, objects, store, ctx, drain, id } = await largeSession('s59a-trim');
  objects.refuse = 2; // each part's first two DELETEs: all that the code before the fix tried
  // Keep the system message and the first user message: every message holding WORD goes.
  await store.trim('alice', id, 2, ctx);
  await drain();
  expect(JSON.stringify(await store.get('alice', id))).not.toContain(WORD);
  // Before the fix the two quick attempts were refused, and the base stayed: this timed out.
  await eventually(async () => holders(dir, [WORD]).length === 0, 20_000);
  expect(Math.max(...objects.tried.values())).toBeGreaterThan(2); // asked again after 1 s, 2 s
}, 40_000);

it('a replaced base whose DELETE is refused every time is reported when the retries give up', async () => {
  const errors: string[] = [];
  const { objects, store, ctx, drain, id } = await largeSession('s59a-gave-up', errors);
  // Storage's own timers and I/O stay real: only the timers the retries wait on are run ahead.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  objects.refuse = Infinity;
  const running = (async () => {
    await store.trim('alice', id, 2, ctx);
    await drain();
  })();
  let done = false;
  void running.finally(() => (done = true));
  const tick = async () => {
    await vi.advanceTimersByTimeAsync(250);
    await new Promise((r) => setImmediate(r));
  };
  while (!done) await tick();
  await running;
  // 1 s, 2 s, 4 s … (ERASE_RETRIES retries): about two minutes of timers.
  const total = 1000 * (2 ** (ERASE_RETRIES + 1) - 1);
  for (let t = 0; t <= total && !errors.some((e) => e.includes('gave up')); t += 250) await tick();
  expect(errors).toContain('a part or record no session names not erased (gave up)');
}, 60_000);
