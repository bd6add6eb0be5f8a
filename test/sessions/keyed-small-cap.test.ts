// Under the smallest cap (SATCHEL_MAX_SESSION_BYTES 4096), the Idempotency-Key records a session keeps in
// its object (up to 24, about 300 bytes each) took the room of its messages: after 13 keyed appends of
// 150 bytes every further one was a 413, for 24 hours (review s52f, left at stop 52). The object now keeps
// keyed records within an eighth of the cap (key-records.ts `storeOut`); these tests failed before that.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { openTestS3 } from '../support/s3.js';
import type { ObjectStore } from '../../lib/storage/port.js';

const small = { SATCHEL_MAX_SESSION_BYTES: '4096' };
const key = (i: number) => `key-${i}-${'x'.repeat(20)}`;
const reply = (i: number) => ({
  role: 'assistant',
  content: `reply number ${i} ` + 'w'.repeat(100),
});

type App = Awaited<ReturnType<typeof makeApp>>;

async function keyedAppends(apps: App[], n: number): Promise<number[]> {
  const refused: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await apps[i % apps.length]!.call('POST', '/v1/sessions/s/messages', {
      headers: { 'Idempotency-Key': key(i) },
      body: { messages: [reply(i)] },
    });
    if (r.status !== 200) refused.push(i);
  }
  return refused;
}

async function expectReplays(app: App, n: number): Promise<void> {
  for (const i of [0, 3, Math.floor(n / 2), n - 1]) {
    const again = await app.call('POST', '/v1/sessions/s/messages', {
      headers: { 'Idempotency-Key': key(i) },
      body: { messages: [reply(i)] },
    });
    expect(again.status, `key ${i}`).toBe(200);
    expect(again.headers.get('idempotent-replayed'), `key ${i}`).toBe('true');
  }
}

async function run(objects?: ObjectStore, stores = 1): Promise<void> {
  const apps: App[] = [];
  for (let i = 0; i < stores; i++)
    apps.push(await makeApp({ env: small, ...(objects ? { objects } : {}) }));
  const c = await apps[0]!.call('POST', '/v1/sessions', {
    body: {
      id: 's',
      task: 't',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'go' },
      ],
    },
  });
  expect(c.status).toBe(201);
  expect(await keyedAppends(apps, 60)).toEqual([]);
  const g = await apps[0]!.call('GET', '/v1/sessions/s');
  expect(g.json.messages.at(-1).content).toMatch(/^reply number 59 /);
  expect(g.json.messages.slice(0, 2).map((m: { content: string }) => m.content)).toEqual([
    'sys',
    'go',
  ]);
  await expectReplays(apps[apps.length - 1]!, 60);
  const after = await apps[0]!.call('GET', '/v1/sessions/s');
  expect(after.json.revision).toBe(g.json.revision);
}

it('keyed appends under the smallest cap keep being stored, and their retries replay', async () => {
  await run();
});

it('the same from two stores taking turns on radosgw', async () => {
  await run(openTestS3('keyed-small-cap'), 2);
});
