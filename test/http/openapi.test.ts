import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeLease } from '../../lib/continue/lease.js';
import type { OpenApiDocument } from '../../lib/http/openapi.js';
import { apiDocument, routes } from '../../lib/http/routes/index.js';
import { keys } from '../../lib/model/keys.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { StorageUnavailableError, utf8, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp, TOKENS } from './helpers.js';

// The OpenAPI document against the app: (a) the same routes, (b) a well-formed OpenAPI 3.1 document, and
// (c) every documented status of every operation produced here by a real request, its body valid against
// the documented schema and its documented headers present.

const doc = apiDocument();
type App = Awaited<ReturnType<typeof makeApp>>;
type Res = Awaited<ReturnType<App['call']>> & { method: string; path: string };

describe('the OpenAPI document and the app have the same routes', () => {
  it('every registered route is documented and every documented operation is a route', async () => {
    const { app } = await makeApp();
    // Middleware (app.use) registers as ALL; routes carry their method.
    // A route's own middleware (requireWrite) is listed as one more handler of it.
    // The session browser's pages and assets (/ui, and / redirecting there) are not API operations.
    const api = app.routes.filter(
      (r) => r.method !== 'ALL' && r.path !== '/' && r.path !== '/ui' && !r.path.startsWith('/ui/'),
    );
    const registered = new Set(
      api.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`),
    );
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect([...registered].sort()).toEqual([...documented].sort());
  });

  it('is served without a token, as JSON and as an HTML page', async () => {
    const { call } = await makeApp();
    const json = await call('GET', '/openapi.json', { token: null });
    expect(json.status).toBe(200);
    expect(json.json).toEqual(JSON.parse(JSON.stringify(doc)));
    const page = await call('GET', '/docs', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // Self-contained: no scripts, stylesheets or images from elsewhere.
    expect(page.text).not.toMatch(/<script|<link|<img|https?:\/\/(?!satchel\.dev)/i);
    for (const { spec: route } of routes) {
      expect(page.text).toContain(`id="op-${route.operationId}"`);
      expect(page.text).toContain(`<code>${route.path}</code>`);
    }
    for (const name of Object.keys(doc.components.schemas))
      expect(page.text).toContain(`id="schema-${name}"`);
  });
});

describe('the document is OpenAPI 3.1 in shape', () => {
  it('has the required fields, one operation id each, path parameters declared, tags declared', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(10);
    expect(doc.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
    });
    const ids = new Set<string>();
    const tags = new Set(doc.tags.map((t) => t.name));
    for (const [path, ops] of Object.entries(doc.paths)) {
      expect(path.startsWith('/')).toBe(true);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(ops)) {
        expect(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']).toContain(method);
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
        for (const t of op.tags as string[]) expect(tags.has(t)).toBe(true);
        const params = ((op.parameters ?? []) as { $ref: string }[]).map(
          (p) =>
            resolve(doc, p.$ref) as {
              name: string;
              in: string;
              required?: boolean;
              schema?: unknown;
            },
        );
        for (const p of params) {
          expect(['path', 'query', 'header', 'cookie']).toContain(p.in);
          expect(p.schema).toBeTypeOf('object');
        }
        const inPath = params.filter((p) => p.in === 'path');
        expect(inPath.map((p) => p.name).sort(), `${method} ${path}`).toEqual(templated);
        for (const p of inPath) expect(p.required).toBe(true);
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
        for (const [status, r] of Object.entries(op.responses)) {
          expect(status).toMatch(/^[1-5]\d\d$/);
          expect(typeof r.description).toBe('string');
        }
        for (const s of (op.security ?? doc.security) as Record<string, unknown>[]) {
          for (const name of Object.keys(s))
            expect(doc.components.securitySchemes).toHaveProperty(name);
        }
      }
    }
  });

  it('every operation that takes an Idempotency-Key declares its 422 (review: trim and pop did not)', () => {
    const keyed = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) =>
          ((op.parameters ?? []) as { $ref?: string }[]).some((p) =>
            p.$ref?.endsWith('/IdempotencyKey'),
          ),
        )
        .map(([method, op]) => [`${method} ${path}`, Object.keys(op.responses ?? {})] as const),
    );
    expect(keyed.map(([op]) => op)).toEqual(
      expect.arrayContaining(['post /v1/sessions/{id}/trim', 'post /v1/sessions/{id}/pop']),
    );
    for (const [op, statuses] of keyed) expect(statuses, op).toContain('422');
  });

  it('every $ref resolves, and no schema keeps a $schema, $id or $defs of its own', () => {
    const refs: string[] = [];
    walk(doc, (node) => {
      if (typeof node.$ref === 'string') refs.push(node.$ref);
      expect(node).not.toHaveProperty('$schema');
      expect(node).not.toHaveProperty('$id');
      expect(node).not.toHaveProperty('$defs');
    });
    expect(refs.length).toBeGreaterThan(30);
    for (const ref of refs) expect(resolve(doc, ref), ref).toBeDefined();
  });

  it('request bodies are the zod input (defaults optional, null content allowed); responses the output', () => {
    const s = doc.components.schemas as Record<
      string,
      { properties: Record<string, Record<string, unknown>>; required?: string[] }
    >;
    // v1.1: content is a string, null (stored as "") or an array of parts, in and out.
    const kinds = (schema: Record<string, unknown>) =>
      ((schema.anyOf as Record<string, unknown>[] | undefined) ?? [schema]).map((a) => a.type);
    expect(kinds(s.MessageInput!.properties.content!)).toEqual(['string', 'array', 'null']);
    expect(kinds(s.Message!.properties.content!)).toEqual(['string', 'array']);
    expect(s.Session!.required).toEqual(
      expect.arrayContaining(['messages', 'external_refs', 'revision', 'untrusted_ingested']),
    );
    expect(s.CreateSessionBody!.required).toEqual(['task']);
    expect(s.CreateSessionBody!.properties.messages).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/MessageInput' },
    });
  });
});

// ---- (c) every documented status, produced ----

/** A store that can be switched off, for 503s: every call then fails as an unreachable backend's would. */
class SwitchableStore implements ObjectStore {
  down = false;
  readonly name = 'switchable';
  constructor(private readonly inner: ObjectStore) {}
  private check() {
    if (this.down) throw new StorageUnavailableError('switched off for the test');
  }
  async get(key: string) {
    this.check();
    return this.inner.get(key);
  }
  async put(...args: Parameters<ObjectStore['put']>) {
    this.check();
    return this.inner.put(...args);
  }
  async delete(k: string | string[]) {
    this.check();
    return this.inner.delete(k);
  }
  async list(...args: Parameters<ObjectStore['list']>) {
    this.check();
    return this.inner.list(...args);
  }
}

const HOOK_SECRET = 'openapi-hook-secret';
const MAX_BODY = 65536;
let app: App; // max body 64 KiB, a webhook, no model: continue only stores
let modelApp: App; // a model that cannot be reached, continue waits 0 ms for a lease
let downApp: App; // its storage switched off after setup
let lambdaApp: App; // as Lambda: a webhook answers after its turn; a model that cannot be reached
let downStore: SwitchableStore;
let downId: string;

beforeAll(async () => {
  app = await makeApp({
    env: {
      SATCHEL_MAX_BODY_BYTES: String(MAX_BODY),
      SATCHEL_HOOKS: JSON.stringify({
        ci: { secret: HOOK_SECRET, namespace: 'alice', session: 'new' },
      }),
    },
  });
  modelApp = await makeApp({
    env: {
      SATCHEL_MODEL_URL: 'http://127.0.0.1:9',
      SATCHEL_MODEL: 'm',
      SATCHEL_CONTINUE_WAIT_MS: '0',
    },
  });
  downStore = new SwitchableStore(new MemoryStore());
  // As Lambda runs it: a webhook answers after its message is stored, so a failure to store is a 503.
  downApp = await makeApp({
    objects: downStore,
    answersAfterBackground: true,
    env: {
      SATCHEL_HOOKS: JSON.stringify({
        ci: { secret: HOOK_SECRET, namespace: 'alice', session: 'new' },
      }),
    },
  });
  downId = (await downApp.call('POST', '/v1/sessions', { body: { task: 'soon unreachable' } })).json
    .id;
  const fixed = (session: string) => ({ secret: HOOK_SECRET, namespace: 'alice', session });
  lambdaApp = await makeApp({
    shortLived: true,
    answersAfterBackground: true,
    env: {
      SATCHEL_MODEL_URL: 'http://127.0.0.1:9',
      SATCHEL_MODEL: 'm',
      SATCHEL_CONTINUE_WAIT_MS: '0',
      SATCHEL_HOOKS: JSON.stringify({
        busy: fixed('hook-busy'),
        down: fixed('hook-down'),
        bad: fixed('hook-bad'),
      }),
    },
  });
  for (const id of ['hook-busy', 'hook-down', 'hook-bad'])
    expect((await lambdaApp.call('POST', '/v1/sessions', { body: { id, task: 't' } })).status).toBe(
      201,
    );
  downStore.down = true;
});

async function send(
  target: App,
  method: string,
  path: string,
  init: Parameters<App['call']>[2] = {},
): Promise<Res> {
  return { ...(await target.call(method, path, init)), method, path };
}
/** A new session in alice's namespace (laptop token); its id. */
async function fresh(target: App = app): Promise<string> {
  const res = await target.call('POST', '/v1/sessions', {
    body: {
      task: 'openapi',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
    },
  });
  expect(res.status).toBe(201);
  return res.json.id;
}
const big = { task: 'x'.repeat(MAX_BODY + 10) };
const ro = { token: TOKENS.ci };
const noToken = { token: null };
const asText = { raw: '{"task":"t"}', headers: { 'content-type': 'text/plain' } };
const signed = (body: string, headers: Record<string, string> = {}) => {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', HOOK_SECRET).update(`${t}.${body}`).digest('hex');
  return {
    token: null,
    raw: body,
    headers: {
      'content-type': 'application/json',
      'x-satchel-signature': `t=${t},v1=${v1}`,
      ...headers,
    },
  };
};

/** One request per documented (operation, status): `METHOD /path status`. */
const cases: Record<string, () => Promise<Res>> = {
  'GET /v1/health 200': () => send(app, 'GET', '/v1/health', noToken),
  'GET /openapi.json 200': () => send(app, 'GET', '/openapi.json', noToken),
  'GET /docs 200': () => send(app, 'GET', '/docs', noToken),

  'POST /v1/sessions 201': () =>
    send(app, 'POST', '/v1/sessions', {
      body: { task: 'new', model: 'm', messages: [{ role: 'user', content: null }] },
    }),
  'POST /v1/sessions 400': () => send(app, 'POST', '/v1/sessions', { body: { messages: [] } }),
  'POST /v1/sessions 401': () =>
    send(app, 'POST', '/v1/sessions', { ...noToken, body: { task: 't' } }),
  'POST /v1/sessions 403': () => send(app, 'POST', '/v1/sessions', { ...ro, body: { task: 't' } }),
  'POST /v1/sessions 409': async () => {
    await send(app, 'POST', '/v1/sessions', { body: { task: 't', id: 'openapi-taken' } });
    return send(app, 'POST', '/v1/sessions', { body: { task: 't', id: 'openapi-taken' } });
  },
  'POST /v1/sessions 413': () => send(app, 'POST', '/v1/sessions', { body: big }),
  'POST /v1/sessions 415': () => send(app, 'POST', '/v1/sessions', asText),
  'POST /v1/sessions 503': () => send(downApp, 'POST', '/v1/sessions', { body: { task: 't' } }),

  'GET /v1/sessions 200': async () => {
    await fresh();
    return send(app, 'GET', '/v1/sessions?limit=1');
  },
  'GET /v1/sessions 400': () => send(app, 'GET', '/v1/sessions?limit=0'),
  'GET /v1/sessions 401': () => send(app, 'GET', '/v1/sessions', noToken),
  'GET /v1/sessions 503': () => send(downApp, 'GET', '/v1/sessions'),

  'GET /v1/sessions/latest 200': async () => {
    await fresh();
    return send(app, 'GET', '/v1/sessions/latest');
  },
  'GET /v1/sessions/latest 401': () => send(app, 'GET', '/v1/sessions/latest', noToken),
  // bob's namespace stays empty in this file.
  'GET /v1/sessions/latest 404': () =>
    send(app, 'GET', '/v1/sessions/latest', { token: TOKENS.bob }),
  'GET /v1/sessions/latest 503': () => send(downApp, 'GET', '/v1/sessions/latest'),

  'POST /v1/sessions/cleanup 200': () =>
    send(app, 'POST', '/v1/sessions/cleanup', { body: { older_than_days: 365 } }),
  'POST /v1/sessions/cleanup 400': () =>
    send(app, 'POST', '/v1/sessions/cleanup', { body: { older_than_days: -1 } }),
  'POST /v1/sessions/cleanup 401': () =>
    send(app, 'POST', '/v1/sessions/cleanup', { ...noToken, body: { older_than_days: 1 } }),
  'POST /v1/sessions/cleanup 403': () =>
    send(app, 'POST', '/v1/sessions/cleanup', { ...ro, body: { older_than_days: 1 } }),
  'POST /v1/sessions/cleanup 413': () => send(app, 'POST', '/v1/sessions/cleanup', { body: big }),
  'POST /v1/sessions/cleanup 415': () => send(app, 'POST', '/v1/sessions/cleanup', asText),
  'POST /v1/sessions/cleanup 503': () =>
    send(downApp, 'POST', '/v1/sessions/cleanup', { body: { older_than_days: 1 } }),

  'GET /v1/sessions/{id} 200': async () => send(app, 'GET', `/v1/sessions/${await fresh()}`),
  'GET /v1/sessions/{id} 304': async () =>
    send(app, 'GET', `/v1/sessions/${await fresh()}`, { headers: { 'if-none-match': '"1"' } }),
  'GET /v1/sessions/{id} 400': () => send(app, 'GET', '/v1/sessions/index'),
  'GET /v1/sessions/{id} 401': () => send(app, 'GET', '/v1/sessions/any', noToken),
  'GET /v1/sessions/{id} 404': () => send(app, 'GET', '/v1/sessions/no-such-session'),
  'GET /v1/sessions/{id} 503': () => send(downApp, 'GET', `/v1/sessions/${downId}`),

  'PUT /v1/sessions/{id} 200': async () =>
    send(app, 'PUT', `/v1/sessions/${await fresh()}`, {
      headers: { 'if-match': '"1"' },
      body: { task: 'replaced', messages: [{ role: 'user', content: 'new' }] },
    }),
  'PUT /v1/sessions/{id} 400': async () =>
    send(app, 'PUT', `/v1/sessions/${await fresh()}`, {
      headers: { 'if-match': '"1"' },
      body: { task: 'no messages' },
    }),
  'PUT /v1/sessions/{id} 401': () =>
    send(app, 'PUT', '/v1/sessions/any', {
      ...noToken,
      headers: { 'if-match': '"1"' },
      body: { task: 't', messages: [] },
    }),
  'PUT /v1/sessions/{id} 403': () =>
    send(app, 'PUT', '/v1/sessions/any', {
      ...ro,
      headers: { 'if-match': '"1"' },
      body: { task: 't', messages: [] },
    }),
  'PUT /v1/sessions/{id} 404': () =>
    send(app, 'PUT', '/v1/sessions/no-such-session', {
      headers: { 'if-match': '*' },
      body: { task: 't', messages: [] },
    }),
  'PUT /v1/sessions/{id} 412': async () =>
    send(app, 'PUT', `/v1/sessions/${await fresh()}`, {
      headers: { 'if-match': '"7"' },
      body: { task: 't', messages: [] },
    }),
  'PUT /v1/sessions/{id} 413': () =>
    send(app, 'PUT', '/v1/sessions/any', { headers: { 'if-match': '"1"' }, body: big }),
  'PUT /v1/sessions/{id} 415': () =>
    send(app, 'PUT', '/v1/sessions/any', {
      ...asText,
      headers: { ...asText.headers, 'if-match': '"1"' },
    }),
  'PUT /v1/sessions/{id} 422': async () => {
    const id = await fresh();
    const headers = { 'if-match': '*', 'idempotency-key': 'openapi-put-1' };
    expect(
      (
        await app.call('PUT', `/v1/sessions/${id}`, {
          headers,
          body: { task: 'first', messages: [] },
        })
      ).status,
    ).toBe(200);
    return send(app, 'PUT', `/v1/sessions/${id}`, {
      headers,
      body: { task: 'second', messages: [] },
    });
  },
  'PUT /v1/sessions/{id} 428': async () =>
    send(app, 'PUT', `/v1/sessions/${await fresh()}`, { body: { task: 't', messages: [] } }),
  'PUT /v1/sessions/{id} 503': () =>
    send(downApp, 'PUT', `/v1/sessions/${downId}`, {
      headers: { 'if-match': '"1"' },
      body: { task: 't', messages: [] },
    }),

  'DELETE /v1/sessions/{id} 204': async () => send(app, 'DELETE', `/v1/sessions/${await fresh()}`),
  'DELETE /v1/sessions/{id} 400': () => send(app, 'DELETE', '/v1/sessions/index'),
  'DELETE /v1/sessions/{id} 401': () => send(app, 'DELETE', '/v1/sessions/any', noToken),
  'DELETE /v1/sessions/{id} 403': () => send(app, 'DELETE', '/v1/sessions/any', ro),
  'DELETE /v1/sessions/{id} 404': () => send(app, 'DELETE', '/v1/sessions/no-such-session'),
  'DELETE /v1/sessions/{id} 412': async () =>
    send(app, 'DELETE', `/v1/sessions/${await fresh()}`, { headers: { 'if-match': '"9"' } }),
  'DELETE /v1/sessions/{id} 503': () => send(downApp, 'DELETE', `/v1/sessions/${downId}`),

  'POST /v1/sessions/{id}/messages 200': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/messages`, {
      body: {
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{}' } }],
          },
        ],
      },
    }),
  'POST /v1/sessions/{id}/messages 400': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/messages`, { body: { messages: [] } }),
  'POST /v1/sessions/{id}/messages 401': () =>
    send(app, 'POST', '/v1/sessions/any/messages', {
      ...noToken,
      body: { messages: [{ role: 'user', content: 'x' }] },
    }),
  'POST /v1/sessions/{id}/messages 403': () =>
    send(app, 'POST', '/v1/sessions/any/messages', {
      ...ro,
      body: { messages: [{ role: 'user', content: 'x' }] },
    }),
  'POST /v1/sessions/{id}/messages 404': () =>
    send(app, 'POST', '/v1/sessions/no-such-session/messages', {
      body: { messages: [{ role: 'user', content: 'x' }] },
    }),
  'POST /v1/sessions/{id}/messages 412': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/messages`, {
      headers: { 'if-match': '"9"' },
      body: { messages: [{ role: 'user', content: 'x' }] },
    }),
  'POST /v1/sessions/{id}/messages 413': () =>
    send(app, 'POST', '/v1/sessions/any/messages', { body: big }),
  'POST /v1/sessions/{id}/messages 415': () =>
    send(app, 'POST', '/v1/sessions/any/messages', asText),
  'POST /v1/sessions/{id}/messages 422': async () => {
    const id = await fresh();
    const headers = { 'idempotency-key': 'openapi-append-1' };
    expect(
      (
        await app.call('POST', `/v1/sessions/${id}/messages`, {
          headers,
          body: { messages: [{ role: 'user', content: 'a' }] },
        })
      ).status,
    ).toBe(200);
    return send(app, 'POST', `/v1/sessions/${id}/messages`, {
      headers,
      body: { messages: [{ role: 'user', content: 'b' }] },
    });
  },
  'POST /v1/sessions/{id}/messages 503': () =>
    send(downApp, 'POST', `/v1/sessions/${downId}/messages`, {
      body: { messages: [{ role: 'user', content: 'x' }] },
    }),

  'POST /v1/sessions/{id}/continue 200': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/continue`, { body: { message: 'go on' } }),
  'POST /v1/sessions/{id}/continue 400': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/continue`, { body: { message: '' } }),
  'POST /v1/sessions/{id}/continue 401': () =>
    send(app, 'POST', '/v1/sessions/latest/continue', { ...noToken, body: { message: 'x' } }),
  'POST /v1/sessions/{id}/continue 403': () =>
    send(app, 'POST', '/v1/sessions/latest/continue', { ...ro, body: { message: 'x' } }),
  'POST /v1/sessions/{id}/continue 404': () =>
    send(app, 'POST', '/v1/sessions/no-such-session/continue', { body: { message: 'x' } }),
  'POST /v1/sessions/{id}/continue 409': async () => {
    const id = await fresh(modelApp);
    await modelApp.objects.put(
      keys.lease('alice', id),
      encodeLease({ owner: 'another-turn', expiresAt: Date.now() + 60_000 }),
      { ifNoneMatch: '*' },
    );
    return send(modelApp, 'POST', `/v1/sessions/${id}/continue`, { body: { message: 'x' } });
  },
  'POST /v1/sessions/{id}/continue 412': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/continue`, {
      headers: { 'if-match': '"5"' },
      body: { message: 'x' },
    }),
  'POST /v1/sessions/{id}/continue 413': () =>
    send(app, 'POST', '/v1/sessions/latest/continue', { body: { message: 'x'.repeat(MAX_BODY) } }),
  'POST /v1/sessions/{id}/continue 415': () =>
    send(app, 'POST', '/v1/sessions/latest/continue', asText),
  'POST /v1/sessions/{id}/continue 422': async () => {
    const id = await fresh();
    const headers = { 'idempotency-key': 'openapi-continue-1' };
    expect(
      (await app.call('POST', `/v1/sessions/${id}/continue`, { headers, body: { message: 'a' } }))
        .status,
    ).toBe(200);
    return send(app, 'POST', `/v1/sessions/${id}/continue`, { headers, body: { message: 'b' } });
  },
  'POST /v1/sessions/{id}/continue 502': async () =>
    send(modelApp, 'POST', `/v1/sessions/${await fresh(modelApp)}/continue`, {
      body: { message: 'x' },
    }),
  'POST /v1/sessions/{id}/continue 503': () =>
    send(downApp, 'POST', `/v1/sessions/${downId}/continue`, { body: { message: 'x' } }),

  'POST /v1/sessions/{id}/pop 200': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/pop`, { body: { count: 1 } }),
  'POST /v1/sessions/{id}/pop 400': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/pop`, { body: { count: 0 } }),
  'POST /v1/sessions/{id}/pop 401': () =>
    send(app, 'POST', '/v1/sessions/any/pop', { ...noToken, body: {} }),
  'POST /v1/sessions/{id}/pop 403': () =>
    send(app, 'POST', '/v1/sessions/any/pop', { ...ro, body: {} }),
  'POST /v1/sessions/{id}/pop 404': () =>
    send(app, 'POST', '/v1/sessions/no-such-session/pop', { body: {} }),
  'POST /v1/sessions/{id}/pop 412': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/pop`, {
      headers: { 'if-match': '"9"' },
      body: {},
    }),
  'POST /v1/sessions/{id}/pop 413': () => send(app, 'POST', '/v1/sessions/any/pop', { body: big }),
  'POST /v1/sessions/{id}/pop 415': () => send(app, 'POST', '/v1/sessions/any/pop', asText),
  'POST /v1/sessions/{id}/pop 422': async () => {
    const id = await fresh();
    const headers = { 'idempotency-key': 'openapi-pop-1' };
    expect((await app.call('POST', `/v1/sessions/${id}/pop`, { headers, body: {} })).status).toBe(
      200,
    );
    return send(app, 'POST', `/v1/sessions/${id}/pop`, { headers, body: { count: 2 } });
  },
  'POST /v1/sessions/{id}/pop 503': () =>
    send(downApp, 'POST', `/v1/sessions/${downId}/pop`, { body: {} }),
  'POST /v1/sessions/{id}/trim 200': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/trim`, { body: { keep: 2 } }),
  'POST /v1/sessions/{id}/trim 400': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/trim`, { body: { keep: 1 } }),
  'POST /v1/sessions/{id}/trim 401': () =>
    send(app, 'POST', '/v1/sessions/any/trim', { ...noToken, body: { keep: 2 } }),
  'POST /v1/sessions/{id}/trim 403': () =>
    send(app, 'POST', '/v1/sessions/any/trim', { ...ro, body: { keep: 2 } }),
  'POST /v1/sessions/{id}/trim 404': () =>
    send(app, 'POST', '/v1/sessions/no-such-session/trim', { body: { keep: 2 } }),
  'POST /v1/sessions/{id}/trim 412': async () =>
    send(app, 'POST', `/v1/sessions/${await fresh()}/trim`, {
      headers: { 'if-match': '"9"' },
      body: { keep: 2 },
    }),
  'POST /v1/sessions/{id}/trim 413': () =>
    send(app, 'POST', '/v1/sessions/any/trim', { body: big }),
  'POST /v1/sessions/{id}/trim 415': () => send(app, 'POST', '/v1/sessions/any/trim', asText),
  'POST /v1/sessions/{id}/trim 422': async () => {
    const messages = ['sys', 'a', 'b', 'c'].map((content, i) => ({
      role: i ? 'user' : 'system',
      content,
    }));
    const id = (await app.call('POST', '/v1/sessions', { body: { task: 't', messages } })).json.id;
    const headers = { 'idempotency-key': 'openapi-trim-1' };
    const trim = (keep: number) =>
      app.call('POST', `/v1/sessions/${id}/trim`, { headers, body: { keep } });
    expect((await trim(2)).status).toBe(200);
    return send(app, 'POST', `/v1/sessions/${id}/trim`, { headers, body: { keep: 3 } });
  },
  'POST /v1/sessions/{id}/trim 503': () =>
    send(downApp, 'POST', `/v1/sessions/${downId}/trim`, { body: { keep: 2 } }),

  'GET /v1/sessions/{id}/audit 200': async () =>
    send(app, 'GET', `/v1/sessions/${await fresh()}/audit`),
  'GET /v1/sessions/{id}/audit 400': () => send(app, 'GET', '/v1/sessions/index/audit'),
  'GET /v1/sessions/{id}/audit 401': () => send(app, 'GET', '/v1/sessions/any/audit', noToken),
  'GET /v1/sessions/{id}/audit 404': () => send(app, 'GET', '/v1/sessions/no-such-session/audit'),
  'GET /v1/sessions/{id}/audit 503': () => send(downApp, 'GET', `/v1/sessions/${downId}/audit`),

  'POST /v1/session_search 200': async () => {
    await fresh();
    return send(app, 'POST', '/v1/session_search', { body: { action: 'list', limit: 3 } });
  },
  'POST /v1/session_search 400': () =>
    send(app, 'POST', '/v1/session_search', { body: { query: 'no action' } }),
  'POST /v1/session_search 401': () =>
    send(app, 'POST', '/v1/session_search', { ...noToken, body: { action: 'list' } }),
  'POST /v1/session_search 413': () =>
    send(app, 'POST', '/v1/session_search', {
      body: { action: 'list', query: 'x'.repeat(MAX_BODY) },
    }),
  'POST /v1/session_search 415': () =>
    send(app, 'POST', '/v1/session_search', { ...asText, raw: '{"action":"list"}' }),
  'POST /v1/session_search 503': () =>
    send(downApp, 'POST', '/v1/session_search', { body: { action: 'list' } }),

  'POST /v1/hooks/{name} 202': async () => {
    const res = await send(
      app,
      'POST',
      '/v1/hooks/ci',
      signed('{"event":"deploy"}', { 'x-satchel-delivery': 'openapi-1' }),
    );
    await app.background.drain();
    return res;
  },
  'POST /v1/hooks/{name} 400': () =>
    send(app, 'POST', '/v1/hooks/ci', signed('{}', { 'x-satchel-delivery': 'has spaces' })),
  'POST /v1/hooks/{name} 401': () =>
    send(app, 'POST', '/v1/hooks/ci', {
      ...signed('{}'),
      headers: { 'content-type': 'application/json', 'x-satchel-signature': 't=1,v1=00' },
    }),
  'POST /v1/hooks/{name} 404': () => send(app, 'POST', '/v1/hooks/nope', signed('{}')),
  // A `new` hook's answer waits for the claim: the delivery id's second payload is refused.
  'POST /v1/hooks/{name} 422': async () => {
    const first = signed('{"event":"one"}', { 'x-satchel-delivery': 'openapi-reused' });
    expect((await send(app, 'POST', '/v1/hooks/ci', first)).status).toBe(202);
    const other = signed('{"event":"two"}', { 'x-satchel-delivery': 'openapi-reused' });
    return send(app, 'POST', '/v1/hooks/ci', other);
  },
  'POST /v1/hooks/{name} 503': () =>
    send(downApp, 'POST', '/v1/hooks/ci', signed('{}', { 'x-satchel-delivery': 'openapi-down' })),
  'POST /v1/hooks/{name} 413': () =>
    send(app, 'POST', '/v1/hooks/ci', signed(JSON.stringify({ pad: 'x'.repeat(MAX_BODY) }))),
  // On Lambda the answer waits for the delivery's turn and says how it failed (review s59g).
  'POST /v1/hooks/{name} 409': async () => {
    await lambdaApp.objects.put(
      keys.lease('alice', 'hook-busy'),
      encodeLease({ owner: 'another-turn', expiresAt: Date.now() + 60_000 }),
      { ifNoneMatch: '*' },
    );
    return send(
      lambdaApp,
      'POST',
      '/v1/hooks/busy',
      signed('{}', { 'x-satchel-delivery': 'busy' }),
    );
  },
  'POST /v1/hooks/{name} 500': async () => {
    await lambdaApp.objects.put(keys.session('alice', 'hook-bad'), utf8('{"half a file'));
    return send(lambdaApp, 'POST', '/v1/hooks/bad', signed('{}', { 'x-satchel-delivery': 'bad' }));
  },
  'POST /v1/hooks/{name} 502': () =>
    send(lambdaApp, 'POST', '/v1/hooks/down', signed('{}', { 'x-satchel-delivery': 'down' })),
};

