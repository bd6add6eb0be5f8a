// Review s63d, finding 1 (fixed 2026-12-07; the test failed on the code before the fix). A vector segment
// whose rows do not match its table (a .f32 one row short: still whole rows, so it decodes) threw a plain
// Error, not CorruptIndexError: the index never counted as corrupt, so it was never rebuilt, every search
// of the namespace went lexical-only, and every compaction and purge of its vectors failed. docs/design.md
// ("The index is derived"): a corrupt segment is answered around and rebuilt from the session objects.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { listAll } from '../../lib/storage/prefix.js';
import { searchDevice } from '../support/search-device.js';
import { tempLocalStore } from '../support/temp-store.js';

const DIMS = 8;

/** A toy model: texts about databases point one way, the others another (`sql` is near `postgres`). */
const vectorOf = (text: string) => {
  const db = /postgres|database|sql/i.test(text) ? 1 : 0;
  return Array.from({ length: DIMS }, (_, k) => (k === 0 ? db : k === 1 ? 1 - db : 0.01 * (k + 1)));
};

const server = createServer(async (req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const { input } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[] };
  const data = input.map((text, index) => ({ index, embedding: vectorOf(text) }));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const embedder = () =>
  new HttpEmbedder({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    model: 'm',
    dims: DIMS,
  });

it('a vector segment one row short of its table is rebuilt, and vector search comes back', async () => {
  const objects = tempLocalStore('s63d-vector-segment');
  const errors: string[] = [];
  const onError = (what: string, err: unknown) => errors.push(`${what}: ${String(err)}`);
  const a = searchDevice(objects, { onError }, embedder());
  for (let i = 0; i < 6; i++)
    await a.sessions.create(
      'ns',
      { id: `s${i}`, task: `postgres tuning ${i}`, messages: [] },
      a.ctx,
    );
  await a.drainAll();
  await (await a.engine.vectors('ns'))!.compact('ns');
  await a.drainAll();
  const f32 = (await listAll(objects, 'ns/ns/x/v/')).find((k) => /\/g\/.*\.f32$/.test(k))!;
  const body = (await objects.get(f32))!.body;
  await objects.put(f32, body.slice(0, body.byteLength - DIMS * 4));

  // A new process loads the damaged segment: the search answers (lexically) and schedules the rebuild.
  const b = searchDevice(objects, { onError }, embedder());
  await b.search('ns', 'sql', 10); // no session holds the word: only the vectors find them
  await b.drainAll();
  const vectors = (await b.engine.vectors('ns'))!;
  await expect(vectors.compact('ns')).resolves.toBeUndefined();
  // The vector index is whole again: new saves get vectors, a delete purges, and `sql` finds sessions.
  await b.sessions.create('ns', { id: 's6', task: 'postgres tuning 6', messages: [] }, b.ctx);
  await b.sessions.delete('ns', 's0', b.ctx);
  await b.drainAll();
  await expect(vectors.compact('ns')).resolves.toBeUndefined();
  const hits = (await b.search('ns', 'sql', 10)).map((h) => h.id).sort();
  expect(hits).toEqual(['s1', 's2', 's3', 's4', 's5', 's6']);
  expect(errors).toEqual([]);
}, 30_000);
