import { describe, expect, it } from 'vitest';
import { MAX_INLINE_MEDIA_BYTES } from '../../lib/model/parts.js';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { SatchelClient } from '../../lib/client/index.js';
import { makeApp, TOKENS } from './helpers.js';

// v1.1 content parts, session metadata and pop, through the HTTP API on a real local folder.

const AWS_KEY = 'AKIA' + 'Q3EGRGSTJ5XRZK7W';
const GH_TAIL = 'x9Kq2LmZ7vR4tW8yB3nD6fH1jP5sC0gA2eU7';

/** Metadata's size as the contract's "8 KiB in all" counts it: the UTF-8 bytes of keys and values. */
const kvBytes = (m: Record<string, string>) =>
  Object.entries(m).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);

/** Every stored object's text in the app's folder. */
async function storedTexts(app: Awaited<ReturnType<typeof makeApp>>): Promise<string[]> {
  const keys = await listAll(app.objects, '');
  return Promise.all(keys.map(async (k) => text((await app.objects.get(k))!.body)));
}

describe('content parts', () => {
  const parts = [
    { type: 'text', text: 'what is in this picture?' },
    { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
    { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
    { type: 'file', file: { file_id: 'file-abc123' } },
  ];

  it('round-trip exactly as sent; stored content stays a string (odek reads it), the parts beside it', async () => {
    const app = await makeApp();
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: 'parts', messages: [{ role: 'user', content: parts }] },
    });
    expect(created.status).toBe(201);
    expect(created.json.messages[0].content).toEqual(parts);
    const got = await app.call('GET', `/v1/sessions/${created.json.id}`);
    expect(got.json.messages).toEqual([{ role: 'user', content: parts }]);
    const stored = JSON.parse(
      text((await app.objects.get(`ns/alice/sessions/${created.json.id}.json`))!.body),
    );
    expect(stored.messages[0].content).toBe('what is in this picture?');
    expect(stored.messages[0].content_parts).toEqual(parts);
    expect(got.json.turns).toBe(1);
  });

  it('content_parts is taken only as the stored form; parts the content does not hold are refused', async () => {
    const app = await makeApp();
    const before = await storedTexts(app);
    for (const injected of [[1, null, 'x'], [{ type: 'text', text: 'INJECT' }], 'not a list']) {
      const res = await app.call('POST', '/v1/sessions', {
        body: {
          task: 't',
          messages: [{ role: 'user', content: 'plain', content_parts: injected }],
        },
      });
      expect(res.status).toBe(400);
      expect(res.json.errors).toContainEqual(
        expect.objectContaining({ path: 'messages[0].content_parts' }),
      );
    }
    expect(await storedTexts(app)).toEqual(before);
    // A message read from storage (odek keeps the field) goes back as the parts it holds.
    const stored = { role: 'user', content: 'what is in this picture?', content_parts: parts };
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: 'stored form', messages: [stored] },
    });
    expect(created.status).toBe(201);
    const got = await app.call('GET', `/v1/sessions/${created.json.id}`);
    expect(got.json.messages).toEqual([{ role: 'user', content: parts }]);
  });

  it('secrets inside parts never reach storage', async () => {
    const app = await makeApp();
    const secretParts = [
      { type: 'text', text: `deploy with ${AWS_KEY}` },
      { type: 'input_text', text: 'token ghp_' + GH_TAIL },
      { type: 'image_url', image_url: { url: `https://example.com/x.png?key=${AWS_KEY}` } },
    ];
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 'secret parts', messages: [{ role: 'user', content: secretParts }] },
    });
    expect(res.status).toBe(201);
    expect(res.json.messages[0].content[0].text).toBe('deploy with [REDACTED]');
    for (const body of await storedTexts(app)) {
      expect(body).not.toContain(AWS_KEY);
      expect(body).not.toContain(GH_TAIL);
    }
  });

  it('inline media over the limit is refused with 413 naming the limit, and nothing is written', async () => {
    const app = await makeApp();
    const big = 'data:image/png;base64,' + 'A'.repeat(MAX_INLINE_MEDIA_BYTES + 10);
    const res = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'too big',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: big } }] }],
      },
    });
    expect(res.status).toBe(413);
    expect(res.json.detail).toContain(String(MAX_INLINE_MEDIA_BYTES));
    expect(await listAll(app.objects, 'ns/alice/sessions/')).toEqual([]);
  });
});

