import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import { listeningUrl, spawnEntry } from '../support/node-entry.js';

// Issue 12's kill -9 probe: the real server (functions/node.ts, as `npm start` runs it) is killed with
// SIGKILL while 4 writers append, on the local folder and on radosgw; a new server on the same storage
// then holds every acknowledged message exactly once, lists the session at its newest revision, and
// takes writes again. Loopback only, bounded in count and time.

interface Server {
  url: string;
  child: ChildProcess;
}

/** Starts functions/node.ts with `env` and resolves once it listens. */
async function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawnEntry(env);
  return { url: await listeningUrl(child), child };
}

async function call(url: string, method: string, path: string, body?: unknown, key?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers['idempotency-key'] = key;
  const res = await fetch(url + path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json().catch(() => undefined)) as any };
}

function storages(): [string, () => Record<string, string>][] {
  return [
    ['local folder', () => ({ SATCHEL_DATA_DIR: mkdtempSync(join(tmpdir(), 'satchel-kill-')) })],
    [
      'radosgw',
      () => {
        const s3 = inject('s3');
        return {
          SATCHEL_STORAGE: 's3',
          S3_ENDPOINT: s3.endpoint,
          S3_REGION: s3.region,
          S3_BUCKET: s3.bucket,
          S3_PREFIX: `kill-${Math.random().toString(36).slice(2, 8)}/`,
          AWS_ACCESS_KEY_ID: s3.accessKeyId,
          AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        };
      },
    ],
  ];
}

describe.each(storages())('kill -9 of the server during writes, on the %s', (_name, storageEnv) => {
  it('keeps every acknowledged message exactly once, and a new server carries on', async () => {
    const env = storageEnv();
    const first = await startServer(env);
    const created = await call(first.url, 'POST', '/v1/sessions', { task: 'kill -9' });
    expect(created.status).toBe(201);
    const id: string = created.json.id;
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 200 && !stop; i++) {
        const content = `w${w}-m${i}`;
        try {
          const res = await call(
            first.url,
            'POST',
            `/v1/sessions/${id}/messages`,
            {
              messages: [{ role: 'user', content }],
            },
            `k-${content}`,
          );
          if (res.status === 200) acknowledged.push(content);
        } catch {
          return; // the server is gone
        }
      }
    });
    // Let some writes land, then kill it mid-stream.
    while (acknowledged.length < 20) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);

    const second = await startServer(env);
    try {
      const got = await call(second.url, 'GET', `/v1/sessions/${id}`);
      expect(got.status).toBe(200);
      const stored: string[] = got.json.messages.map((m: { content: string }) => m.content);
      for (const content of acknowledged)
        expect(stored.filter((c) => c === content)).toHaveLength(1);
      expect(new Set(stored).size).toBe(stored.length);
      // Each writer's messages in its order.
      for (let w = 0; w < 4; w++) {
        const mine = stored
          .filter((c) => c.startsWith(`w${w}-`))
          .map((c) => Number(c.split('-m')[1]));
        expect(mine).toEqual([...mine].sort((a, b) => a - b));
      }
      // The list (the manifest) shows the session at the revision the object has.
      const list = await call(second.url, 'GET', '/v1/sessions');
      expect(list.json.sessions.find((s: { id: string }) => s.id === id)).toMatchObject({
        turns: stored.length,
      });
      const more = await call(second.url, 'POST', `/v1/sessions/${id}/messages`, {
        messages: [{ role: 'user', content: 'after the restart' }],
      });
      expect(more.status).toBe(200);
      expect(more.json.revision).toBe(got.json.revision + 1);
    } finally {
      second.child.kill('SIGTERM');
    }
  }, 120_000);
});

describe('SIGTERM of the server', () => {
  it('stores the records of answered writes and removes its pending markers before it exits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-term-'));
    const server = await startServer({ SATCHEL_DATA_DIR: dir });
    const created = await call(server.url, 'POST', '/v1/sessions', { task: 'sigterm' });
    const id: string = created.json.id;
    for (let i = 0; i < 3; i++)
      expect(
        (
          await call(server.url, 'POST', `/v1/sessions/${id}/messages`, {
            messages: [{ role: 'user', content: `m${i}` }],
          })
        ).status,
      ).toBe(200);
    // Stop at once: the last appends' log and audit records are still lingering to be batched.
    const exited = new Promise<number | null>((r) => server.child.once('exit', (code) => r(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const objects = new LocalStore(dir);
    const manifest = await listAll(objects, keys.manifest('default'));
    expect(manifest.filter((k) => k.includes('/m/p/'))).toEqual([]);
    expect(manifest.filter((k) => k.includes('/m/l/')).length).toBeGreaterThan(0);
    const store = new SessionStore(objects, { audit: new AuditLog(objects, (s) => s) });
    expect((await store.auditRecords('default', id)).map((a) => a.op)).toEqual([
      'create',
      'append',
      'append',
      'append',
    ]);
    const listed = await store.list('default', { limit: 10 });
    expect(listed.sessions.find((s) => s.id === id)?.turns).toBe(3);
  }, 60_000);
});