/** Every (operation, status) pair the document promises. */
const documented = routes.flatMap(({ spec: r }) =>
  Object.keys(r.responses).map((status) => `${r.method.toUpperCase()} ${r.path} ${status}`),
);

describe('every documented response status is produced by a request here', () => {
  it('there is one case per documented status, and no case for a status the document does not promise', () => {
    expect(Object.keys(cases).sort()).toEqual([...documented].sort());
  });

  it.each(documented)('%s', async (key) => {
    const [method, path, statusText] = key.split(' ') as [string, string, string];
    const status = Number(statusText);
    const produce = cases[key];
    if (!produce)
      throw new Error(
        `no request in this file produces ${key}: add one, or drop the status from lib/http/openapi.ts`,
      );
    const res = await produce();
    // The request went to the operation under test.
    expect(`${res.method} ${operationOf(res.path)}`).toBe(`${method} ${path}`);
    expect(res.status, res.text.slice(0, 300)).toBe(status);

    const spec = doc.paths[path]![method.toLowerCase()]!.responses[statusText]!;
    for (const [name, header] of Object.entries(
      (spec.headers ?? {}) as Record<
        string,
        { required: boolean; schema: Record<string, unknown> }
      >,
    )) {
      const value = res.headers.get(name);
      if (header.required) expect(value, `${key}: header ${name}`).not.toBeNull();
      if (value !== null)
        expect(validate(doc, header.schema, value), `${key}: header ${name}`).toEqual([]);
    }
    const content = spec.content as Record<string, { schema: Record<string, unknown> }> | undefined;
    if (!content) {
      expect(res.text).toBe('');
      return;
    }
    const [mediaType, media] = Object.entries(content)[0]!;
    expect(res.headers.get('content-type')!.split(';')[0]).toBe(mediaType);
    if (mediaType === 'text/html') expect(res.text).toMatch(/^<!doctype html>/);
    else
      expect(
        validate(doc, media.schema, res.json),
        `${key}: body ${res.text.slice(0, 300)}`,
      ).toEqual([]);
    if (status >= 400) expect(res.json.status).toBe(status);
  });
});

