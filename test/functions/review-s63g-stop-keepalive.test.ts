// Review s63g: a client busy on a kept-alive connection (a pooled client: undici, Satchel's client) kept
// the Node server's stop waiting for its whole 10 s. Every answer after SIGTERM still said
// `Connection: keep-alive`, so it went on sending (about 100 appends after the signal), the connection never
// went idle, and at 10 s its request in flight was reset (ECONNRESET: a write it could not tell landed or
// not), and the end of the stop (the second drain, retiring the pending markers) never ran. Now answers
// after the signal close their connection: the client stops sending there, the stop ends when its
// requests have.
import { readdirSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { SessionStore } from '../../lib/sessions/store.js';
import { LocalStore } from '../../lib/storage/local.js';
import { listeningUrl, spawnEntry } from '../support/node-entry.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

interface Sent {
  i?: number;
  status?: number;
  connection?: string;
  error?: string;
}

it('answers after SIGTERM close a busy kept-alive connection; the stop ends clean and resets nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 's63g-stop-'));
  const child = spawnEntry({ SATCHEL_DATA_DIR: dir });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  const { hostname, port } = new URL(await listeningUrl(child));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const send = (method: string, path: string, body: unknown) =>
    new Promise<Sent & { body?: string }>((resolve) => {
      const r = http.request(
        { hostname, port, method, path, agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          let b = '';
          res.on('data', (d: Buffer) => (b += d.toString()));
          res.on('end', () =>
            resolve({ status: res.statusCode!, connection: res.headers.connection!, body: b }),
          );
        },
      );
      r.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
      r.end(JSON.stringify(body));
    });
  const made = await send('POST', '/v1/sessions', { task: 'stop while busy' });
  expect(made.status).toBe(201);
  const id = JSON.parse(made.body!).id as string;
  const after: Sent[] = [];
  let signalled = false;
  setTimeout(() => {
    signalled = true;
    child.kill('SIGTERM');
  }, 300);
  const big = 'x'.repeat(200_000);
  for (let i = 0; !gone && i < 400; i++) {
    const sent = signalled;
    const got = await send('POST', `/v1/sessions/${id}/messages`, {
      messages: [{ role: 'user', content: `m${i} ${big}` }],
    });
    if (sent) after.push({ i, ...got, body: undefined } as Sent);
  }
  await exited;
  agent.destroy();
  // Before its fix: about 100 appends answered `keep-alive` after the signal, then one reset at 10 s,
  // which may have been stored. A request sent on a connection the stop found idle (closed at once) can
  // still be reset, as by any server closing an idle connection: it was never read, so never stored.
  const stored = await new SessionStore(new LocalStore(dir)).get('default', id);
  const texts = new Set(stored.messages.map((m) => String(m.content).split(' ')[0]));
  for (const reset of after.filter((a) => a.error === 'ECONNRESET'))
    expect(texts.has(`m${reset.i}`), `m${reset.i} was reset, and stored`).toBe(false);
  const answered = after.filter((a) => a.status !== undefined);
  expect(answered.length).toBeLessThanOrEqual(1);
  for (const a of answered) expect(a.connection).toBe('close');
  // The stop ran to its end: the process's idle pending markers were retired.
  const markers = join(dir, 'ns', 'default', 'm', 'p');
  const left = (() => {
    try {
      return readdirSync(markers, { recursive: true, withFileTypes: true }).filter((e) =>
        e.isFile(),
      );
    } catch {
      return [];
    }
  })();
  expect(left).toEqual([]);
}, 60_000);
