import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelApiError, SatchelClient, SatchelConnectionError } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { startFlakyProxy, type Action, type SeenRequest } from './flaky-proxy.js';

const TOKEN = 'tok_client_test_0123456789';
let server: RunningServer;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: `alice/laptop=${TOKEN},alice/ci=tok_client_readonly_01:ro` },
  });
});
afterAll(async () => {
  for (const close of closers) await close();
  await server.close();
});

/** A client whose waits are recorded instead of slept. */
function clientFor(url: string, token: string | null = TOKEN) {
  const waits: number[] = [];
  const client = new SatchelClient({
    url,
    token: token ?? undefined,
    sleep: async (ms) => void waits.push(ms),
  });
  return { client, waits };
}

async function proxy(script: (n: number, req: SeenRequest) => Action) {
  const p = await startFlakyProxy(server.url, script);
  closers.push(p.close);
  return p;
}

async function apiError(promise: Promise<unknown>): Promise<SatchelApiError> {
  try {
    await promise;
  } catch (err) {
    if (SatchelApiError.is(err)) return err;
    throw err;
  }
  throw new Error('expected a SatchelApiError');
}

describe('client against a real server', () => {
  it('covers every route, with ETags', async () => {
    const { client } = clientFor(server.url);
    const health = await client.health();
    expect(health.status).toBe('ok');
    expect(health.storage.ok).toBe(true);

    const created = await client.create({
      task: 'client round trip',
      messages: [{ role: 'system', content: 'be brief' }],
      external_refs: [{ kind: 'doc', uri: 'https://example.com/a' }],
    });
    const id = created.session.id;
    expect(id).toMatch(/^\d{8}-[0-9a-f]{32}$/);
    expect(created.etag).toBe('"1"');
    expect(created.session.external_refs[0]).toMatchObject({ kind: 'doc', created_by: 'laptop' });

    const got = await client.get(id);
    expect(got.etag).toBe('"1"');
    expect(await client.get(id, { ifNoneMatch: got.etag })).toBeNull();

    const receipt = await client.append(id, {
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(receipt).toMatchObject({ id, revision: 2, turns: 1 });
    const changed = await client.get(id, { ifNoneMatch: got.etag });
    expect(changed?.etag).toBe('"2"');
    expect(changed?.session.messages.at(-1)?.content).toBe('hello there');

    // Replace needs the current revision: the stale ETag is a 412, the current one lands.
    const stale = await apiError(
      client.replace(id, { ...got.session, task: 'renamed' }, { ifMatch: got.etag }),
    );
    expect(stale.status).toBe(412);
    expect(stale.title).toBe('Precondition Failed');
    const replaced = await client.replace(
      id,
      { ...changed!.session, task: 'renamed' },
      { ifMatch: changed!.etag },
    );
    expect(replaced).toMatchObject({ etag: '"3"', session: { task: 'renamed' } });
    expect(
      (
        await apiError(
          client.append(id, { messages: [{ role: 'user', content: 'x' }] }, { ifMatch: 2 }),
        )
      ).status,
    ).toBe(412);

    const latest = await client.latest();
    expect(latest).toMatchObject({ etag: '"3"', session: { id, revision: 3 } });

    const cont = await client.continue(id, { message: 'and now?' });
    expect(cont).toMatchObject({ id, model_turn: false, turns: 2 });
    const viaLatest = await client.continue('latest', { message: 'once more' });
    expect(viaLatest.id).toBe(id);

    const page = await client.list({ limit: 5 });
    expect(page.sessions.map((s) => s.id)).toContain(id);
    const since = await client.list({ updated_after: new Date(Date.now() + 60_000) });
    expect(since.sessions).toEqual([]);

    const found = await client.sessionSearch({ action: 'find', query: 'renamed' });
    expect('sessions' in found && found.sessions.map((s) => s.id)).toContain(id);
    const hits = await client.sessionSearch({ action: 'search', query: 'hello there' });
    expect('results' in hits && hits.results[0]?.id).toBe(id);
    const fetched = await client.sessionSearch({ action: 'get', id });
    expect('count' in fetched && fetched.count).toBe(3); // user and assistant messages only
    expect(await client.sessionSearch({ action: 'search', query: '' })).toEqual({
      error: 'search needs a query',
    });

    const trimmed = await client.trim(id, 2);
    expect(trimmed).toEqual({ id, before: 4, after: 2, dropped: 2, dropped_groups: 0 });
    const audit = await client.audit(id);
    expect(audit.map((r) => r.op)).toEqual([
      'create',
      'append',
      'replace',
      'continue',
      'continue',
      'trim',
    ]);

    await client.delete(id);
    const gone = await apiError(client.get(id));
    expect(gone.problem).toMatchObject({
      status: 404,
      title: 'Not Found',
      detail: `session ${id} does not exist`,
    });
    expect(gone.message).toBe(`404 Not Found: session ${id} does not exist`);
  });

  it('lists every page with listAll, and cleans up', async () => {
    const { client } = clientFor(server.url);
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await client.create({ task: `page ${i}` })).session.id);
    const all: string[] = [];
    for await (const s of client.listAll()) all.push(s.id);
    for (const id of ids) expect(all).toContain(id);
    const { deleted } = await client.cleanup(0);
    expect(deleted).toBeGreaterThanOrEqual(3);
    expect((await client.list()).sessions).toEqual([]);
  });

  it('throws problems as SatchelApiError: validation errors, auth, scope', async () => {
    const { client } = clientFor(server.url);
    const invalid = await apiError(
      client.create({ task: 'x', messages: [{ role: 'robot', content: 'hi' }] } as never),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.errors.map((e) => e.path)).toContain('messages[0].role');
    expect((await apiError(clientFor(server.url, 'wrong').client.list())).status).toBe(401);
    expect((await apiError(clientFor(server.url, null).client.list())).status).toBe(401);
    expect(
      (await apiError(clientFor(server.url, 'tok_client_readonly_01').client.create({ task: 'x' })))
        .status,
    ).toBe(403);
    expect((await apiError(client.trim('nope', 2))).status).toBe(404);
    const conflict = await client.create({ task: 'mine', id: 'fixed-id-1' });
    expect((await apiError(client.create({ task: 'again', id: conflict.session.id }))).status).toBe(
      409,
    );
  });

  it('sends Satchel-Secrets so a write redacts values only the caller knows', async () => {
    const { client } = clientFor(server.url);
    const { session } = await client.create(
      { task: 'uses ünïcode-pass-42' },
      { secrets: ['ünïcode-pass-42'] },
    );
    expect(session.task).toBe('uses [REDACTED]');
  });
});