describe('session metadata', () => {
  it('two secrets used as keys keep both values: the second key is numbered (review)', async () => {
    const app = await makeApp();
    const second = 'ghp_' + 'Zq8xW3vN5Zq8xW3vN5Zq8xW3vN5Zq8xW3vN5';
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 'keys', metadata: { [AWS_KEY]: 'first', [second]: 'second', plain: 'x' } },
    });
    expect(res.status).toBe(201);
    expect(res.json.metadata).toEqual({
      '[REDACTED]': 'first',
      '[REDACTED] 2': 'second',
      plain: 'x',
    });
  });

  it('that its placeholders would take over 8 KiB is 400 and writes nothing; at the limit it round-trips', async () => {
    const app = await makeApp();
    // Short values under secret-sounding keys: each grows to the placeholder as it is redacted.
    const names = ['secret', 'password', 'token', 'api_key', 'passwd', 'client_secret'];
    const secrets = Object.fromEntries(names.map((k) => [k, 'p4']));
    const sized = (bytes: number) => {
      const m = { ...secrets, note: '' };
      m.note = 'n'.repeat(bytes - kvBytes(m));
      return m;
    };
    const probe = await app.call('POST', '/v1/sessions', {
      body: { task: 'm', metadata: sized(200) },
    });
    expect(Object.values(probe.json.metadata).filter((v) => v === '[REDACTED]')).toHaveLength(6);
    const growth = kvBytes(probe.json.metadata) - 200;
    expect(growth).toBe(6 * 8);
    const before = await listAll(app.objects, 'ns/alice/sessions/');
    const over = await app.call('POST', '/v1/sessions', {
      body: { task: 'meta', metadata: sized(8192 - growth + 1) },
    });
    expect(over.status).toBe(400);
    expect(over.headers.get('content-type')).toContain('application/problem+json');
    expect(over.json.detail).toContain('[REDACTED]');
    expect(await listAll(app.objects, 'ns/alice/sessions/')).toEqual(before);
    const made = await app.call('POST', '/v1/sessions', {
      body: { task: 'meta', metadata: sized(8192 - growth) },
    });
    expect(made.status).toBe(201);
    expect(kvBytes(made.json.metadata)).toBe(8192);
    const got = await app.call('GET', `/v1/sessions/${made.json.id}`);
    const put = await app.call('PUT', `/v1/sessions/${made.json.id}`, {
      body: got.json,
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status).toBe(200);
    const added = await app.call('POST', `/v1/sessions/${made.json.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'still writable' }] },
    });
    expect(added.status).toBe(200);
  });

  it('that the caller leaves as stored is not checked: an append after new rules redact it is stored', async () => {
    const V = 'r7x9q2'; // "[REDACTED]" is 4 bytes longer
    const metadata: Record<string, string> = { runner: V, note: '' };
    metadata.note = 'n'.repeat(8192 - kvBytes(metadata));
    const first = await makeApp();
    const made = await first.call('POST', '/v1/sessions', { body: { task: 'meta', metadata } });
    expect(made.status).toBe(201);
    await first.sessions.settled();
    // The same folder served again with the value configured as a secret: the rules changed, not the caller.
    const again = await makeApp({
      objects: first.objects,
      env: { SATCHEL_REDACT_VALUES: JSON.stringify([V]) },
    });
    const added = await again.call('POST', `/v1/sessions/${made.json.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'still writable?' }] },
    });
    expect(added.status, added.text).toBe(200);
    const got = await again.call('GET', `/v1/sessions/${made.json.id}`);
    expect(got.json.metadata.runner).toBe('[REDACTED]');
    const grown = kvBytes(got.json.metadata);
    expect(grown).toBe(8196);
    // What GET answers can be PUT back as it is (the metadata is the stored one)…
    const put = await again.call('PUT', `/v1/sessions/${made.json.id}`, {
      body: got.json,
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status, put.text).toBe(200);
    // …but metadata changed by the caller is held to the limits: 400, and nothing is written.
    const changed = await again.call('PUT', `/v1/sessions/${made.json.id}`, {
      body: { ...got.json, metadata: { ...got.json.metadata, runner: 'another value' } },
      headers: { 'if-match': put.headers.get('etag')! },
    });
    expect(changed.status).toBe(400);
    expect(changed.headers.get('content-type')).toContain('application/problem+json');
    expect(changed.json.detail).toContain('8192 bytes');
    const after = await again.call('GET', `/v1/sessions/${made.json.id}`);
    expect(after.headers.get('etag')).toBe(put.headers.get('etag'));
  });

  it('is set on create and PUT, returned by GET and list, filtered through the manifest, redacted', async () => {
    const app = await makeApp();
    const a = await app.call('POST', '/v1/sessions', {
      body: { task: 'a', metadata: { user: 'u1', thread: 't-1', note: `key ${AWS_KEY}` } },
    });
    const b = await app.call('POST', '/v1/sessions', {
      body: { task: 'b', metadata: { user: 'u2' } },
    });
    const c = await app.call('POST', '/v1/sessions', { body: { task: 'c' } });
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(a.json.metadata).toEqual({ user: 'u1', thread: 't-1', note: 'key [REDACTED]' });
    expect(c.json.metadata).toEqual({});
    const list = await app.call('GET', '/v1/sessions');
    const byId = new Map(list.json.sessions.map((s: { id: string }) => [s.id, s]));
    expect((byId.get(b.json.id) as { metadata: unknown }).metadata).toEqual({ user: 'u2' });
    const only = await app.call('GET', '/v1/sessions?metadata.user=u1');
    expect(only.json.sessions.map((s: { id: string }) => s.id)).toEqual([a.json.id]);
    const put = await app.call('PUT', `/v1/sessions/${b.json.id}`, {
      headers: { 'if-match': '"1"' },
      body: { task: 'b', messages: [], metadata: { user: 'u1' } },
    });
    expect(put.status).toBe(200);
    const again = await app.call('GET', '/v1/sessions?metadata.user=u1');
    expect(again.json.sessions.map((s: { id: string }) => s.id).sort()).toEqual(
      [a.json.id, b.json.id].sort(),
    );
    for (const body of await storedTexts(app)) expect(body).not.toContain(AWS_KEY);
  });

  it('takes a key of any length within the 8 KiB (review s56b: keys over 256 characters were 400)', async () => {
    const app = await makeApp();
    const key = `k${'e'.repeat(299)}`;
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 'x', metadata: { [key]: 'v' } },
    });
    expect(res.status).toBe(201);
    const got = await app.call('GET', `/v1/sessions/${res.json.id}`);
    expect(got.json.metadata).toEqual({ [key]: 'v' });
    // Sent back as GET answered it, and set by a PUT (review s56e: the PUT's own schema kept a 512 limit).
    const long = `k${'e'.repeat(599)}`;
    const put = await app.call('PUT', `/v1/sessions/${res.json.id}`, {
      body: { ...got.json, metadata: { ...got.json.metadata, [long]: 'w' } },
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status).toBe(200);
    expect((await app.call('GET', `/v1/sessions/${res.json.id}`)).json.metadata[long]).toBe('w');
    const empty = await app.call('POST', '/v1/sessions', {
      body: { task: 'x', metadata: { '': 'v' } },
    });
    expect(empty.status).toBe(400);
  });

  it('refuses more than 64 keys', async () => {
    const app = await makeApp();
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    const res = await app.call('POST', '/v1/sessions', { body: { task: 'x', metadata: many } });
    expect(res.status).toBe(400);
    expect(res.json.errors[0].path).toBe('metadata');
  });

  it('filters by every pair given, dotted or as the OpenAPI document says (deepObject); refuses what it cannot read', async () => {
    const app = await makeApp();
    const make = async (metadata: Record<string, string>) =>
      (await app.call('POST', '/v1/sessions', { body: { task: 't', metadata } })).json.id as string;
    const both = await make({ team: 'a', env: 'prod' });
    const teamOnly = await make({ team: 'a', env: 'dev' });
    await make({ team: 'b', env: 'prod' });
    await make({ constructor: 'x' });
    const ids = async (query: string) => {
      const res = await app.call('GET', `/v1/sessions?${query}`);
      expect(res.status, query).toBe(200);
      return res.json.sessions.map((s: { id: string }) => s.id).sort();
    };
    expect(await ids('metadata.team=a&metadata.env=prod')).toEqual([both]);
    expect(await ids('metadata[team]=a&metadata[env]=prod')).toEqual([both]);
    expect(await ids('metadata%5Bteam%5D=a&metadata.env=dev')).toEqual([teamOnly]);
    expect(await ids('metadata.team=a')).toEqual([both, teamOnly].sort());
    expect(await ids('metadata.toString=x')).toEqual([]);
    // The spec's own parameter: a client generated from it sends the deepObject form.
    const spec = await app.call('GET', '/openapi.json');
    expect(spec.json.components.parameters.Metadata).toMatchObject({ style: 'deepObject' });
    for (const bad of [
      'metadata=team',
      'metadata.=a',
      'metadata[]=a',
      'metadataX=1',
      'metadata.team=a&metadata.team=b',
      'metadata.team=a&metadata[team]=a',
    ]) {
      const res = await app.call('GET', `/v1/sessions?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get('content-type'), bad).toContain('application/problem+json');
    }
  });

  it('the client filters by several pairs at once', async () => {
    const app = await makeApp();
    const client = new SatchelClient({
      url: 'http://localhost',
      token: TOKENS.laptop,
      fetch: async (input, init) => app.app.fetch(new Request(input, init)),
    });
    const a = await client.create({ task: 'a', metadata: { user: 'u1', thread: 't1' } });
    await client.create({ task: 'b', metadata: { user: 'u1', thread: 't2' } });
    const page = await client.list({ metadata: { user: 'u1', thread: 't1' } });
    expect(page.sessions.map((s) => s.id)).toEqual([a.session.id]);
  });
});

describe('pop', () => {
  it('removes the newest messages in one write, answers them oldest first, respects If-Match', async () => {
    const app = await makeApp();
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'pop',
        messages: ['one', 'two', 'three'].map((content) => ({ role: 'user', content })),
      },
    });
    const id = created.json.id;
    const stale = await app.call('POST', `/v1/sessions/${id}/pop`, {
      headers: { 'if-match': '"7"' },
      body: {},
    });
    expect(stale.status).toBe(412);
    const popped = await app.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 2 } });
    expect(popped.status).toBe(200);
    expect(popped.json.popped.map((m: { content: string }) => m.content)).toEqual(['two', 'three']);
    expect(popped.json.revision).toBe(2);
    const got = await app.call('GET', `/v1/sessions/${id}`);
    expect(got.json.messages.map((m: { content: string }) => m.content)).toEqual(['one']);
    await app.call('POST', `/v1/sessions/${id}/pop`, { body: {} });
    const empty = await app.call('POST', `/v1/sessions/${id}/pop`, { body: {} });
    expect(empty.json).toMatchObject({ revision: 3, popped: [] });
  });

  it('takes no body at all as {} (curl -X POST), but not a body of another type', async () => {
    // First-hour review: `count` is optional, yet a pop without a body answered 415.
    const app = await makeApp();
    const messages = ['one', 'two'].map((content) => ({ role: 'user', content }));
    const id = (await app.call('POST', '/v1/sessions', { body: { task: 'pop', messages } })).json
      .id;
    const bare = await app.call('POST', `/v1/sessions/${id}/pop`);
    expect(bare.status).toBe(200);
    expect(bare.json.popped.map((m: { content: string }) => m.content)).toEqual(['two']);
    const text = await app.call('POST', `/v1/sessions/${id}/pop`, {
      raw: 'count=1',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    // A route whose body has required fields still says what to send.
    expect((await app.call('POST', `/v1/sessions/${id}/trim`)).status).toBe(415);
  });
});
