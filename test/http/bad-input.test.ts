import { describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp } from './helpers.js';
import { unreachableS3 } from '../support/s3.js';

/** Every bad input: a clear 4xx problem+json, never a 500, and nothing written. */
describe('HTTP: bad input', async () => {
  const setup = async () => {
    const app = await makeApp({ env: { SATCHEL_MAX_BODY_BYTES: '4096' } });
    const { json } = await app.call('POST', '/v1/sessions', {
      body: { task: 't', id: 'existing' },
    });
    // The create's search record is written after its response: let it land before the snapshot.
    await app.background.drain();
    const snapshot = async () => {
      const keys = await listAll(app.objects, 'ns/');
      return Promise.all(keys.map(async (k) => `${k}:${(await app.objects.get(k))?.etag}`));
    };
    return { ...app, id: json.id as string, snapshot };
  };

  const cases: [
    string,
    string,
    string,
    { raw?: string; body?: unknown; headers?: Record<string, string> },
    number,
  ][] = [
    [
      'malformed JSON',
      'POST',
      '/v1/sessions',
      { raw: '{"task": "x"', headers: { 'content-type': 'application/json' } },
      400,
    ],
    [
      'empty body',
      'POST',
      '/v1/sessions',
      { raw: '', headers: { 'content-type': 'application/json' } },
      400,
    ],
    ['not an object', 'POST', '/v1/sessions', { body: ['task'] }, 400],
    [
      'a __proto__ key in a message (it would be dropped without a word)',
      'POST',
      '/v1/sessions',
      {
        raw: '{"task":"t","messages":[{"role":"user","content":"x","__proto__":{"a":1}}]}',
        headers: { 'content-type': 'application/json' },
      },
      400,
    ],
    [
      'a __proto__ key in metadata',
      'POST',
      '/v1/sessions',
      {
        raw: '{"task":"t","metadata":{"__proto__":"v"}}',
        headers: { 'content-type': 'application/json' },
      },
      400,
    ],
    ['missing task', 'POST', '/v1/sessions', { body: { model: 'x' } }, 400],
    ['wrong type', 'POST', '/v1/sessions', { body: { task: 42 } }, 400],
    ['unknown field', 'POST', '/v1/sessions', { body: { task: 't', tsk: 'typo' } }, 400],
    [
      'bad role',
      'POST',
      '/v1/sessions',
      { body: { task: 't', messages: [{ role: 'wizard', content: 'x' }] } },
      400,
    ],
    ['bad id', 'POST', '/v1/sessions', { body: { task: 't', id: '../escape' } }, 400],
    ['reserved id', 'POST', '/v1/sessions', { body: { task: 't', id: 'latest' } }, 400],
    ['dot id', 'POST', '/v1/sessions', { body: { task: 't', id: '.hidden' } }, 400],
    [
      'created_at in the future',
      'POST',
      '/v1/sessions',
      { body: { task: 't', created_at: '2999-01-01T00:00:00Z' } },
      400,
    ],
    [
      'updated_at before created_at',
      'POST',
      '/v1/sessions',
      {
        body: { task: 't', created_at: '2025-02-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' },
      },
      400,
    ],
    [
      'created_at not RFC 3339',
      'POST',
      '/v1/sessions',
      { body: { task: 't', created_at: 'yesterday' } },
      400,
    ],
    [
      'bad ref kind',
      'POST',
      '/v1/sessions',
      { body: { task: 't', external_refs: [{ kind: 'Bad Kind', uri: 'x' }] } },
      400,
    ],
    [
      'ref uri with control char',
      'POST',
      '/v1/sessions',
      { body: { task: 't', external_refs: [{ kind: 'k', uri: 'a\u0007b' }] } },
      400,
    ],
    [
      'ref uri with a C1 control char (review)',
      'POST',
      '/v1/sessions',
      { body: { task: 't', external_refs: [{ kind: 'k', uri: 'a\u0085b' }] } },
      400,
    ],
    [
      'wrong content type',
      'POST',
      '/v1/sessions',
      { raw: '{"task":"t"}', headers: { 'content-type': 'text/plain' } },
      415,
    ],
    ['no content type', 'POST', '/v1/sessions', { raw: '{"task":"t"}' }, 415],
    [
      // Not decoded: it was 400 "the body is not valid UTF-8" for a gzip body (review).
      'a compressed body (Content-Encoding: gzip)',
      'POST',
      '/v1/sessions',
      {
        raw: '{"task":"t"}',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      },
      415,
    ],
    ['oversized body', 'POST', '/v1/sessions', { body: { task: 'x'.repeat(5000) } }, 413],
    [
      'deep JSON',
      'POST',
      '/v1/sessions',
      {
        raw: '{"task":"t","x":' + '['.repeat(200) + ']'.repeat(200) + '}',
        headers: { 'content-type': 'application/json' },
      },
      400,
    ],
    [
      'very deep JSON',
      'POST',
      '/v1/sessions',
      {
        raw: '['.repeat(100000) + ']'.repeat(100000),
        headers: { 'content-type': 'application/json' },
      },
      413,
    ],
    [
      'invalid UTF-8',
      'POST',
      '/v1/sessions',
      { raw: undefined, headers: { 'content-type': 'application/json' } },
      400,
    ],
    [
      'a lone surrogate escape in a string',
      'POST',
      '/v1/sessions',
      {
        raw: '{"task":"cut emoji \\ud83d here"}',
        headers: { 'content-type': 'application/json' },
      },
      400,
    ],
    [
      'append: a lone low surrogate escape in a key',
      'POST',
      '/v1/sessions/existing/messages',
      {
        raw: '{"messages":[{"role":"user","content":"x","\\udc00":1}]}',
        headers: { 'content-type': 'application/json' },
      },
      400,
    ],
    [
      'append: empty messages',
      'POST',
      '/v1/sessions/existing/messages',
      { body: { messages: [] } },
      400,
    ],
    [
      'append: message without content',
      'POST',
      '/v1/sessions/existing/messages',
      { body: { messages: [{ role: 'user' }] } },
      400,
    ],
    [
      'append: bad tool_calls',
      'POST',
      '/v1/sessions/existing/messages',
      { body: { messages: [{ role: 'assistant', content: '', tool_calls: [{ id: 1 }] }] } },
      400,
    ],
    [
      'append: path trick %2F',
      'POST',
      '/v1/sessions/a%2Fb/messages',
      { body: { messages: [{ role: 'user', content: 'x' }] } },
      400,
    ],
    // WHATWG URL parsing resolves %2e%2e as `..` before routing: /v1/messages matches no route.
    [
      'append: path trick %2e%2e',
      'POST',
      '/v1/sessions/%2e%2e/messages',
      { body: { messages: [{ role: 'user', content: 'x' }] } },
      404,
    ],
    [
      'append: encoded dot id',
      'POST',
      '/v1/sessions/%2ehidden/messages',
      { body: { messages: [{ role: 'user', content: 'x' }] } },
      400,
    ],
    ['get: encoded slash', 'GET', '/v1/sessions/..%2F..%2Fetc', {}, 400],
    ['get: too long id', 'GET', `/v1/sessions/${'a'.repeat(200)}`, {}, 400],
    [
      'put: no If-Match',
      'PUT',
      '/v1/sessions/existing',
      { body: { task: 't', messages: [] } },
      428,
    ],
    [
      'put: bad body',
      'PUT',
      '/v1/sessions/existing',
      { body: { task: 't' }, headers: { 'if-match': '"1"' } },
      400,
    ],
    ['trim: keep 1', 'POST', '/v1/sessions/existing/trim', { body: { keep: 1 } }, 400],
    ['trim: keep string', 'POST', '/v1/sessions/existing/trim', { body: { keep: '3' } }, 400],
    ['cleanup: negative', 'POST', '/v1/sessions/cleanup', { body: { older_than_days: -3 } }, 400],
    [
      'cleanup: fractional',
      'POST',
      '/v1/sessions/cleanup',
      { body: { older_than_days: 1.5 } },
      400,
    ],
    [
      'bad Idempotency-Key',
      'POST',
      '/v1/sessions/existing/messages',
      {
        body: { messages: [{ role: 'user', content: 'x' }] },
        headers: { 'idempotency-key': 'has space' },
      },
      400,
    ],
    [
      'Satchel-Secrets value under the minimum length',
      'POST',
      '/v1/sessions/existing/messages',
      {
        body: { messages: [{ role: 'user', content: 'the door code is Q7#zk' }] },
        headers: { 'satchel-secrets': btoa(JSON.stringify(['a-long-enough-one', 'Q7#zk'])) },
      },
      400,
    ],
    ['unknown route', 'GET', '/v1/nothing-here', {}, 404],
  ];

  it('a Satchel-Secrets value under the minimum: the 400 names the minimum, nothing is written', async () => {
    const app = await setup();
    const before = await app.snapshot();
    const res = await app.call('POST', `/v1/sessions/${app.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'the door code is Q7#zk' }] },
      headers: { 'satchel-secrets': btoa(JSON.stringify(['Q7#zk'])) },
    });
    expect(res.status).toBe(400);
    expect(res.json.detail).toMatch(/at least 6 characters/);
    expect(res.json.errors).toEqual([{ path: 'Satchel-Secrets', message: 'too short' }]);
    expect(await app.snapshot()).toEqual(before);
    // Six characters are enough, and are redacted.
    const ok = await app.call('POST', `/v1/sessions/${app.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'the door code is Q7#zk9' }] },
      headers: { 'satchel-secrets': btoa(JSON.stringify(['Q7#zk9'])) },
    });
    expect(ok.status).toBe(200);
    expect((await app.call('GET', `/v1/sessions/${app.id}`)).text).not.toContain('Q7#zk9');
    // An empty value (an unset variable in the caller's list) names no secret: left out, not refused.
    const unset = await app.call('POST', `/v1/sessions/${app.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'and the pin is 88Xq#2' }] },
      headers: { 'satchel-secrets': btoa(JSON.stringify(['', '88Xq#2'])) },
    });
    expect(unset.status).toBe(200);
    expect((await app.call('GET', `/v1/sessions/${app.id}`)).text).not.toContain('88Xq#2');
  });

  it('a lone surrogate escape is refused with the path of its string; an escaped pair (an emoji) is text', async () => {
    const app = await setup();
    const before = await app.snapshot();
    const lone = await app.call('POST', `/v1/sessions/${app.id}/messages`, {
      raw: '{"messages":[{"role":"user","content":"ok"},{"role":"user","content":"half \\uD83D"}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(lone.status).toBe(400);
    expect(lone.json.errors).toEqual([
      { path: 'messages[1].content', message: expect.stringMatching(/lone UTF-16 surrogate/) },
    ]);
    expect(lone.json.detail).toMatch(/^the body is not valid: messages\[1\]\.content: /);
    expect(await app.snapshot()).toEqual(before);
    // A key's lone half is named as U+FFFD: the 400 itself stays Unicode for a strict JSON reader.
    const key = await app.call('POST', `/v1/sessions/${app.id}/messages`, {
      raw: '{"messages":[{"role":"user","content":"x","metadata":{"a\\udc00b":1}}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(key.status).toBe(400);
    expect(key.json.errors[0].path).toBe('messages[0].metadata.a\uFFFDb');
    expect(key.text).not.toMatch(/\\ud[89a-f]/i);
    expect(await app.snapshot()).toEqual(before);
    const pair = await app.call('POST', `/v1/sessions/${app.id}/messages`, {
      raw: '{"messages":[{"role":"user","content":"smile \\ud83d\\ude00 and \\\\ud800 as text"}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(pair.status).toBe(200);
    const got = await app.call('GET', `/v1/sessions/${app.id}`);
    expect(got.json.messages.at(-1).content).toBe('smile \u{1F600} and \\ud800 as text');
  });

  for (const [name, method, path, init, status] of cases) {
    it(`${name} → ${status}`, async () => {
      const app = await setup();
      const before = await app.snapshot();
      let request = init;
      if (name === 'invalid UTF-8') {
        const res = await app.app.fetch(
          new Request('http://satchel.test/v1/sessions', {
            method: 'POST',
            headers: {
              authorization: 'Bearer tok_alice_laptop_0123456789',
              'content-type': 'application/json',
            },
            body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
          }),
        );
        expect(res.status).toBe(400);
        expect(await app.snapshot()).toEqual(before);
        return;
      }
      const res = await app.call(method, path, request);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.json).toMatchObject({
        status,
        title: expect.any(String),
        detail: expect.any(String),
        type: expect.any(String),
      });
      expect(res.text).not.toMatch(/at .*\.ts:\d+/); // no stack traces
      if (status === 400 && request.body !== undefined && !path.includes('%')) {
        if (!['bad Idempotency-Key'].includes(name))
          expect(Array.isArray(res.json.errors) || /JSON|id/.test(res.json.detail)).toBe(true);
      }
      expect(await app.snapshot()).toEqual(before);
    });
  }

  it('a method an open path does not serve answers 405 with Allow, with or without a token', async () => {
    const app = await setup();
    for (const token of [null, undefined]) {
      for (const [method, path, allow] of [
        ['PATCH', '/v1/health', 'GET, HEAD'],
        ['POST', '/v1/health', 'GET, HEAD'],
        ['DELETE', '/openapi.json', 'GET, HEAD'],
        ['GET', '/v1/hooks/ci', 'POST'],
      ] as const) {
        const res = await app.call(method, path, { token });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get('allow')).toBe(allow);
      }
    }
    // A path that needs a token still asks for it first.
    expect((await app.call('PATCH', '/v1/sessions', { token: null })).status).toBe(401);
  });

  it("the browser's paths answer another method 405 with Allow; an unknown page is still 404 (review)", async () => {
    const app = await setup();
    for (const [method, path] of [
      ['POST', '/'],
      ['POST', '/ui'],
      ['DELETE', '/ui/'],
      ['PUT', '/ui/sessions/abc'],
      ['POST', '/ui/app.js'],
      ['PATCH', '/ui/app.svg'],
    ] as const) {
      const res = await app.call(method, path, { token: null });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    expect((await app.call('GET', '/ui/sessions/abc', { token: null })).status).toBe(200);
    for (const path of ['/ui/nope.js', '/ui/sessions/a/b', '/uix'])
      expect((await app.call('GET', path, { token: null })).status, path).toBe(404);
  });

  it('/v1/sessions/latest is GET only: PUT, DELETE and POST answer 405 with Allow and write nothing (review)', async () => {
    const app = await setup();
    await app.call('POST', '/v1/sessions', { body: { task: 't' } });
    const before = await app.snapshot();
    for (const method of ['PUT', 'DELETE', 'POST'] as const) {
      for (const headers of [{}, { 'if-match': '"1"' }] as Record<string, string>[]) {
        const res = await app.call(method, '/v1/sessions/latest', {
          headers,
          ...(method === 'DELETE' ? {} : { body: { task: 't', messages: [] } }),
        });
        expect(res.status, method).toBe(405);
        expect(res.headers.get('allow')).toBe('GET, HEAD');
      }
    }
    expect((await app.call('PUT', '/v1/sessions/latest', { token: null })).status).toBe(401);
    expect(await app.snapshot()).toEqual(before);
  });

  it('a write or delete of a secret-looking id that does not exist is 404 and writes nothing (no marker)', async () => {
    const app = await setup();
    const secretId = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    const keysWritten: string[] = [];
    const put = app.objects.put.bind(app.objects);
    app.objects.put = (key, ...rest) => (keysWritten.push(key), put(key, ...rest));
    const before = await app.snapshot();
    const path = `/v1/sessions/${secretId}`;
    for (const [method, suffix, body, headers] of [
      ['POST', '/messages', { messages: [{ role: 'user', content: 'hi' }] }, {}],
      ['POST', '/continue', { message: 'hi' }, {}],
      ['POST', '/trim', { keep: 2 }, {}],
      ['POST', '/pop', {}, {}],
      ['PUT', '', { task: 't', messages: [] }, { 'if-match': '"1"' }],
      ['DELETE', '', undefined, {}],
    ] as const) {
      const res = await app.call(method, path + suffix, { body, headers });
      expect(res.status, `${method} ${suffix}`).toBe(404);
    }
    await app.background.drain();
    expect(keysWritten).toEqual([]);
    expect(await app.snapshot()).toEqual(before);
  });

  it('a compressed body is 415 saying to send it uncompressed; Content-Encoding: identity is read (review)', async () => {
    const app = await makeApp();
    const send = (coding: string) =>
      app.call('POST', '/v1/sessions', {
        raw: '{"task":"t"}',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
      });
    const gzip = await send('gzip');
    expect(gzip.status).toBe(415);
    expect(gzip.json.detail).toBe('send the body as application/json, uncompressed');
    expect((await send('identity')).status).toBe(201);
  });

  it('tool-call arguments nested deeper than a request may be are redacted as text, not a 500 (review)', async () => {
    const app = await makeApp();
    const key = 'sk-proj-' + 'a1B2c3D4e5'.repeat(4);
    const deep = (inner: string) => '['.repeat(5000) + inner + ']'.repeat(5000);
    const call = (args: string) => ({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }],
    });
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [call(deep('1')), call(deep(JSON.stringify(key)))] },
    });
    expect(res.status).toBe(201);
    const [plain, secret] = res.json.messages.map(
      (m: { tool_calls: { function: { arguments: string } }[] }) =>
        m.tool_calls[0]!.function.arguments,
    );
    expect(plain).toBe(deep('1'));
    expect(secret).toBe(deep('"[REDACTED]"'));
    const appended = await app.call('POST', `/v1/sessions/${res.json.id}/messages`, {
      body: { messages: [call('{"a":'.repeat(3000) + '1' + '}'.repeat(3000))] },
    });
    expect(appended.status).toBe(200);
  });

  it('validation errors name the path of the bad field', async () => {
    const app = await setup();
    const res = await app.call('POST', '/v1/sessions', {
      body: {
        task: 't',
        messages: [
          { role: 'user', content: 'ok' },
          { role: 'bad', content: 'x' },
        ],
      },
    });
    expect(res.json.errors).toContainEqual(expect.objectContaining({ path: 'messages[1].role' }));
  });

  it('and say what is wanted: a missing content, a limit that is not a number, an If-Match of no revision', async () => {
    // First-hour review: "Invalid input", "out of range" and "If-Match names none".
    const app = await setup();
    const missing = await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'user' }] },
    });
    expect(missing.status).toBe(400);
    expect(missing.json.errors).toContainEqual({
      path: 'messages[0].content',
      message: 'content is required: a string, or an array of content parts',
    });
    const part = await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'user', content: ['just a string'] }] },
    });
    expect(part.json.errors).toContainEqual({
      path: 'messages[0].content',
      message: 'content[0]: each part must be an object with a type',
    });
    const limit = await app.call('GET', '/v1/sessions?limit=abc');
    expect(limit.json.errors).toEqual([
      { path: 'limit', message: 'must be an integer from 1 to 100' },
    ]);
    const id = (await app.call('POST', '/v1/sessions', { body: { task: 't' } })).json.id;
    const stale = await app.call('POST', `/v1/sessions/${id}/messages`, {
      headers: { 'if-match': 'abc' },
      body: { messages: [{ role: 'user', content: 'x' }] },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.detail).toContain('If-Match names no revision');
  });
});

describe('HTTP: storage unreachable', () => {
  it('answers 503 problem+json with Retry-After, never a 500', async () => {
    const objects = unreachableS3();
    const app = await makeApp({ objects });
    for (const [method, path, body] of [
      ['GET', '/v1/sessions', undefined],
      ['POST', '/v1/sessions', { task: 't' }],
      ['GET', '/v1/sessions/some-id', undefined],
    ] as const) {
      const res = await app.call(method, path, body ? { body } : {});
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    const health = await app.call('GET', '/v1/health', { token: null });
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ status: 'degraded', storage: { ok: false } });
    // Each 503 is logged once with its cause, for the operator.
    expect(app.logs.find('storage unavailable', 'error')).toEqual([
      expect.objectContaining({ error: expect.stringContaining('ECONNREFUSED') }),
      expect.objectContaining({ error: expect.stringContaining('ECONNREFUSED') }),
      expect.objectContaining({ error: expect.stringContaining('ECONNREFUSED') }),
    ]);
  });
});