/** The documented path template a request path falls under; literal segments win over parameters. */
function operationOf(path: string): string {
  const bare = path.split('?')[0]!;
  const templates = Object.keys(doc.paths).sort(
    (a, b) => a.split('{').length - b.split('{').length,
  );
  const found = templates.find((t) =>
    new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(bare),
  );
  return found ?? `(no documented path for ${bare})`;
}

// ---- helpers: JSON pointers and a small JSON Schema check (the keywords the document uses) ----

function resolve(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function walk(node: unknown, visit: (node: Record<string, unknown>) => void): void {
  if (Array.isArray(node)) node.forEach((n) => walk(n, visit));
  else if (typeof node === 'object' && node !== null) {
    visit(node as Record<string, unknown>);
    Object.values(node).forEach((n) => walk(n, visit));
  }
}

const KNOWN = new Set([
  '$ref',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'oneOf',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'pattern',
  'format',
  'default',
  'description',
  'title',
]);

/** Errors of `value` against a JSON Schema of the document ([] when valid). Unknown keywords are errors too. */
function validate(
  root: OpenApiDocument,
  schema: Record<string, unknown>,
  value: unknown,
  at = '$',
): string[] {
  const errors: string[] = [];
  for (const k of Object.keys(schema))
    if (!KNOWN.has(k)) errors.push(`${at}: the check does not know the keyword ${k}`);
  if (typeof schema.$ref === 'string')
    return [
      ...errors,
      ...validate(root, resolve(root, schema.$ref) as Record<string, unknown>, value, at),
    ];
  const union = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (union && !union.some((s) => validate(root, s, value, at).length === 0))
    errors.push(`${at}: matches no variant`);
  if ('const' in schema && value !== schema.const)
    errors.push(`${at}: not ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    errors.push(`${at}: not one of ${JSON.stringify(schema.enum)}`);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const ok = types.some((t) => t === actual || (t === 'integer' && Number.isInteger(value)));
    if (!ok) return [...errors, `${at}: ${actual}, not ${types.join('|')}`];
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      errors.push(`${at}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      errors.push(`${at}: above ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value))
      errors.push(`${at}: does not match ${schema.pattern}`);
    if (typeof schema.minLength === 'number' && value.length < schema.minLength)
      errors.push(`${at}: too short`);
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
      errors.push(`${at}: too long`);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((v, i) =>
      errors.push(...validate(root, schema.items as Record<string, unknown>, v, `${at}[${i}]`)),
    );
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const r of (schema.required as string[] | undefined) ?? [])
      if (!(r in value)) errors.push(`${at}: no ${r}`);
    for (const [k, v] of Object.entries(value)) {
      if (props[k]) errors.push(...validate(root, props[k], v, `${at}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: ${k} is not documented`);
    }
  }
  return errors;
}