describe('client retries', () => {
  it('retries a 503 twice, honouring Retry-After, with one Idempotency-Key for the append', async () => {
    const { client: direct } = clientFor(server.url);
    const { session } = await direct.create({ task: 'retry target' });
    const p = await proxy((n) =>
      n < 2
        ? {
            status: 503,
            headers: { 'retry-after': '1' },
            body: { title: 'Service Unavailable', status: 503, detail: 'storage is unreachable' },
          }
        : 'forward',
    );
    const { client, waits } = clientFor(p.url);
    const receipt = await client.append(session.id, {
      messages: [{ role: 'user', content: 'after two 503s' }],
    });
    expect(receipt.revision).toBe(2);
    expect(p.seen).toHaveLength(3);
    const keys = p.seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(waits).toHaveLength(2);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(1000);
    // A second call is a new request: a new key.
    await client.append(session.id, { messages: [{ role: 'user', content: 'next' }] });
    expect(p.seen[3]!.headers['idempotency-key']).not.toBe(keys[0]);
  });

  it('retries a 429 with the backoff when there is no Retry-After, and a continue keeps its key', async () => {
    const { client: direct } = clientFor(server.url);
    const { session } = await direct.create({ task: 'busy' });
    const p = await proxy((n) =>
      n === 0
        ? { status: 429, body: { title: 'Too Many Requests', status: 429, detail: 'slow down' } }
        : 'forward',
    );
    const { client, waits } = clientFor(p.url);
    const answer = await client.continue(
      session.id,
      { message: 'hi' },
      { idempotencyKey: 'my-key-1' },
    );
    expect(answer.model_turn).toBe(false);
    expect(p.seen.map((r) => r.headers['idempotency-key'])).toEqual(['my-key-1', 'my-key-1']);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(250);
  });

  it('does not retry a 400, 409, 412 or 500', async () => {
    for (const status of [400, 409, 412, 500]) {
      const p = await proxy(() => ({
        status,
        body: {
          type: 'about:blank',
          title: `T${status}`,
          status,
          detail: 'no',
          errors: [{ path: 'task', message: 'bad' }],
        },
      }));
      const { client, waits } = clientFor(p.url);
      const err = await apiError(
        client.append('some-id', { messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(err).toMatchObject({
        status,
        title: `T${status}`,
        detail: 'no',
        errors: [{ path: 'task', message: 'bad' }],
      });
      expect(p.seen).toHaveLength(1);
      expect(waits).toEqual([]);
    }
  });

  it('gives up after its retries, and on a Retry-After longer than it waits', async () => {
    const p = await proxy(() => ({
      status: 503,
      headers: { 'retry-after': '0' },
      body: { title: 'Service Unavailable', status: 503, detail: 'down' },
    }));
    const { client } = clientFor(p.url);
    const err = await apiError(client.list());
    expect(err.status).toBe(503);
    expect(err.retryAfter).toBe(0);
    expect(p.seen).toHaveLength(5);
    const slow = await proxy(() => ({
      status: 503,
      headers: { 'retry-after': '3600' },
      body: { title: 'Service Unavailable', status: 503, detail: 'down' },
    }));
    await apiError(clientFor(slow.url).client.list());
    expect(slow.seen).toHaveLength(1);
  });

  it('retries a dropped connection; an append whose answer was lost lands once', async () => {
    const { client: direct } = clientFor(server.url);
    const { session } = await direct.create({ task: 'lost answers' });
    const p = await proxy((n) => (n === 0 ? 'forward-then-drop' : 'forward'));
    const { client, waits } = clientFor(p.url);
    const receipt = await client.append(session.id, {
      messages: [{ role: 'user', content: 'exactly once' }],
    });
    expect(receipt.revision).toBe(2);
    expect(p.seen).toHaveLength(2);
    expect(waits).toHaveLength(1);
    const stored = await direct.get(session.id);
    expect(stored.session.messages.filter((m) => m.content === 'exactly once')).toHaveLength(1);
  });

  it('a create whose answer was lost returns the session its first attempt made, not a second one', async () => {
    const p = await proxy((n) => (n === 0 ? 'forward-then-drop' : 'forward'));
    const { client } = clientFor(p.url);
    const before = (await clientFor(server.url).client.list({ limit: 100 })).sessions.length;
    const { session } = await client.create({ task: 'created once' });
    expect(p.seen).toHaveLength(3); // the create, its retry (409), the read
    expect(JSON.parse(p.seen[0]!.body).id).toBe(session.id);
    expect(JSON.parse(p.seen[1]!.body).id).toBe(session.id);
    expect((await clientFor(server.url).client.list({ limit: 100 })).sessions.length).toBe(
      before + 1,
    );
    // With the caller's own id, the 409 stays the caller's to judge.
    const q = await proxy((n) => (n === 0 ? 'forward-then-drop' : 'forward'));
    expect(
      (await apiError(clientFor(q.url).client.create({ task: 'mine', id: 'caller-id-7' }))).status,
    ).toBe(409);
  });

  it('a delete whose answer was lost succeeds on the retry', async () => {
    const { client: direct } = clientFor(server.url);
    const { session } = await direct.create({ task: 'to delete' });
    const p = await proxy((n) => (n === 0 ? 'forward-then-drop' : 'forward'));
    await clientFor(p.url).client.delete(session.id);
    expect(p.seen).toHaveLength(2);
    expect((await apiError(direct.get(session.id))).status).toBe(404);
    // A first-attempt 404 is still an error.
    expect((await apiError(direct.delete(session.id))).status).toBe(404);
  });

  it('throws SatchelConnectionError when nothing answers', async () => {
    const p = await proxy(() => 'drop');
    const { client, waits } = clientFor(p.url);
    await expect(client.get('x')).rejects.toSatisfy(
      (err) => SatchelConnectionError.is(err) && err.message.startsWith(`cannot reach ${p.url}`),
    );
    expect(p.seen).toHaveLength(5);
    expect(waits).toHaveLength(4);
    await p.close();
    await expect(client.health()).rejects.toSatisfy(
      (err) => SatchelConnectionError.is(err) && /ECONNREFUSED/.test((err as Error).message),
    );
  });
});
