import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../lib/storage/memory.js';
import { PreconditionFailedError, type PutOptions } from '../../lib/storage/port.js';
import { SequencedRoots } from '../../lib/storage/sequenced.js';

// The sequenced-roots primitive's answers when a create-only root write races or loses its answer.
// The store is a real MemoryStore; only the lost answer is simulated, the way an adapter reports it.

interface Root {
  seq: number;
  by: string;
}
const isRoot = (v: unknown): v is Root => typeof (v as Root)?.seq === 'number';

/**
 * A MemoryStore whose next put reports a lost answer, as a retried adapter call does: `landed` after
 * storing it (our own attempt went through), `taken` without storing (the object is someone else's).
 */
class LostAnswerStore extends MemoryStore {
  next: 'landed' | 'taken' | undefined;
  override async put(key: string, body: Uint8Array, options: PutOptions = {}) {
    const mode = this.next;
    this.next = undefined;
    if (mode === 'taken') throw new PreconditionFailedError(key, { afterLostAnswer: true });
    const out = await super.put(key, body, options);
    if (mode === 'landed') throw new PreconditionFailedError(key, { afterLostAnswer: true });
    return out;
  }
}

describe('SequencedRoots.tryWrite', () => {
  it('wins once per sequence number; the loser of a race gets false', async () => {
    const roots = new SequencedRoots(new MemoryStore(), 'ns/x/r/', isRoot);
    expect(await roots.tryWrite({ seq: 1, by: 'a' })).toBe(true);
    expect(await roots.tryWrite({ seq: 1, by: 'b' })).toBe(false);
    expect((await roots.read(roots.keyOf(1))).by).toBe('a');
  });

  it('takes its own root, landed with the answer lost, as a win; another writer’s as a loss', async () => {
    const store = new LostAnswerStore();
    const roots = new SequencedRoots(store, 'ns/x/r/', isRoot);
    store.next = 'landed';
    expect(await roots.tryWrite({ seq: 2, by: 'me' })).toBe(true);
    expect(await roots.tryWrite({ seq: 3, by: 'other' })).toBe(true);
    store.next = 'taken';
    expect(await roots.tryWrite({ seq: 3, by: 'me' })).toBe(false);
    expect((await roots.read(roots.keyOf(3))).by).toBe('other');
  });
});
