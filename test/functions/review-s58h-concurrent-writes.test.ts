// Review s58h (fixed 2026-12-06: no group commit on Workers and Lambda, SessionStore `groupCommit`): two
// or more appends to one session arriving at once at one Worker isolate (as Cloudflare
// routes concurrent requests) are grouped into one commit (GroupQueue, lib/sessions/key-queue.ts) run by the
// first request's handler. The other requests wait on a promise only the first request's I/O settles:
// workerd sees them hang and cancels them with a plain-text 500 ("...would never generate a response"),
// although their messages landed. Contract: "never 409/500/503 for a write that landed"; every error is
// problem+json; an append without If-Match "lands after whatever is there, never lost".
import type { Miniflare } from 'miniflare';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';
import { startWorkerd } from '../support/workerd.js';

// The R2-only bundle, built as test/functions/worker.test.ts builds it, in miniflare's workerd.

const output: string[] = [];
let built: Promise<{ r2Only: string }> | undefined;
function bundles() {
  built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-s58h-'));
    return { r2Only: await buildWorker(join(dir, 'r2', 'worker-r2.js'), { s3: false }) };
  })();
  return built;
}

const instances: Miniflare[] = [];
function start(script: string, bindings: Record<string, unknown>) {
  const mf = startWorkerd(script, bindings, { output: (text) => output.push(text) });
  instances.push(mf);
  return mf;
}
async function disposeAll() {
  await Promise.all(instances.splice(0).map((mf) => mf.dispose()));
}
const TOKEN = 'tok_s58h_worker_9Kx2';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

afterAll(disposeAll);

describe('Worker: concurrent appends to one session in one isolate', () => {
  it('answers every append that landed with its 200 receipt, not a runtime 500', async () => {
    const { r2Only } = await bundles();
    const mf = start(r2Only, { SATCHEL_TOKENS: `edge/w=${TOKEN}`, SATCHEL_LOG: 'off' });
    const created = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ task: 'concurrent appends at the edge' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const n = 6;
    const answers = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const res = await mf.dispatchFetch(`http://w/v1/sessions/${id}/messages`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ messages: [{ role: 'user', content: `m${i}` }] }),
        });
        return {
          status: res.status,
          type: res.headers.get('content-type'),
          body: await res.text(),
        };
      }),
    );
    const got = (await (
      await mf.dispatchFetch(`http://w/v1/sessions/${id}`, { headers: auth })
    ).json()) as { messages: unknown[] };
    // Every message landed ...
    expect(got.messages).toHaveLength(n);
    // ... so every append must say so.
    expect(answers.map((a) => `${a.status} ${a.body.slice(0, 80)}`)).toEqual(
      Array.from({ length: n }, () => expect.stringMatching(/^200 \{"id"/)),
    );
  }, 120_000);

  it.each([
    ['a trim', (id: string) => [`/v1/sessions/${id}/trim`, { keep: 2 }]],
    [
      'a continue (no model: it stores the message)',
      (id: string) => [`/v1/sessions/${id}/continue`, { message: 'c' }],
    ],
  ] as const)(
    "an append beside %s: both answer 200 or a problem, never the runtime's hang 500",
    async (_label, other) => {
      const { r2Only } = await bundles();
      const mf = start(r2Only, { SATCHEL_TOKENS: `edge/w=${TOKEN}`, SATCHEL_LOG: 'off' });
      const created = await mf.dispatchFetch('http://w/v1/sessions', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          task: 'pair',
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: 'u' },
            { role: 'assistant', content: 'a' },
          ],
        }),
      });
      const { id } = (await created.json()) as { id: string };
      const [path, body] = other(id);
      const answers = await Promise.all(
        [
          [`/v1/sessions/${id}/messages`, { messages: [{ role: 'user', content: 'x' }] }] as const,
          [path, body] as const,
        ].map(async ([p, b]) => {
          const res = await mf.dispatchFetch(`http://w${p}`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify(b),
          });
          return `${res.status} ${res.headers.get('content-type')} ${(await res.text()).slice(0, 60)}`;
        }),
      );
      for (const a of answers)
        expect(a).toMatch(/^(200 application\/json|\d{3} application\/problem\+json) /);
    },
    120_000,
  );

  it('a retry with the same Idempotency-Key sent while the first is in flight answers the stored receipt', async () => {
    const { r2Only } = await bundles();
    const mf = start(r2Only, { SATCHEL_TOKENS: `edge/w=${TOKEN}`, SATCHEL_LOG: 'off' });
    const created = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ task: 'idempotent' }),
    });
    const { id } = (await created.json()) as { id: string };
    const answers = await Promise.all(
      [0, 1, 2].map(async () => {
        const res = await mf.dispatchFetch(`http://w/v1/sessions/${id}/messages`, {
          method: 'POST',
          headers: { ...auth, 'idempotency-key': 'edge-retry-1' },
          body: JSON.stringify({ messages: [{ role: 'user', content: 'once' }] }),
        });
        return { status: res.status, body: await res.text() };
      }),
    );
    const got = (await (
      await mf.dispatchFetch(`http://w/v1/sessions/${id}`, { headers: auth })
    ).json()) as { messages: unknown[] };
    expect(got.messages).toHaveLength(1); // stored once ...
    // ... and every attempt is told so, with the same receipt.
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
  }, 120_000);
});
