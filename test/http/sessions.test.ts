import { describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp, sha256hex, TOKENS } from './helpers.js';

const sys = { role: 'system', content: 'be brief' };
const hi = { role: 'user', content: 'hello' };

describe('HTTP: sessions', () => {
  it('create → 201 with the session, ETag and Location; get → 200 with ETag', async () => {
    const { call } = await makeApp();
    const created = await call('POST', '/v1/sessions', {
      body: { task: 'deploy', model: 'm1', provider: 'p1', messages: [sys, hi] },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    expect(created.headers.get('location')).toBe(`/v1/sessions/${created.json.id}`);
    expect(created.json).toMatchObject({
      task: 'deploy',
      model: 'm1',
      provider: 'p1',
      turns: 1,
      revision: 1,
      messages: [sys, hi],
    });
    expect(created.json.satchel).toBeUndefined();
    const got = await call('GET', `/v1/sessions/${created.json.id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('"1"');
    expect(got.json).toEqual(created.json);
  });

  it('a large session stored as base and delta answers GET whole, streamed, with its length', async () => {
    const { call } = await makeApp();
    const big = Array.from({ length: 300 }, (_, i) => ({
      role: 'user',
      content: `m${i} ${'y'.repeat(1000)}`,
    }));
    const created = await call('POST', '/v1/sessions', { body: { task: 'big', messages: big } });
    expect(created.status).toBe(201);
    const id = created.json.id;
    // The first append stores a base; the next ones only the delta.
    for (let i = 0; i < 3; i++)
      expect(
        (
          await call('POST', `/v1/sessions/${id}/messages`, {
            body: { messages: [{ role: 'user', content: `a${i}` }] },
          })
        ).status,
      ).toBe(200);
    const got = await call('GET', `/v1/sessions/${id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('"4"');
    expect(Number(got.headers.get('content-length'))).toBeGreaterThan(256 * 1024);
    expect(got.json.messages.map((m: { content: string }) => m.content.split(' ')[0])).toEqual([
      ...big.map((_, i) => `m${i}`),
      'a0',
      'a1',
      'a2',
    ]);
    expect(got.json.metadata).toEqual({});
    expect(got.json.satchel).toBeUndefined();
    expect(got.json.satchel_delta).toBeUndefined();
    expect(got.json.satchel_parts).toBeUndefined();
    expect(got.json.session).toBeUndefined(); // the delta's own shape never reaches a reader
  });

  it("create may carry a session's original times (an import keeps them); list orders by them", async () => {
    const { call } = await makeApp();
    const old = (
      await call('POST', '/v1/sessions', {
        body: {
          task: 'imported',
          created_at: '2024-03-02T10:00:00Z',
          updated_at: '2024-03-02T10:05:00Z',
        },
      })
    ).json;
    expect(old).toMatchObject({
      created_at: '2024-03-02T10:00:00Z',
      updated_at: '2024-03-02T10:05:00Z',
    });
    // Only `updated_at`: created then too, never after its last update (it was created now; review).
    const half = await call('POST', '/v1/sessions', {
      body: { task: 'imported', updated_at: '2024-03-01T09:00:00Z' },
    });
    expect(half.json).toMatchObject({
      created_at: '2024-03-01T09:00:00Z',
      updated_at: '2024-03-01T09:00:00Z',
    });
    const fresh = (await call('POST', '/v1/sessions', { body: { task: 'new' } })).json;
    expect(Date.parse(fresh.created_at)).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z'));
    expect(
      (await call('GET', '/v1/sessions')).json.sessions.map((s: { id: string }) => s.id),
    ).toEqual([fresh.id, old.id, half.json.id]);
    // The next write moves updated_at to now; created_at stays.
    const appended = (
      await call('POST', `/v1/sessions/${old.id}/messages`, {
        body: { messages: [{ role: 'user', content: 'hi' }] },
      })
    ).json;
    expect(Date.parse(appended.updated_at)).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z'));
    expect((await call('GET', `/v1/sessions/${old.id}`)).json.created_at).toBe(
      '2024-03-02T10:00:00Z',
    );
  });

  it('times sent with an offset are stored in UTC at the same instant, their fraction kept', async () => {
    const { call } = await makeApp();
    const created = await call('POST', '/v1/sessions', {
      body: {
        task: 'offsets',
        created_at: '2025-01-01T10:00:00+05:00',
        updated_at: '2025-01-01T06:00:00.123456-01:00',
        external_refs: [{ kind: 'k', uri: 'u', created_at: '2025-01-01T00:00:00+09:00' }],
      },
    });
    expect(created.status).toBe(201);
    const got = (await call('GET', `/v1/sessions/${created.json.id}`)).json;
    expect(got).toMatchObject({
      created_at: '2025-01-01T05:00:00Z',
      updated_at: '2025-01-01T07:00:00.123456Z',
      external_refs: [expect.objectContaining({ created_at: '2024-12-31T15:00:00Z' })],
    });
    // An offset that would move the time out of years 0000-9999 (a six-digit ISO year) is refused.
    const edge = await call('POST', '/v1/sessions', {
      body: { task: 'edge', created_at: '0000-01-01T00:30:00+01:00' },
    });
    expect(edge.status).toBe(400);
    expect(edge.json.errors).toContainEqual(expect.objectContaining({ path: 'created_at' }));
  });

  it('times in lower case (RFC 3339 allows `t` and `z`) are taken and stored in upper case (review)', async () => {
    const { call } = await makeApp();
    const created = await call('POST', '/v1/sessions', {
      body: {
        task: 'lower case',
        created_at: '2025-01-01t10:00:00z',
        updated_at: '2025-01-02t10:00:00.5+01:00',
      },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const got = (await call('GET', `/v1/sessions/${created.json.id}`)).json;
    expect(got).toMatchObject({
      created_at: '2025-01-01T10:00:00Z',
      updated_at: '2025-01-02T09:00:00.5Z',
    });
  });

  it('create with no system message adds none; with an existing id is 409', async () => {
    const { call } = await makeApp();
    const a = await call('POST', '/v1/sessions', {
      body: { task: 't', id: 'imported-1', messages: [hi] },
    });
    expect(a.json.messages).toEqual([hi]);
    const again = await call('POST', '/v1/sessions', { body: { task: 't', id: 'imported-1' } });
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toBe('application/problem+json');
    expect(again.json).toMatchObject({ status: 409, title: 'Conflict' });
  });

  it('If-None-Match on GET gives 304 when nothing changed', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't' } });
    const notModified = await call('GET', `/v1/sessions/${json.id}`, {
      headers: { 'if-none-match': '"1"' },
    });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    await call('POST', `/v1/sessions/${json.id}/messages`, { body: { messages: [hi] } });
    const changed = await call('GET', `/v1/sessions/${json.id}`, {
      headers: { 'if-none-match': '"1"' },
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toBe('"2"');
  });

  it('append returns the receipt; If-Match stale → 412; Idempotency-Key replays', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't', messages: [sys] } });
    const path = `/v1/sessions/${json.id}/messages`;
    const first = await call('POST', path, {
      body: { messages: [hi] },
      headers: { 'if-match': '"1"', 'idempotency-key': 'abc' },
    });
    expect(first.status).toBe(200);
    expect(Object.keys(first.json).sort()).toEqual(
      [
        'bytes',
        'dropped_groups',
        'episode_untrusted',
        'id',
        'redactions',
        'revision',
        'turns',
        'untrusted_ingested',
        'updated_at',
      ].sort(),
    );
    expect(first.json).toMatchObject({ id: json.id, revision: 2, turns: 1 });
    expect(first.headers.get('etag')).toBe('"2"');
    const replay = await call('POST', path, {
      body: { messages: [hi] },
      headers: { 'if-match': '"1"', 'idempotency-key': 'abc' },
    });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(first.json);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const stale = await call('POST', path, {
      body: { messages: [hi] },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(412);
    const bogus = await call('POST', path, {
      body: { messages: [hi] },
      headers: { 'if-match': 'W/"nonsense"' },
    });
    expect(bogus.status).toBe(412);
    expect((await call('GET', `/v1/sessions/${json.id}`)).json.messages).toHaveLength(2);
  });

  it('PUT replaces with If-Match; without it 428; stale 412', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', {
      body: { task: 't', messages: [sys, hi] },
    });
    const path = `/v1/sessions/${json.id}`;
    expect((await call('PUT', path, { body: { ...json, task: 'x' } })).status).toBe(428);
    const ok = await call('PUT', path, {
      body: { ...json, task: 'renamed', messages: [sys] },
      headers: { 'if-match': '"1"' },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({
      task: 'renamed',
      revision: 2,
      turns: 0,
      created_at: json.created_at,
    });
    expect(ok.headers.get('etag')).toBe('"2"');
    expect(
      (await call('PUT', path, { body: { ...json }, headers: { 'if-match': '"1"' } })).status,
    ).toBe(412);
    expect(
      (
        await call('PUT', '/v1/sessions/nope', {
          body: { task: 't', messages: [] },
          headers: { 'if-match': '"1"' },
        })
      ).status,
    ).toBe(404);
  });

  it('If-Match with a list of tags matches when any one does; the 412 says what was expected (review)', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't', messages: [sys] } });
    const path = `/v1/sessions/${json.id}/messages`;
    const append = (tags: string) =>
      call('POST', path, { body: { messages: [hi] }, headers: { 'if-match': tags } });
    expect((await append('"7", "1"')).status).toBe(200);
    const stale = await append('"7", "1"');
    expect(stale.status).toBe(412);
    expect(stale.json.detail).toBe('the session is at revision 2, none of 7, 1');
    expect((await append('"5"')).json.detail).toBe('the session is at revision 2, not 5');
    const none = await append('"abc", W/"x"');
    expect(none.status).toBe(412);
    expect(none.json.detail).not.toContain('unmatchable');
    expect(none.json.detail).toContain('revision 2');
    expect((await append('"abc", "2"')).status).toBe(200);
    // A quoted tag may hold a comma: `"3,4"` is one opaque tag, never revisions 3 and 4.
    const quoted = await append('"3,4"');
    expect(quoted.status).toBe(412);
    expect(quoted.json.detail).toContain('revision 3');
    expect((await append('"x,y", "3"')).status).toBe(200);
  });

  it('DELETE → 204, then 404; GET of a deleted session → 404', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't' } });
    expect((await call('DELETE', `/v1/sessions/${json.id}`)).status).toBe(204);
    expect((await call('DELETE', `/v1/sessions/${json.id}`)).status).toBe(404);
    expect((await call('GET', `/v1/sessions/${json.id}`)).status).toBe(404);
    expect(
      (await call('POST', `/v1/sessions/${json.id}/messages`, { body: { messages: [hi] } })).status,
    ).toBe(404);
  });

  it('DELETE and trim with If-Match: only at that revision, else 412 and nothing changes', async () => {
    const { call } = await makeApp();
    const { json, headers } = await call('POST', '/v1/sessions', {
      body: { task: 't', messages: [sys, hi, hi, hi] },
    });
    const tag = headers.get('etag')!;
    expect(tag).toBe('"1"');
    const path = `/v1/sessions/${json.id}`;
    for (const stale of ['"7"', 'W/"7"', 'not-a-tag']) {
      const h = { 'if-match': stale };
      const trim = await call('POST', `${path}/trim`, { body: { keep: 2 }, headers: h });
      expect(trim.status, stale).toBe(412);
      expect(trim.headers.get('content-type')).toBe('application/problem+json');
      expect((await call('DELETE', path, { headers: h })).status, stale).toBe(412);
    }
    expect((await call('GET', path)).json.messages).toHaveLength(4);
    const trimmed = await call('POST', `${path}/trim`, {
      body: { keep: 2 },
      headers: { 'if-match': tag },
    });
    expect(trimmed.status).toBe(200);
    expect(trimmed.headers.get('etag')).toBe('"2"');
    expect((await call('DELETE', path, { headers: { 'if-match': tag } })).status).toBe(412);
    expect((await call('DELETE', path, { headers: { 'if-match': '"2"' } })).status).toBe(204);
    expect((await call('DELETE', path, { headers: { 'if-match': '*' } })).status).toBe(404);
  });

  it('list, latest, updated_after and limits', async () => {
    const { call } = await makeApp();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await call('POST', '/v1/sessions', { body: { task: `t${i}`, model: 'm' } })).json.id,
      );
    const page = await call('GET', '/v1/sessions?limit=2');
    expect(page.status).toBe(200);
    expect(page.json.sessions.map((s: { id: string }) => s.id)).toEqual([ids[4], ids[3]]);
    // The contract's fields, plus v1.1's metadata and provenance flags.
    expect(Object.keys(page.json.sessions[0]).sort()).toEqual([
      'bytes',
      'created_at',
      'episode_untrusted',
      'id',
      'metadata',
      'model',
      'provider',
      'sandbox',
      'task',
      'turns',
      'untrusted_ingested',
      'updated_at',
    ]);
    const next = await call('GET', `/v1/sessions?limit=2&cursor=${page.json.next_cursor}`);
    expect(next.json.sessions.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const latest = await call('GET', '/v1/sessions/latest');
    expect(latest.json.id).toBe(ids[4]);
    expect(latest.headers.get('etag')).toBe('"1"');
    const since = (await call('GET', `/v1/sessions/${ids[2]}`)).json.updated_at;
    const changed = await call('GET', `/v1/sessions?updated_after=${encodeURIComponent(since)}`);
    expect(changed.json.sessions.map((s: { id: string }) => s.id)).toEqual([ids[4], ids[3]]);
    for (const bad of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=0x10', // not an integer as written (review: read as 16, 10 and 10)
      'limit=1e1',
      'limit=%2010',
      'updated_after=yesterday',
      // RFC 3339 in shape, but no such time (Date.parse answers NaN, or March 2 for February 30).
      'updated_after=2025-13-45T99:99:99Z',
      'updated_after=2025-02-30T00:00:00Z',
      'updated_after=2025-01-01T23:59:60Z',
      'updated_after=2025-01-01T10:00:00%2B24:00',
      'updated_after=2025-04-31T00:00:00Z',
      'updated_after=2025-01-01T24:00:00Z',
      'cursor=zzz',
    ]) {
      const res = await call('GET', `/v1/sessions?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
  });

  it('latest of an empty namespace is 404', async () => {
    const { call } = await makeApp();
    expect((await call('GET', '/v1/sessions/latest')).status).toBe(404);
  });

  it('trim and cleanup', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', {
      body: { task: 't', messages: [sys, hi, hi, hi] },
    });
    const trimmed = await call('POST', `/v1/sessions/${json.id}/trim`, { body: { keep: 2 } });
    expect(trimmed.status).toBe(200);
    expect(trimmed.json).toEqual({
      id: json.id,
      before: 4,
      after: 2,
      dropped: 2,
      dropped_groups: 0,
    });
    expect((await call('POST', `/v1/sessions/${json.id}/trim`, { body: { keep: 1 } })).status).toBe(
      400,
    );
    expect((await call('POST', '/v1/sessions/nope/trim', { body: { keep: 3 } })).status).toBe(404);
    expect(
      (await call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 1 } })).json,
    ).toEqual({ deleted: 0 });
    expect(
      (await call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 0 } })).json,
    ).toEqual({ deleted: 1 });
    expect(
      (await call('POST', '/v1/sessions/cleanup', { body: { older_than_days: -1 } })).status,
    ).toBe(400);
  });

  it('continue without a model stores the user message and says model_turn: false (also on latest)', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't', messages: [sys] } });
    const out = await call('POST', `/v1/sessions/${json.id}/continue`, {
      body: { message: 'next step' },
    });
    expect(out.status).toBe(200);
    expect(out.json).toMatchObject({ id: json.id, revision: 2, turns: 1, model_turn: false });
    const viaLatest = await call('POST', '/v1/sessions/latest/continue', {
      body: { message: 'and again' },
    });
    expect(viaLatest.json).toMatchObject({ id: json.id, revision: 3, turns: 2 });
    expect(
      (await call('POST', `/v1/sessions/${json.id}/continue`, { body: { message: '' } })).status,
    ).toBe(400);
  });
});

describe('HTTP: auth and namespaces', () => {
  it('needs a bearer token; unknown → 401; the sha256 form itself is not a credential', async () => {
    const { call } = await makeApp();
    expect((await call('GET', '/v1/sessions', { token: null })).status).toBe(401);
    expect((await call('GET', '/v1/sessions', { token: 'nope' })).status).toBe(401);
    expect(
      (await call('GET', '/v1/sessions', { token: `sha256:${await sha256hex(TOKENS.bob)}` }))
        .status,
    ).toBe(401);
    expect((await call('GET', '/v1/sessions', { token: TOKENS.bob })).status).toBe(200);
    expect(
      (
        await call('GET', '/v1/sessions', {
          token: null,
          headers: { authorization: `Basic ${TOKENS.bob}` },
        })
      ).status,
    ).toBe(401);
    expect((await call('GET', '/v1/health', { token: null })).status).toBe(200);
  });

  it('a 401 says how to authenticate: WWW-Authenticate Bearer, invalid_token for a token not known', async () => {
    const { call } = await makeApp();
    const none = await call('GET', '/v1/sessions', { token: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="satchel"');
    const unknown = await call('GET', '/v1/sessions', { token: 'tok_nobody_0123456789' });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe(
      'Bearer realm="satchel", error="invalid_token"',
    );
    // A webhook takes a signature of its body, not a token: its 401 asks for that.
    const hooked = await makeApp({
      env: {
        SATCHEL_HOOKS: JSON.stringify({
          ci: { secret: 'ci-secret-0123456789', namespace: 'alice', session: 'new' },
        }),
      },
    });
    const unsigned = await hooked.call('POST', '/v1/hooks/ci', {
      token: null,
      raw: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers.get('www-authenticate')).toBe(
      'Satchel-Signature realm="satchel-hooks"',
    );
  });

  it('a read-only token reads but every write is 403 and writes nothing', async () => {
    const { call, objects, background } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't' } });
    await background.drain(); // the create's search record lands after its response
    const before = await listAll(objects, 'ns/');
    expect((await call('GET', `/v1/sessions/${json.id}`, { token: TOKENS.ci })).status).toBe(200);
    const writes: [string, string, unknown][] = [
      ['POST', '/v1/sessions', { task: 'x' }],
      ['POST', `/v1/sessions/${json.id}/messages`, { messages: [hi] }],
      ['PUT', `/v1/sessions/${json.id}`, { task: 'x', messages: [] }],
      ['DELETE', `/v1/sessions/${json.id}`, undefined],
      ['POST', `/v1/sessions/${json.id}/trim`, { keep: 2 }],
      ['POST', '/v1/sessions/cleanup', { older_than_days: 0 }],
      ['POST', `/v1/sessions/${json.id}/continue`, { message: 'x' }],
    ];
    for (const [method, path, body] of writes) {
      const res = await call(method, path, {
        token: TOKENS.ci,
        ...(body ? { body } : {}),
        headers: { 'if-match': '"1"' },
      });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect(await listAll(objects, 'ns/')).toEqual(before);
  });

  it('namespaces never see each other; devices of one namespace share it', async () => {
    const { call } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', {
      body: { task: 'alice secret', id: 'same-id' },
    });
    expect((await call('GET', `/v1/sessions/${json.id}`, { token: TOKENS.phone })).status).toBe(
      200,
    );
    expect((await call('GET', `/v1/sessions/${json.id}`, { token: TOKENS.bob })).status).toBe(404);
    expect((await call('GET', '/v1/sessions', { token: TOKENS.bob })).json.sessions).toEqual([]);
    expect((await call('GET', '/v1/sessions/latest', { token: TOKENS.bob })).status).toBe(404);
    expect((await call('DELETE', `/v1/sessions/${json.id}`, { token: TOKENS.bob })).status).toBe(
      404,
    );
    // Creating the same id in another namespace succeeds: a 409 would reveal alice's session.
    expect(
      (
        await call('POST', '/v1/sessions', {
          token: TOKENS.bob,
          body: { task: 'bob', id: 'same-id' },
        })
      ).status,
    ).toBe(201);
    expect((await call('GET', '/v1/sessions/same-id')).json.task).toBe('alice secret');
  });

  it('without SATCHEL_TOKENS the local server serves namespace default openly; other runtimes refuse', async () => {
    const open = await makeApp({ env: { SATCHEL_TOKENS: '' }, allowOpen: true });
    expect(
      (await open.call('POST', '/v1/sessions', { token: null, body: { task: 't' } })).status,
    ).toBe(201);
    const closed = await makeApp({ env: { SATCHEL_TOKENS: '' }, allowOpen: false });
    expect((await closed.call('GET', '/v1/sessions', { token: null })).status).toBe(401);
  });
});

describe('HTTP: audit log', () => {
  it('one record per write with the device label, deleted with the session and by cleanup', async () => {
    const { call, objects, background } = await makeApp();
    const { json } = await call('POST', '/v1/sessions', { body: { task: 't', messages: [sys] } });
    await call('POST', `/v1/sessions/${json.id}/messages`, {
      body: { messages: [hi] },
      token: TOKENS.phone,
    });
    await call('POST', `/v1/sessions/${json.id}/continue`, { body: { message: 'go on' } });
    await call('POST', `/v1/sessions/${json.id}/trim`, { body: { keep: 2 } });
    const audit = await call('GET', `/v1/sessions/${json.id}/audit`, { token: TOKENS.ci });
    expect(audit.status).toBe(200);
    expect(
      audit.json.records.map((r: { op: string; device: string }) => `${r.op}:${r.device}`),
    ).toEqual(['create:laptop', 'append:phone', 'continue:laptop', 'trim:laptop']);
    expect(audit.json.records[1]).toMatchObject({
      revision: 2,
      messages_added: 1,
      redactions: 0,
      dropped_groups: 0,
    });
    expect((await call('GET', '/v1/sessions/nope/audit')).status).toBe(404);
    expect((await call('GET', `/v1/sessions/${json.id}/audit`, { token: TOKENS.bob })).status).toBe(
      404,
    );
    await call('DELETE', `/v1/sessions/${json.id}`);
    expect((await listAll(objects, `ns/alice/audit/${json.id}/`)).length).toBe(0);
    const second = await call('POST', '/v1/sessions', { body: { task: 'u' } });
    await background.drain(); // the audit record is stored after the answer
    expect((await listAll(objects, `ns/alice/audit/${second.json.id}/`)).length).toBe(1);
    await call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 0 } });
    expect((await listAll(objects, 'ns/alice/audit/')).length).toBe(0);
  });
});
