import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('a model reply with half an emoji (lib/continue/model.ts parseCompletion)', () => {
  // A request body holding "\ud83d" is 400 (stored, it breaks strict JSON readers); a model's reply
  // cannot be refused, so its halves become U+FFFD (models that stream tokens cut emoji in two).
  it('a model reply holding half an emoji is stored as Unicode text (U+FFFD), not as a lone surrogate', async () => {
    const chat = await startChatServer({ reply: 'done \ud83d' });
    servers.push(chat);
    const app = await makeApp({
      env: {
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'test-model',
        SATCHEL_MODEL_KEY: 'sk-x-0123456789abcdef',
      },
    });
    const made = await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'system', content: 'be brief' }] },
    });
    expect(made.status).toBe(201);
    const res = await app.call('POST', `/v1/sessions/${made.json.id}/continue`, {
      body: { message: 'hello' },
    });
    expect(res.status).toBe(200);
    const got = await app.call('GET', `/v1/sessions/${made.json.id}`);
    // What jq / serde_json / Go refuse: a \uD8xx escape with no low half after it.
    expect(got.text).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
    for (const m of got.json.messages) expect((m.content as string).isWellFormed()).toBe(true);
  });
});

describe('a session a model reply went into moves to another Satchel as exported', () => {
  // Export then import (lib/odek/format.ts createBody -> POST /v1/sessions) is how sessions move between
  // servers; a lone half stored by the model path would make the import a 400. (A session stored with
  // one before 2026-12-05 still is: docs/api.md, Unicode.)
  it('a session this server stored can be imported into another Satchel as it was exported', async () => {
    const chat = await startChatServer({ reply: 'done \ud83d' });
    servers.push(chat);
    const env = {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
      SATCHEL_MODEL_KEY: 'sk-x-0123456789abcdef',
    };
    const from = await makeApp({ env });
    const made = await from.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'system', content: 'be brief' }] },
    });
    expect(
      (
        await from.call('POST', `/v1/sessions/${made.json.id}/continue`, {
          body: { message: 'hi' },
        })
      ).status,
    ).toBe(200);
    const s = (await from.call('GET', `/v1/sessions/${made.json.id}`)).json;
    const to = await makeApp();
    const imported = await to.call('POST', '/v1/sessions', {
      body: { id: s.id, task: s.task, model: s.model, provider: s.provider, messages: s.messages },
    });
    expect(imported.status).toBe(201);
  });
});
