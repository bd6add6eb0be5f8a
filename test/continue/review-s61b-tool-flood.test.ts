import { afterEach, describe, expect, it } from 'vitest';
import { ModelError, type ChatFn, type ToolCall } from '../../lib/continue/model.js';
import { MAX_TOOL_CALLS, runTurn } from '../../lib/continue/turn.js';
import type { Message } from '../../lib/model/session.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { makeApp } from '../http/helpers.js';

// Review s61b (finding 1): a model answer with a few thousand tool calls (a local model repeating one call
// until max_tokens; ~240 KB, far under the 16 MiB answer limit) blocked the process for seconds to hours:
// the turn re-serialised the whole conversation per call, results without I/O resolved in microtasks so
// the deadline's timer never ran, and the calls of one answer had no bound.

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const DEADLINE_MS = 1000;

/** The longest gap between the runs of a 10 ms timer while `work` runs, and how often it ran. */
async function watchTimer<T>(work: () => Promise<T>) {
  let longest = 0;
  let ticks = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    ticks++;
  }, 10);
  const started = performance.now();
  try {
    const value = await work();
    const now = performance.now();
    return { value, ms: now - started, longest: Math.max(longest, now - last), ticks };
  } finally {
    clearInterval(ticker);
  }
}

const unknownCalls = (n: number, from = 0): ToolCall[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `c${from + i}`,
    type: 'function' as const,
    function: { name: 'lookup', arguments: '{}' },
  }));

describe('a flood of tool calls in one model answer (review s61b)', () => {
  it('an answer with 3000 tool calls ends the turn by its deadline; timers keep running', async () => {
    const calls = unknownCalls(3000).map((c) => ({ id: c.id, name: 'lookup', arguments: '{}' }));
    server = await startChatServer({ toolCalls: calls }, { reply: 'done' });
    const app = await makeApp({
      env: {
        SATCHEL_MODEL_URL: server.url,
        SATCHEL_MODEL: 'm',
        SATCHEL_MODEL_TIMEOUT_MS: String(DEADLINE_MS),
      },
    });
    const made = await app.call('POST', '/v1/sessions', { body: { id: 's1', task: 'flood' } });
    expect(made.status).toBe(201);
    const run = await watchTimer(() =>
      app.call('POST', '/v1/sessions/s1/continue', { body: { message: 'status?' } }),
    );
    // The deadline bound: the turn itself may take DEADLINE_MS; the rest is the continue's writes.
    expect(run.ms).toBeLessThan(DEADLINE_MS + 1500);
    // The 10 ms timer (any other request of the process) never waited as long as the deadline.
    expect(run.longest).toBeLessThan(DEADLINE_MS);
    // An answer asking for more calls than a turn runs is the invalid-answer 502: nothing is stored.
    expect(run.value.status).toBe(502);
    expect(run.value.json.detail).toContain(`asked for 3000 tool calls in one answer`);
    expect(run.value.json.detail).toContain('your message was stored');
    expect(server.requests).toHaveLength(1);
    const stored = (await app.call('GET', '/v1/sessions/s1')).json.messages;
    expect(stored.map((m: { role: string }) => m.role)).toEqual(['user']);
  });

  it(`${MAX_TOOL_CALLS} calls in one answer all run; one more is an invalid answer, nothing run`, async () => {
    const context: Message[] = [{ role: 'user', content: 'hi' }];
    const searched: unknown[] = [];
    const search = async (_ns: string, input: unknown) => (searched.push(input), { results: [] });
    const listCall = (i: number): ToolCall => ({
      id: `s${i}`,
      type: 'function',
      function: { name: 'session_search', arguments: '{"action":"list","limit":1}' },
    });
    const answers = (n: number): ChatFn => {
      let round = 0;
      return async () =>
        ++round === 1
          ? { content: '', tool_calls: Array.from({ length: n }, (_, i) => listCall(i)) }
          : { content: 'done', tool_calls: [] };
    };
    const signal = new AbortController().signal;
    const base = { model: 'm', ns: 'alice', search, signal };
    const ok = await runTurn(context, { ...base, chat: answers(MAX_TOOL_CALLS) });
    expect(ok.messages.filter((m) => m.role === 'tool')).toHaveLength(MAX_TOOL_CALLS);
    expect(searched).toHaveLength(MAX_TOOL_CALLS);
    searched.length = 0;
    const err = await runTurn(context, { ...base, chat: answers(MAX_TOOL_CALLS + 1) }).catch(
      (e: unknown) => e,
    );
    expect(ModelError.is(err)).toBe(true);
    expect(err).toMatchObject({ kind: 'invalid' });
    expect((err as Error).message).toContain(`more than the ${MAX_TOOL_CALLS}`);
    expect(searched).toEqual([]);
  });

  it('a deadline that passes among calls needing no I/O ends the turn there', async () => {
    // A stand-in chat (this tests the loop): its answer's calls resolve in microtasks, and the deadline's
    // timer is due as soon as the loop gives the event loop a turn.
    const ac = new AbortController();
    let rounds = 0;
    const chat: ChatFn = async () => {
      rounds++;
      setTimeout(() => ac.abort(), 0);
      return { content: '', tool_calls: unknownCalls(MAX_TOOL_CALLS) };
    };
    const err = await runTurn([{ role: 'user', content: 'hi' }], {
      chat,
      model: 'm',
      ns: 'alice',
      search: async () => ({}),
      signal: ac.signal,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'timeout' });
    expect(rounds).toBe(1);
  });

  it('the running byte count still counts every earlier result of the round', async () => {
    const ids = ['g1', 'g2', 'g3'];
    let round = 0;
    const chat: ChatFn = async () =>
      ++round === 1
        ? {
            content: '',
            tool_calls: ids.map((id) => ({
              id,
              type: 'function' as const,
              function: { name: 'session_search', arguments: `{"action":"get","id":"${id}"}` },
            })),
          }
        : { content: 'done', tool_calls: [] };
    const out = await runTurn([{ role: 'user', content: 'hi' }], {
      chat,
      model: 'm',
      ns: 'alice',
      search: async () => ({ text: 'x'.repeat(5000) }),
      signal: new AbortController().signal,
      contextBytes: 12_000,
    });
    const results = out.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));
    expect(results[0].text).toHaveLength(5000);
    expect(results[1].text).toHaveLength(5000);
    expect(results[2].error).toMatch(/more than this turn's context can hold/);
  });
});
