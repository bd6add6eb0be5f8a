import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

// Review s59m (fixed 2026-12-06), the root cause of partial-copy-turn.test.ts on the plain continue route: appendTurn's
// question check (`cur.messages.some(held)`, lib/sessions/store.ts ~519) skips a partial copy's holes, so
// a message held in the parts reads as removed. The continue answers 409 "the message this turn answered
// was removed ... (a pop, trim or replace)" while nothing removed it: an untrue answer.
const REPLY = 'wombatreply: here is the answer';
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const big = (n: number) => ({
  role: 'user',
  content: `note ${n}: ` + 'the quick brown fox jumps over the lazy dog. '.repeat(2300),
});

describe('continue on a large session another process folds while the model runs (review s59m)', () => {
  it('stores the reply (the message was never removed)', async () => {
    const objects = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s59m-')));
    const other = await makeApp({ objects });
    const othersWrite = async () => {
      for (let i = 0; i < 4; i++)
        await other.call('POST', '/v1/sessions/s1/messages', {
          body: { messages: [big(100 + i)] },
        });
      return { reply: REPLY };
    };
    const chat = await startChatServer(othersWrite);
    servers.push(chat);
    const app = await makeApp({
      objects,
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' },
    });
    expect((await app.call('POST', '/v1/sessions', { body: { task: 't', id: 's1' } })).status).toBe(
      201,
    );
    for (let i = 0; i < 3; i++)
      await app.call('POST', '/v1/sessions/s1/messages', { body: { messages: [big(i)] } });
    const res = await app.call('POST', '/v1/sessions/s1/continue', {
      body: { message: 'what broke the platypus build?' },
    });
    const messages = (await app.call('GET', '/v1/sessions/s1')).json.messages as {
      content: string;
    }[];
    expect(messages.some((m) => m.content === 'what broke the platypus build?')).toBe(true);
    expect({ status: res.status, detail: res.json?.detail }).toEqual({
      status: 200,
      detail: undefined,
    });
  }, 120_000);
});
