// A list on Workers after many writes with no list in between (review s60b, finding 1). An invocation may
// make 1,000 R2 binding operations, waitUntil work included (docs/deploy.md). Until 2026-12-07 a list read
// every log record no root covered before it scheduled the compaction that folds them: after about 1,000
// writes with no list, every list, latest, search and cleanup answered 503 for good, since no listing got
// far enough to schedule that compaction. Now a Worker's reader that finds more than 300 such records folds
// the oldest ones first (one sliced compaction of up to 600 per request), and answers 503 with Retry-After
// while more than 300 are left, so that repeated lists end the backlog.
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { LIMIT, limitedWorker, type Invocation } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

const n = 1100;
const idOf = (i: number) => `s${String(i).padStart(4, '0')}`;

describe('a list on Workers after 1,100 writes with no list in between', () => {
  it('answers 200 within a few calls, never past 1,000 operations, with exactly the sessions created', async () => {
    const dir = tempDir('list-backlog');
    const { call, isolate } = limitedWorker(new LocalStore(dir));
    // One list before: the manifest has a root.
    expect((await call('GET', '/v1/sessions')).status).toBe(200);
    for (let i = 0; i < n; i++) {
      if (i % 20 === 0) isolate(); // Cloudflare spreads requests over isolates
      const r = await call('POST', '/v1/sessions', {
        id: idOf(i),
        task: `task ${i}`,
        messages: [{ role: 'user', content: `hello ${i}` }],
      });
      expect(r.status).toBe(201);
    }

    const statuses: number[] = [];
    let ok: Invocation | undefined;
    for (let k = 0; k < 4 && !ok; k++) {
      isolate();
      const r = await call('GET', '/v1/sessions?limit=5');
      statuses.push(r.status);
      expect(r.used, `call ${k}`).toBeLessThanOrEqual(LIMIT);
      if (r.status === 200) ok = r;
      else {
        expect(r.status, JSON.stringify(r.json)).toBe(503);
        expect(r.retryAfter).toBe('1');
        expect(String(r.json.detail)).toMatch(/catching up on \d+ writes/);
      }
    }
    expect(ok, `statuses ${statuses.join(',')}`).toBeDefined();
    expect((ok!.json.sessions as { id: string }[]).map((s) => s.id)).toEqual(
      [1099, 1098, 1097, 1096, 1095].map(idOf),
    );

    // Every session created, listed once, by a cursor walk from one isolate (each page its own call).
    const seen: string[] = [];
    isolate();
    let cursor: string | undefined;
    do {
      const page = await call(
        'GET',
        `/v1/sessions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.status, JSON.stringify(page.json)).toBe(200);
      expect(page.used).toBeLessThanOrEqual(LIMIT);
      seen.push(...(page.json.sessions as { id: string }[]).map((s) => s.id));
      cursor = (page.json.next_cursor as string | null) ?? undefined;
    } while (cursor);
    expect(seen.slice().sort()).toEqual(Array.from({ length: n }, (_, i) => idOf(i)));
    expect(new Set(seen).size).toBe(n);

    // latest and search answer from a new isolate too.
    isolate();
    const latest = await call('GET', '/v1/sessions/latest');
    expect(latest.status).toBe(200);
    expect(latest.json.id).toBe(idOf(n - 1));
    expect(latest.used).toBeLessThanOrEqual(LIMIT);
  }, 240_000);
});
