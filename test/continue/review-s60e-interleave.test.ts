// Review s60e, finding 2: two continues on one session at once stored [uA, uB, aA, aB]. B's message is
// stored before its turn waits for the lease, so A's reply landed after question B, and every later
// reader (the next continue's model request, odek, the browser) saw answer A paired with question B.
// `ownMessageLast` fixed the order only inside B's own model request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

const QA = 'What is the capital of France?';
const AA = 'Paris is the capital of France.';
const QB = 'What is 2+2?';
const AB = '4';

let chat: ChatServer;
let server: RunningServer;
/** B's first try, sent while A's model turn runs: its message is stored, its turn meets A's lease. */
let busyB: { status: number; detail?: string } | undefined;

const post = (path: string, body: unknown, key: string) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
const continueAs = (id: string, message: string, key: string) =>
  post(`/v1/sessions/${id}/continue`, { message }, key);

beforeAll(async () => {
  chat = await startChatServer(
    async () => {
      const res = await continueAs('s1', QB, 'key-b');
      busyB = { status: res.status, ...((await res.json()) as { detail?: string }) };
      return { reply: AA };
    },
    { reply: AB },
    { reply: 'You are welcome.' },
  );
  server = await startSatchelServer({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm', SATCHEL_CONTINUE_WAIT_MS: '200' },
  });
  await post('/v1/sessions', { id: 's1', task: 't' }, 'create-s1');
});
afterAll(async () => {
  await server?.close();
  await chat?.close();
});

const stored = async () => {
  const res = await fetch(`${server.url}/v1/sessions/s1`);
  const { messages } = (await res.json()) as { messages: { role: string; content: string }[] };
  return messages.map((m) => `${m.role}: ${m.content}`);
};

describe('two continues on one session at once (review s60e)', () => {
  // Skipped: the fix is in lib/sessions/store.ts (appendTurn moves the question before its turn), which
  // this helper could not edit; it fails on the current code. Un-skip with that change.
  it('stores each question right before its answer; repeats answer their own replies', async () => {
    const a = await continueAs('s1', QA, 'key-a');
    expect(a.status).toBe(200);
    expect(((await a.json()) as { reply: string }).reply).toBe(AA);
    expect(busyB?.status).toBe(409);
    expect(busyB?.detail).toMatch(/another continue is running a model turn/);
    // A's turn moved its question after B's (stored while A's model ran), next to A's answer.
    expect(await stored()).toEqual([`user: ${QB}`, `user: ${QA}`, `assistant: ${AA}`]);
    // B's retry under its key (as the client does after Retry-After) runs B's turn.
    const b = await continueAs('s1', QB, 'key-b');
    expect(b.status).toBe(200);
    expect(((await b.json()) as { reply: string }).reply).toBe(AB);
    expect(await stored()).toEqual([
      `user: ${QA}`,
      `assistant: ${AA}`,
      `user: ${QB}`,
      `assistant: ${AB}`,
    ]);
    // The next continue's model sees each question with its own answer.
    await continueAs('s1', 'Thanks', 'key-c');
    expect(chat.requests[2]!.body.messages.map((m) => `${m.role}: ${m.content}`)).toEqual([
      `user: ${QA}`,
      `assistant: ${AA}`,
      `user: ${QB}`,
      `assistant: ${AB}`,
      'user: Thanks',
    ]);
    // A repeat of either continue answers its own reply and stores nothing.
    const before = await stored();
    for (const [q, key, reply] of [
      [QA, 'key-a', AA],
      [QB, 'key-b', AB],
    ] as const) {
      const res = await continueAs('s1', q, key);
      expect(res.status).toBe(200);
      expect(res.headers.get('idempotent-replayed')).toBe('true');
      expect(((await res.json()) as { reply: string }).reply).toBe(reply);
    }
    expect(await stored()).toEqual(before);
    expect(chat.requests).toHaveLength(3);
  });
});
