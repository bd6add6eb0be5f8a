import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

// Review s64g #1: a model that refuses the request (a 4xx: a setting of the model server, a bad key, a
// model name it does not serve) refuses it again on every retry, yet the CLI said to run the turn again
// "when the model is reachable again". It now says the model refused the request, where to look, and
// still prints the command that runs the turn without storing the message twice.
const TOKEN = 'tok_s64g_advice_0123456789';
let server: RunningServer;
let chat: ChatServer;

beforeAll(async () => {
  chat = await startChatServer();
  server = await startSatchelServer({
    env: {
      SATCHEL_TOKENS: `advice/laptop=${TOKEN}`,
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
    },
  });
});
afterAll(async () => {
  await server.close();
  await chat.close();
});

const run = (id: string, key: string) =>
  satchel(['continue', '--id', id, 'Use UTC.', '--idempotency-key', key], {
    SATCHEL_URL: server.url,
    SATCHEL_TOKEN: TOKEN,
  });
const session = async () =>
  (await new SatchelClient({ url: server.url, token: TOKEN }).create({ task: 'advice' })).session
    .id;

describe('continue after the model refused the request', () => {
  it('a 4xx from the model: says the model refused it and where to look, not "reachable again"', async () => {
    const id = await session();
    chat.script({ status: 400, body: { error: { message: 'model "test-model" not found' } } });
    const r = await run(id, 'refused-1');
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'satchel: Bad Gateway: the model endpoint answered HTTP 400; your message was stored (revision 2) ' +
        'and no reply was stored.',
      "The model refused the request: check the model server's settings (the Satchel server's log has " +
        "the model's answer). Then, to run the turn without storing the message twice:",
      `  satchel continue --id ${id} --idempotency-key refused-1 'Use UTC.'`,
    ]);
    expect(r.stderr).not.toContain('reachable again');
  });

  it('a 429 (or a 5xx) is still "when the model is reachable again"', async () => {
    for (const [status, key] of [
      [429, 'busy-1'],
      [503, 'busy-2'],
      // A 404's detail says to check SATCHEL_MODEL_URL: not "the model server's settings" (review s64j).
      [404, 'busy-3'],
    ] as const) {
      const id = await session();
      chat.script({ status, body: { error: { message: 'slow down' } } });
      const r = await run(id, key);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'To run the turn when the model is reachable again without storing the message twice:',
      );
    }
  });
});
