// Review s64e, 5: `client.append` dropped the server's `Idempotent-Replayed` answer (which `pop` passes on
// as `replayed`), so a caller could not tell an append that stored its messages from a replay of an
// earlier one with the same key that stored nothing now (its messages may have been popped since).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

describe('review s64e: append says when it was a replay', () => {
  it('a second append under the same key answers replayed: true and stores nothing', async () => {
    const client = new SatchelClient({ url: server.url });
    const { session } = await client.create({ task: 't' });
    const body = { messages: [{ role: 'user' as const, content: 'hello' }] };
    const first = await client.append(session.id, body, { idempotencyKey: 'k-s64e-1' });
    expect(first.replayed).toBeUndefined();
    // Another device pops the message; the same append again is that append's replay.
    await client.pop(session.id, 1);
    const again = await client.append(session.id, body, { idempotencyKey: 'k-s64e-1' });
    expect(again).toMatchObject({ id: session.id, replayed: true });
    expect((await client.get(session.id)).session.messages).toEqual([]);
    // A new key stores again, and says nothing of a replay.
    const other = await client.append(session.id, body, { idempotencyKey: 'k-s64e-2' });
    expect(other.replayed).toBeUndefined();
  });
});
