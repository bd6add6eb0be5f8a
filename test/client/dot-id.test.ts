// seg() left "." and ".." as they were; fetch resolves them as path segments, so get(".") read the
// session list, delete(".") was DELETE /v1/sessions/, append(".") a POST elsewhere. They are refused
// with a TypeError before any request, as an empty id is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
const requests: string[] = [];
beforeAll(async () => {
  server = await startSatchelServer();
  client = new SatchelClient({
    url: server.url,
    retry: { retries: 0 },
    fetch: (input, init) => {
      requests.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return fetch(input, init);
    },
  });
});
afterAll(() => server?.close());

describe('ids "." and ".." (not valid ids) reach no other route', () => {
  it('each call is refused with a TypeError and sends nothing', async () => {
    await client.create({
      id: 'dot-other',
      task: 't',
      messages: [{ role: 'user', content: 'hi' }],
    });
    requests.length = 0;
    const calls: [string, () => Promise<unknown>][] = [
      ['get .', () => client.get('.')],
      ['get ..', () => client.get('..')],
      ['append .', () => client.append('.', { messages: [{ role: 'user', content: 'x' }] })],
      ['append ..', () => client.append('..', { messages: [{ role: 'user', content: 'x' }] })],
      ['delete .', () => client.delete('.')],
      ['delete ..', () => client.delete('..')],
      ['trim ..', () => client.trim('..', 2)],
      ['pop .', () => client.pop('.', 1)],
      ['audit ..', () => client.audit('..')],
    ];
    for (const [name, call] of calls) {
      const err = await call().then(
        () => `${name}: answered`,
        (e: unknown) => e,
      );
      expect(err, name).toBeInstanceOf(TypeError);
      expect(String(err)).toContain('"." or ".."');
    }
    expect(requests).toEqual([]);
    expect((await client.get('dot-other')).session.messages).toHaveLength(1);
    // Ids that only contain dots are still ids.
    await expect(client.get('a..b')).rejects.toMatchObject({ status: 404 });
  });
});
