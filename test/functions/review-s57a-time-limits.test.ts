import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { text } from '../../lib/model/bytes.js';
import { listAll } from '../../lib/storage/prefix.js';
import { S3Store } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { ANSWER_MARGIN_MS, TURN_MARGIN_MS } from '../../functions/lambda-time.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { captureConsole } from '../support/logs.js';
import { httpApiEvent, type LambdaResult } from '../support/lambda-events.js';
import { s3Env } from '../support/s3.js';

// Review s57a, item 1: nothing bounded a Lambda invocation's time, which Lambda stops at the function's
// timeout (and API Gateway gives up after 30 s), the answer lost and the work cut anywhere.
// - A cleanup deleted every matching session in one call: a few hundred passed 30 s. It deletes at most
//   32 now, as on Workers, and says how many are left (`remaining`).
// - The answer waited for `background.drain()` with no bound: with slow storage a DELETE carried out
//   answered after the caller had been given up on. The drain now stops at the deadline taken from
//   context.getRemainingTimeInMillis() (minus a margin to answer), saying so in the log; the work left
//   goes on at the next invocation.
// - A continue's model turn ran to SATCHEL_MODEL_TIMEOUT_MS (120 s by default) whatever the invocation
//   had left: Lambda stopped it mid-turn, with no "message stored" 502 and its lease left (a retry: 409).

let handler: (event: unknown, context: unknown) => Promise<LambdaResult>;
let proxy: FaultProxy;
let chat: ChatServer;
let prefix: string;
const TOKENS = {
  cl: 'tok_s57a_cleanup_0123456789',
  dr: 'tok_s57a_drain_0123456789',
  ct: 'tok_s57a_turn_0123456789',
};
const HOST = 'abc.lambda-url.us-east-1.on.aws';
const logged = captureConsole();
afterAll(() => logged.restore());

/** A payload 2.0 event of namespace `ns`'s token. */
function v2(ns: keyof typeof TOKENS, method: string, path: string, body?: unknown) {
  return httpApiEvent(method, path, {
    host: HOST,
    body,
    headers: { authorization: `Bearer ${TOKENS[ns]}` },
  });
}

/** A Lambda context whose invocation has `ms` left. */
const leaving = (ms: number) => {
  const end = Date.now() + ms;
  return { getRemainingTimeInMillis: () => end - Date.now() };
};

beforeAll(async () => {
  proxy = await startFaultProxy(inject('s3').endpoint);
  chat = await startChatServer();
  const env = s3Env('s57a-time-limits');
  prefix = env.S3_PREFIX!;
  Object.assign(process.env, {
    ...env,
    S3_ENDPOINT: proxy.url,
    SATCHEL_TOKENS: Object.entries(TOKENS)
      .map(([ns, token]) => `${ns}/fn=${token}`)
      .join(','),
    SATCHEL_MODEL_URL: chat.url,
    SATCHEL_MODEL: 'm',
  });
  handler = (await import('../../functions/lambda.js')).handler as never;
});
afterAll(async () => {
  await proxy?.close();
  await chat?.close();
});

/** Keys of the objects under the function's prefix whose bytes hold `needle` (as stored or base64). */
async function holding(needle: string): Promise<string[]> {
  const s3 = inject('s3');
  const store = new S3Store({ ...s3, forcePathStyle: true, prefix, wire: nodeWire });
  const found: string[] = [];
  for (const key of await listAll(store, '')) {
    const o = await store.get(key);
    if (!o) continue;
    const t = text(o.body);
    const runs = [...t.matchAll(/[A-Za-z0-9+/_-]{40,}={0,2}/g)].map((m) =>
      Buffer.from(m[0].replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8'),
    );
    if ([t, ...runs].some((s) => s.includes(needle))) found.push(key);
  }
  return found;
}

describe('Lambda: an invocation answers within its time', () => {
  it('a cleanup deletes at most 32 sessions a call and says how many are left', async () => {
    for (let i = 0; i < 40; i++) {
      const r = await handler(v2('cl', 'POST', '/v1/sessions', { task: `old ${i}` }), {});
      expect(r.statusCode).toBe(201);
    }
    const first = await handler(
      v2('cl', 'POST', '/v1/sessions/cleanup', { older_than_days: 0 }),
      {},
    );
    expect(first.statusCode, first.body).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ deleted: 32, remaining: 8 });
    const second = await handler(
      v2('cl', 'POST', '/v1/sessions/cleanup', { older_than_days: 0 }),
      {},
    );
    expect(JSON.parse(second.body)).toEqual({ deleted: 8 });
  }, 120_000);

  it('the drain stops at the deadline, logs it, and the work left goes on at the next invocation', async () => {
    const needle = 'drain-needle-s57a-4f1c';
    const c = await handler(
      v2('dr', 'POST', '/v1/sessions', {
        task: 'drain',
        messages: [{ role: 'user', content: needle }],
      }),
      {},
    );
    const { id } = JSON.parse(c.body) as { id: string };
    // Storage holds every request once the DELETE's route has answered (its access line): the drain's
    // work cannot finish, as with storage too slow for the time left.
    const answered = () =>
      logged.find('request').some((r) => r.method === 'DELETE' && r.status === 204);
    proxy.setPlan(() => (answered() ? { action: 'hold' } : undefined));
    let r: LambdaResult;
    try {
      // An invocation at its deadline already (no time left beyond the margin to answer). Until
      // 2026-12-06 it answered once storage gave the held requests up (8 s), saying nothing.
      r = await handler(v2('dr', 'DELETE', `/v1/sessions/${id}`), leaving(ANSWER_MARGIN_MS));
    } finally {
      proxy.setPlan(undefined);
      await proxy.releaseHeld();
    }
    expect(r.statusCode).toBe(204);
    expect(
      logged.find(/^background work left unfinished at the invocation deadline/, 'warn'),
    ).toHaveLength(1);
    // The next invocation (no deadline) drains what was left: the session is gone from every object.
    const read = await handler(v2('dr', 'GET', `/v1/sessions/${id}`), {});
    expect(read.statusCode).toBe(404);
    expect(await holding(needle)).toEqual([]);
  }, 60_000);

  it("a continue's model turn ends in time for its 502 (message stored), and leaves no lease", async () => {
    const c = await handler(v2('ct', 'POST', '/v1/sessions', { task: 'slow model' }), {});
    const { id } = JSON.parse(c.body) as { id: string };
    chat.script({ hang: true });
    // The model timeout is 120 s (the default); the invocation has time for 1.5 s of a turn (enough for
    // the model request to reach the model, which never answers).
    const context = leaving(ANSWER_MARGIN_MS + TURN_MARGIN_MS + 1_500);
    const r = await handler(
      v2('ct', 'POST', `/v1/sessions/${id}/continue`, { message: 'hello' }),
      context,
    );
    expect(r.statusCode, r.body).toBe(502);
    expect(r.headers['content-type']).toBe('application/problem+json');
    const { detail } = JSON.parse(r.body) as { detail: string };
    expect(detail).toMatch(
      /^the model did not answer in the [\d.]+ s this request had left before the runtime's/,
    );
    expect(detail).toMatch(/your message was stored \(revision 2\) and no reply was stored/);
    // Its lease was released: the next continue (an invocation with time) runs its turn.
    chat.script({ reply: 'hi there' });
    const next = await handler(
      v2('ct', 'POST', `/v1/sessions/${id}/continue`, { message: 'again' }),
      {},
    );
    expect(next.statusCode, next.body).toBe(200);
    expect(JSON.parse(next.body)).toMatchObject({ reply: 'hi there' });
  }, 30_000);
});
