import { describe, expect, it } from 'vitest';
import { makeApp, TOKENS } from './helpers.js';

// docs/api.md, POST /v1/sessions: `created_at` and `updated_at` are "not in the future". Until 2026-12-06
// (review s54b) a time up to 5 minutes ahead of the server's clock was stored as sent: it stayed the
// namespace's newest, so `latest` answered it and the sync loop's `updated_after` passed over real writes
// to other sessions after it. It is stored as the server's time now.

type Summary = { id: string; updated_at: string };

describe('an import with updated_at ahead of the server clock', () => {
  it('the documented sync loop still sees a session written after it (since − 60 s)', async () => {
    const { call } = await makeApp();
    const x = (await call('POST', '/v1/sessions', { body: { task: 'x' } })).json.id as string;
    // The phone imports an odek file whose updated_at its own clock, 3 minutes fast, stamped.
    const ahead = new Date(Date.now() + 3 * 60_000).toISOString();
    const imported = await call('POST', '/v1/sessions', {
      token: TOKENS.phone,
      body: { id: 'odek-file', task: 'imported', updated_at: ahead },
    });
    expect(imported.status).toBe(201);
    expect(Date.parse(imported.json.updated_at)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(imported.json.created_at)).toBeLessThanOrEqual(Date.now());

    // The laptop runs the sync loop (docs/api.md "Many devices"): since = newest updated_at listed.
    const walk = async (after?: string) => {
      const q = after ? `?limit=100&updated_after=${encodeURIComponent(after)}` : '?limit=100';
      return (await call('GET', `/v1/sessions${q}`)).json.sessions as Summary[];
    };
    const first = await walk();
    const since = first
      .map((s) => s.updated_at)
      .sort()
      .at(-1)!;

    // Then the phone appends to x, now (a real change, after the laptop's walk).
    const appended = await call('POST', `/v1/sessions/${x}/messages`, {
      token: TOKENS.phone,
      body: { messages: [{ role: 'user', content: 'written after the walk' }] },
    });
    expect(appended.status).toBe(200);

    const next = await walk(new Date(Date.parse(since) - 60_000).toISOString());
    // The loop lists x again: it changed after the last walk.
    expect(next.map((s) => s.id)).toContain(x);
  });

  it('latest is the session updated most recently, not an import stamped in the future', async () => {
    const { call } = await makeApp();
    const ahead = new Date(Date.now() + 3 * 60_000).toISOString();
    const imported = await call('POST', '/v1/sessions', {
      body: { id: 'odek-file', task: 'imported', updated_at: ahead },
    });
    expect([201, 400]).toContain(imported.status);
    const x = (await call('POST', '/v1/sessions', { body: { task: 'x' } })).json.id as string;
    await call('POST', `/v1/sessions/${x}/messages`, {
      body: { messages: [{ role: 'user', content: 'the newest write' }] },
    });
    const latest = await call('GET', '/v1/sessions/latest');
    expect(latest.json.id).toBe(x);
  });
});
