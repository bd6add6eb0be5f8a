// Requests per trim, pop and PUT (text removed from older versions), against an append.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeApp } from '../test/http/helpers.js';
import { LocalStore } from '../lib/storage/local.js';
import type { ObjectStore } from '../lib/storage/port.js';

type Counts = Record<'get' | 'put' | 'delete' | 'list' | 'head', number>;

function counting(): { store: ObjectStore; n: Counts } {
  const inner = new LocalStore(mkdtempSync(join(tmpdir(), 'cost-')));
  const n: Counts = { get: 0, put: 0, delete: 0, list: 0, head: 0 };
  const store: ObjectStore = {
    name: inner.name,
    get: (k) => (n.get++, inner.get(k)),
    put: (k, b, o) => (n.put++, inner.put(k, b, o)),
    delete: (k) => (n.delete++, inner.delete(k)),
    list: (p, o) => (n.list++, inner.list(p, o)),
    head: (k) => (n.head++, inner.head(k)),
  };
  return { store, n };
}

// Storage requests per write that removes text (the index prune and the manifest scrub, docs/design.md
// "Text a write removes"), next to an append, on a local folder with a request-counting wrapper: 50
// sessions of 11 messages, indexed and compacted, then each operation on 20 of them, background drained
// after each. `npm run bench:removal`
async function main(): Promise<void> {
  const { store, n } = counting();
  const app = await makeApp({ objects: store });
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const msgs = [{ role: 'system', content: 's' }];
    for (let j = 0; j < 10; j++)
      msgs.push({ role: j % 2 ? 'assistant' : 'user', content: `message ${i} ${j} word${j}` });
    ids.push(
      (await app.call('POST', '/v1/sessions', { body: { task: `task ${i}`, messages: msgs } })).json
        .id,
    );
  }
  await app.background.drain();
  await app.call('POST', '/v1/session_search', { body: { action: 'search', query: 'word3' } });
  await app.search.lexical.compact('alice', true);
  await app.sessions.manifest.compact('alice', true);
  await app.background.drain();
  const measure = async (what: string, op: (id: string) => Promise<unknown>) => {
    for (const k of Object.keys(n) as (keyof Counts)[]) n[k] = 0;
    for (const id of ids.slice(0, 20)) {
      await op(id);
      await app.background.drain();
    }
    const total = Object.values(n).reduce((a, b) => a + b, 0);
    console.log(
      what.padEnd(14),
      JSON.stringify(Object.fromEntries(Object.entries(n).map(([k, v]) => [k, v / 20]))),
      'total/op',
      total / 20,
    );
  };
  await measure('append', (id) =>
    app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content: 'more' }] },
    }),
  );
  await measure('pop', (id) => app.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 1 } }));
  await measure('trim', (id) => app.call('POST', `/v1/sessions/${id}/trim`, { body: { keep: 4 } }));
  await measure('put same task', async (id) => {
    const g = await app.call('GET', `/v1/sessions/${id}`);
    await app.call('PUT', `/v1/sessions/${id}`, {
      body: { ...g.json, messages: g.json.messages.slice(0, 2) },
      headers: { 'if-match': g.headers.get('etag')! },
    });
  });
  await measure('put new task', async (id) => {
    const g = await app.call('GET', `/v1/sessions/${id}`);
    await app.call('PUT', `/v1/sessions/${id}`, {
      body: { ...g.json, task: 'renamed ' + id },
      headers: { 'if-match': g.headers.get('etag')! },
    });
  });
  let made = 0;
  const secrets = Buffer.from(JSON.stringify(['s3cret-value-1234'])).toString('base64');
  await measure('create+secrets', () =>
    app.call('POST', '/v1/sessions', {
      body: { id: `made-${made++}`, task: 'new', messages: [] },
      headers: { 'satchel-secrets': secrets },
    }),
  );
}

await main();
