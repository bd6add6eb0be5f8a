// Review s55c, finding 2: a continue whose message a pop removed while the model ran answers 409 "… the
// reply was not stored". Its repeat with the same Idempotency-Key (the browser's "Press Continue again")
// ran a model turn anyway and appended its reply to a session that no longer held the message: on a repeat
// the turn was not checked against the message (`question` undefined). Now a repeat finds the message as
// the session holds it (sent or redacted) and, when it is gone, answers 409 as the first did: nothing
// stored, no model call. A repeat whose message is still there (a secret in it redacted) runs its turn.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const AWS_KEY = 'AKIA' + 'Q3EGRGSTJ5XRZK7W';
const EARLIER = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'first' },
  { role: 'assistant', content: 'ok' },
];

async function setUp() {
  const chat = await startChatServer();
  servers.push(chat);
  const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
  const other = await makeApp({ objects: new LocalStore(app.dir) });
  const id = (await app.call('POST', '/v1/sessions', { body: { task: 't', messages: EARLIER } }))
    .json.id as string;
  const ask = (message: string, key: string) =>
    app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message },
      headers: { 'idempotency-key': key },
    });
  const contents = async () =>
    (await app.call('GET', `/v1/sessions/${id}`)).json.messages.map(
      (m: { content: string }) => m.content,
    );
  return { chat, other, id, ask, contents };
}

describe('review s55c: a repeat of a continue whose message was removed', () => {
  it('answers 409 as the first did: no model call, nothing stored', async () => {
    const { chat, other, id, ask, contents } = await setUp();
    chat.script(async () => {
      const popped = await other.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 1 } });
      expect(popped.status).toBe(200);
      return { reply: 'an answer to a message the session no longer holds' };
    });
    const first = await ask('question the pop removes', 'k-removed');
    expect(first.status).toBe(409);
    expect(first.json.detail).toMatch(/removed .* while the model ran.*the reply was not stored/);
    expect(await contents()).toEqual(['sys', 'first', 'ok']);
    // Before the fix: 200, the model called again and its reply stored after "ok".
    chat.script({ reply: 'a reply to a question the session does not hold' });
    const again = await ask('question the pop removes', 'k-removed');
    expect(again.status).toBe(409);
    expect(again.json.detail).toBe(
      `your message was removed from session ${id} since; nothing was stored`,
    );
    expect(again.json.detail).not.toContain('your message was stored ('); // what the page offers a retry on
    expect(chat.requests).toHaveLength(1);
    expect(await contents()).toEqual(['sys', 'first', 'ok']);
  });

  it('a repeat whose message is still there, a secret in it redacted, runs its turn after it', async () => {
    const { chat, other, id, ask, contents } = await setUp();
    chat.script({ status: 500 });
    const message = `deploy with ${AWS_KEY} now`;
    const first = await ask(message, 'k-secret');
    expect(first.status).toBe(502);
    // Another message lands after it (the phone), so the repeat must find the redacted copy by its text.
    const note = { messages: [{ role: 'user', content: 'a note from the phone' }] };
    expect((await other.call('POST', `/v1/sessions/${id}/messages`, { body: note })).status).toBe(
      200,
    );
    chat.script({ reply: 'deployed' });
    const again = await ask(message, 'k-secret');
    expect([again.status, again.json.reply]).toEqual([200, 'deployed']);
    expect(await contents()).toEqual([
      'sys',
      'first',
      'ok',
      'a note from the phone', // the question moves to just before its reply (review s60e)
      'deploy with [REDACTED] now',
      'deployed',
    ]);
    // The model was asked about the stored (redacted) message, last.
    expect(chat.requests[1]!.body.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'deploy with [REDACTED] now',
    });
  });

  // Stop 55's left item (the continue fixer's): the pipeline redacts the file inside a `data:` URL and
  // encodes it again, which redacting the message as plain text does not, so the repeat did not find its
  // message once another write had come after it, and answered 409 "removed" though the session held it.
  it('a repeat whose message holds a data: URL the pipeline rewrote runs its turn after it', async () => {
    const { chat, other, id, ask, contents } = await setUp();
    chat.script({ status: 500 });
    const file = Buffer.from(`aws_access_key_id = ${AWS_KEY}\n`).toString('base64');
    const message = `use this config: data:text/plain;base64,${file} please`;
    expect((await ask(message, 'k-file')).status).toBe(502);
    const stored = (await contents()).at(-1) as string;
    expect(stored).not.toContain(file); // rewritten: the file's key redacted
    expect(stored).not.toBe(message);
    const note = { messages: [{ role: 'user', content: 'a note from the phone' }] };
    expect((await other.call('POST', `/v1/sessions/${id}/messages`, { body: note })).status).toBe(
      200,
    );
    chat.script({ reply: 'configured' });
    const again = await ask(message, 'k-file');
    // Before: 409 "your message was removed from session … since".
    expect([again.status, again.json.reply]).toEqual([200, 'configured']);
    // The question moves to just before its reply (review s60e).
    expect((await contents()).slice(-3)).toEqual(['a note from the phone', stored, 'configured']);
    expect(chat.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'user', content: stored });
  });
});
