import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../lib/sessions/store.js';
import { MemoryStore } from '../../lib/storage/memory.js';

// Idempotency-Key holds for at least 24 h (issue 5): a repeat a minute before the 24 h are over, after
// other writes from other devices, still stores nothing; after the window a repeat is a new write.
describe('Idempotency-Key window', () => {
  it('a repeat within 24 h replays, after later writes; after 24 h it writes again', async () => {
    let clock = Date.parse('2026-03-01T00:00:00Z');
    const sessions = new SessionStore(new MemoryStore(), { now: () => clock });
    const ns = 'alice';
    const { session } = await sessions.create(ns, { task: 't', id: 's1' });
    const body = { messages: [{ role: 'user' as const, content: 'once' }] };
    const first = await sessions.append(ns, session.id, body, undefined, {
      idempotencyKey: 'day-key',
    });
    expect(first.replayed).toBe(false);
    for (let i = 0; i < 30; i++) {
      clock += 47 * 60_000;
      await sessions.append(
        ns,
        session.id,
        { messages: [{ role: 'user', content: `later ${i}` }] },
        undefined,
        i % 2 ? { idempotencyKey: `other-${i}` } : {},
      );
    }
    clock = Date.parse('2026-03-01T23:59:00Z');
    const repeat = await sessions.append(ns, session.id, body, undefined, {
      idempotencyKey: 'day-key',
    });
    expect(repeat.replayed).toBe(true);
    expect(repeat.receipt).toEqual(first.receipt);
    clock = Date.parse('2026-03-02T00:01:00Z');
    // Any write prunes records past the window; then the key is unknown.
    await sessions.append(
      ns,
      session.id,
      { messages: [{ role: 'user', content: 'next day' }] },
      undefined,
    );
    const late = await sessions.append(ns, session.id, body, undefined, {
      idempotencyKey: 'day-key',
    });
    expect(late.replayed).toBe(false);
    expect(
      (await sessions.get(ns, session.id)).messages.filter((m) => m.content === 'once'),
    ).toHaveLength(2);
  });
});
