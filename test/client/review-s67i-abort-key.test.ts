// Review s67i, 3: a keyed write the caller aborted (its `signal`) threw the bare abort reason: no
// `idempotencyKey` and no `mayHaveLanded`, while the write had been stored. A caller who repeated it
// after a "stop" had no key to reuse, and stored it twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient, SatchelConnectionError } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

/** A fetch that delivers the request to the server, then aborts `controller` before passing the answer on. */
function stoppedAfterSent(controller: AbortController, answer: (real: Response) => Response) {
  const keys: string[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const key = new Headers(init?.headers).get('idempotency-key');
    if (key) keys.push(key);
    const real = await fetch(input, { ...init, signal: null });
    controller.abort(); // the user presses "stop" while the answer is on its way
    init?.signal?.throwIfAborted();
    return answer(real);
  };
  return { keys, fetchImpl };
}

const body = { messages: [{ role: 'user' as const, content: 'hello' }] };

describe('review s67i: an aborted keyed write', () => {
  it.each([
    ['during the attempt', (real: Response) => real],
    // A gateway's 503 after the write landed, then the abort during the wait before the retry.
    ['between attempts', () => new Response('bad gateway', { status: 503 })],
  ])(
    '%s: throws its key and that it may have landed; repeated with the key, it stores once',
    async (_, answer) => {
      const setup = new SatchelClient({ url: server.url });
      const { session } = await setup.create({ task: 'abort' });
      const controller = new AbortController();
      const { keys, fetchImpl } = stoppedAfterSent(controller, answer);
      const client = new SatchelClient({ url: server.url, fetch: fetchImpl });
      const err = await client
        .append(session.id, body, { signal: controller.signal })
        .catch((e: unknown) => e);
      expect(SatchelConnectionError.is(err)).toBe(true);
      expect(err).toMatchObject({ mayHaveLanded: true, idempotencyKey: keys[0] });
      expect((err as Error).cause).toBe(controller.signal.reason);
      expect(keys).toHaveLength(1);
      expect((await setup.get(session.id)).session.messages).toHaveLength(1); // it landed
      const again = await setup.append(session.id, body, {
        idempotencyKey: (err as SatchelConnectionError).idempotencyKey,
      });
      expect(again.replayed).toBe(true);
      expect((await setup.get(session.id)).session.messages).toHaveLength(1);
    },
  );

  it('a read aborted still throws the reason itself', async () => {
    const setup = new SatchelClient({ url: server.url });
    const { session } = await setup.create({ task: 'abort read' });
    const controller = new AbortController();
    const { fetchImpl } = stoppedAfterSent(controller, (real) => real);
    const client = new SatchelClient({ url: server.url, fetch: fetchImpl });
    const err = await client
      .get(session.id, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(err).toBe(controller.signal.reason);
  });
});
