// Review s55b, finding 1: a model answering a chat completion whose content parts hold a null
// (`{"choices":[{"message":{"content":[null]}}]}`) made parseCompletion read `type` of null: a TypeError, no
// ModelError, so the continue answered 500 "the server failed to handle this request" although its user
// message was stored (revision 2). It is the invalid-answer 502 that says the message was stored; any other
// unforeseen failure after the message is stored is a 503 that says so, never a 500.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError, parseCompletion } from '../../lib/continue/model.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { PutOptions } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const completion = (content: unknown) =>
  JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] });

describe('review s55b: a model answer with a part that is not an object', () => {
  it('parseCompletion answers an invalid-answer ModelError for [null], not a TypeError', () => {
    for (const content of [[null], [{ type: 'text', text: 'a' }, null], ['text'], [3]]) {
      let thrown: unknown;
      try {
        parseCompletion(completion(content));
      } catch (err) {
        thrown = err;
      }
      expect(ModelError.is(thrown) && thrown.kind).toBe('invalid');
    }
    // Parts that are objects still give their text.
    expect(parseCompletion(completion([{ type: 'text', text: 'fine' }])).content).toBe('fine');
  });

  it('a continue answers 502 saying its message was stored (it was 500)', async () => {
    const chat = await startChatServer(() => ({
      status: 200,
      body: {
        id: 'x',
        object: 'chat.completion',
        choices: [{ index: 0, message: { content: [null] } }],
      },
    }));
    servers.push(chat);
    const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
    const id = (
      await app.call('POST', '/v1/sessions', {
        body: { task: 'cache design', messages: [{ role: 'system', content: 'sys' }] },
      })
    ).json.id as string;
    const res = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'why is the cache cold?' },
      headers: { 'idempotency-key': 'k-garbage-1' },
    });
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(
      /^the model answered a part that is not an object; your message was stored \(revision 2\)/,
    );
    expect(res.json.detail).toMatch(/Retry with the same Idempotency-Key/);
    const stored = (await app.call('GET', `/v1/sessions/${id}`)).json.messages;
    expect(stored.at(-1)).toEqual({ role: 'user', content: 'why is the cache cold?' });
    expect(app.logs.find('unhandled error')).toHaveLength(0);
  });
});

describe('review s55b: an unforeseen failure after the message is stored', () => {
  it('is a 503 that says the message was stored, not a 500', async () => {
    // The lease's PUT throws a plain Error (no storage error, no domain error): a bug's stand-in.
    class BrokenLease extends PassThrough {
      override put(key: string, body: Uint8Array, options?: PutOptions) {
        if (key.includes('/lease/')) return Promise.reject(new TypeError('a bug'));
        return this.inner.put(key, body, options);
      }
    }
    const chat = await startChatServer({ reply: 'never asked' });
    servers.push(chat);
    const objects = new BrokenLease(new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s55b-'))));
    const app = await makeApp({
      objects,
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' },
    });
    const id = (await app.call('POST', '/v1/sessions', { body: { task: 't' } })).json.id as string;
    const res = await app.call('POST', `/v1/sessions/${id}/continue`, { body: { message: 'q' } });
    expect(res.status).toBe(503);
    expect(res.json.detail).toBe(
      'continue failed; your message was stored (revision 2), and whether a model turn was stored for ' +
        'it is unknown. Without an Idempotency-Key, a retry stores the message again.',
    );
    expect(chat.requests).toHaveLength(0);
    expect(app.logs.find('continue failed', 'error')).toHaveLength(1);
    expect(app.logs.find('unhandled error')).toHaveLength(0);
  });
});
