import { describe, expect, it } from 'vitest';
import { CountingStore } from '../../lib/storage/counting.js';
import { listAll } from '../../lib/storage/prefix.js';
import { tempLocalStore } from '../support/temp-store.js';
import { makeApp, TOKENS } from './helpers.js';

// Many devices: conditional GETs and `updated_after`, and the sync loop README's "Many devices" section
// tells a device to run, run here by a laptop while a phone writes.

type Summary = { id: string; updated_at: string };
type Local = { revision: number; updated_at: string; messages: unknown[] };

describe('many devices: 304 and updated_after', () => {
  it('If-None-Match gives 304 while nothing changed, with the ETag; a list of tags, a weak tag or * match too', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't' } });
    const notModified = await call('GET', `/v1/sessions/${json.id}`, {
      headers: { 'if-none-match': '"1"' },
    });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('etag')).toBe('"1"');
    expect(notModified.text).toBe('');
    for (const inm of ['W/"1"', '"7", "1"', '*']) {
      expect(
        (await call('GET', `/v1/sessions/${json.id}`, { headers: { 'if-none-match': inm } }))
          .status,
        inm,
      ).toBe(304);
    }
    expect(
      (await call('GET', `/v1/sessions/${json.id}`, { headers: { 'if-none-match': '"2"' } }))
        .status,
    ).toBe(200);
  });

  it("a process that holds none of a large session's parts answers a 304 from the delta alone", async () => {
    const objects = new CountingStore(tempLocalStore('sync-304'));
    const writer = await makeApp({ objects });
    const text = 'x'.repeat(1000);
    const messages = Array.from({ length: 300 }, (_, i) => ({
      role: 'user',
      content: `${i} ${text}`,
    }));
    const { json } = await writer.call('POST', '/v1/sessions', { body: { task: 't', messages } });
    // The first append stores the session (over 256 KiB) as a base and a delta.
    const appended = await writer.call('POST', `/v1/sessions/${json.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'one more' }] },
    });
    expect(appended.json.revision).toBe(2);
    await writer.background.drain();
    const reader = async (inm?: string) => {
      const { call } = await makeApp({ objects }); // a new process: no parts held
      objects.reset();
      const headers: Record<string, string> = inm ? { 'if-none-match': inm } : {};
      const res = await call('GET', `/v1/sessions/${json.id}`, { headers });
      return { res, gets: objects.reset().get };
    };
    const held = await reader('"2"');
    expect(held.res.status).toBe(304);
    expect(held.res.headers.get('etag')).toBe('"2"');
    expect(held.gets).toBe(1); // the delta; before, its base too
    const stale = await reader('"1"');
    expect(stale.res.status).toBe(200);
    expect(stale.gets).toBeGreaterThan(1);
    expect(stale.res.json.messages).toHaveLength(301);
    expect(stale.res.json).toEqual((await reader()).res.json);
  });

  it('latest never answers 304: the revision tag cannot tell which session it was; Content-Location names the one to revalidate', async () => {
    const { call } = await makeApp();
    const first = (await call('POST', '/v1/sessions', { body: { task: 'first' } })).json
      .id as string;
    const got = await call('GET', '/v1/sessions/latest');
    expect(got.headers.get('etag')).toBe('"1"');
    expect(got.headers.get('content-location')).toBe(`/v1/sessions/${first}`);
    // Another device starts a session, also at revision 1: a 304 here would keep the wrong session.
    const second = (await call('POST', '/v1/sessions', { body: { task: 'second' } })).json
      .id as string;
    const again = await call('GET', '/v1/sessions/latest', { headers: { 'if-none-match': '"1"' } });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(second);
    expect(again.headers.get('content-location')).toBe(`/v1/sessions/${second}`);
    expect(
      (
        await call('GET', again.headers.get('content-location')!, {
          headers: { 'if-none-match': '"1"' },
        })
      ).status,
    ).toBe(304);
  });

  it('updated_after is exclusive: the newest updated_at itself lists nothing, a millisecond before lists it', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't' } });
    const at: string = json.updated_at;
    expect(
      (await call('GET', `/v1/sessions?updated_after=${encodeURIComponent(at)}`)).json.sessions,
    ).toEqual([]);
    const before = new Date(Date.parse(at) - 1).toISOString();
    expect(
      (
        await call('GET', `/v1/sessions?updated_after=${encodeURIComponent(before)}`)
      ).json.sessions.map((s: Summary) => s.id),
    ).toEqual([json.id]);
    // Any RFC 3339 offset names the same instant.
    const offset = new Date(Date.parse(at) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(
      (await call('GET', `/v1/sessions?updated_after=${encodeURIComponent(offset)}`)).json.sessions,
    ).toEqual([]);
  });

  it('times past the millisecond (odek writes them) order the list and latest, and count for updated_after (review)', async () => {
    const { call, objects, background } = await makeApp();
    // Within one millisecond; the ids' order is the opposite of the times'.
    for (const [id, updated_at] of [
      ['a-newer', '2025-01-01T00:00:00.000900Z'],
      ['m-middle', '2025-01-01T00:00:00.0005Z'],
      ['z-older', '2025-01-01T00:00:00Z'],
    ]) {
      const body = { task: 't', id, created_at: '2025-01-01T00:00:00Z', updated_at };
      expect((await call('POST', '/v1/sessions', { body })).json.updated_at).toBe(updated_at);
    }
    const ids = async (query = '') =>
      (await call('GET', `/v1/sessions${query}`)).json.sessions.map((s: Summary) => s.id);
    expect(await ids()).toEqual(['a-newer', 'm-middle', 'z-older']);
    expect((await call('GET', '/v1/sessions/latest')).json.id).toBe('a-newer');
    expect(await ids('?updated_after=2025-01-01T00:00:00.000Z')).toEqual(['a-newer', 'm-middle']);
    expect(await ids('?updated_after=2025-01-01T00:00:00.0007Z')).toEqual(['a-newer']);
    expect(await ids('?updated_after=2025-01-01T00:00:00.0009Z')).toEqual([]);
    // One page at a time, the cursor keeps the place.
    const first = (await call('GET', '/v1/sessions?limit=1')).json;
    expect(first.sessions.map((s: Summary) => s.id)).toEqual(['a-newer']);
    const next = `?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`;
    expect(await ids(next)).toEqual(['m-middle', 'z-older']);
    // The manifest's log records are named by whole milliseconds (their write id follows).
    await background.drain();
    const logs = await listAll(objects, 'ns/alice/m/l/');
    expect(logs.length).toBeGreaterThanOrEqual(3);
    for (const key of logs) expect(key).toMatch(/\/m\/l\/\d{13}-[^./]+\.json$/);
  });
});

describe('many devices: the sync loop', () => {
  it("a laptop that runs the README's loop ends up with the phone's sessions, fetching only what changed", async () => {
    const { call } = await makeApp();
    const phone = (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => call(method, path, { token: TOKENS.phone, body, headers });
    const local = new Map<string, Local>();
    let since: string | undefined;
    let fetched = 0;
    let notModified = 0;
    const OVERLAP_MS = 60_000;

    // One pass of the loop, as README "Many devices: the sync loop" writes it.
    const sync = async () => {
      let newest = since;
      let cursor: string | undefined;
      do {
        const q = new URLSearchParams({ limit: '2' });
        if (since) q.set('updated_after', new Date(Date.parse(since) - OVERLAP_MS).toISOString());
        if (cursor) q.set('cursor', cursor);
        const page = await call('GET', `/v1/sessions?${q}`);
        expect(page.status).toBe(200);
        for (const s of page.json.sessions as Summary[]) {
          if (!newest || s.updated_at > newest) newest = s.updated_at;
          const mine = local.get(s.id);
          if (mine?.updated_at === s.updated_at) continue;
          const got = await call('GET', `/v1/sessions/${s.id}`, {
            headers: mine ? { 'if-none-match': `"${mine.revision}"` } : {},
          });
          if (got.status === 304) notModified++;
          else if (got.status === 404) local.delete(s.id);
          else {
            fetched++;
            local.set(s.id, {
              revision: got.json.revision,
              updated_at: got.json.updated_at,
              messages: got.json.messages,
            });
          }
        }
        cursor = page.json.next_cursor ?? undefined;
      } while (cursor);
      since = newest;
    };

    const a = (await phone('POST', '/v1/sessions', { task: 'a' })).json.id as string;
    const b = (await phone('POST', '/v1/sessions', { task: 'b' })).json.id as string;
    const c = (await phone('POST', '/v1/sessions', { task: 'c' })).json.id as string;
    await sync();
    expect([...local.keys()].sort()).toEqual([a, b, c].sort());
    expect(fetched).toBe(3);

    // Nothing changed: the overlap lists them again, but nothing is fetched.
    await sync();
    expect(fetched).toBe(3);

    // The phone appends to one session (no If-Match: it lands, whatever else happened) and retries it
    // with the same Idempotency-Key: one message.
    const msg = { messages: [{ role: 'user', content: 'from the phone' }] };
    await phone('POST', `/v1/sessions/${b}/messages`, msg, { 'idempotency-key': 'phone-1' });
    expect(
      (
        await phone('POST', `/v1/sessions/${b}/messages`, msg, { 'idempotency-key': 'phone-1' })
      ).headers.get('idempotent-replayed'),
    ).toBe('true');
    await sync();
    expect(fetched).toBe(4);
    expect(local.get(b)!.messages).toEqual(msg.messages);
    expect(local.get(b)!.revision).toBe(2);

    // The laptop's own stale replace is refused (412); it reads again and retries on the new revision.
    const stale = await call('PUT', `/v1/sessions/${b}`, {
      body: { task: 'renamed', messages: [] },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(412);
    expect(notModified).toBe(0);

    // A session deleted elsewhere is not listed by updated_after; a GET of it says 404.
    await phone('DELETE', `/v1/sessions/${c}`);
    await sync();
    expect(
      (
        await call('GET', `/v1/sessions/${c}`, {
          headers: { 'if-none-match': `"${local.get(c)!.revision}"` },
        })
      ).status,
    ).toBe(404);
  });
});
