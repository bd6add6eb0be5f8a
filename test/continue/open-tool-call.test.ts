import { afterEach, describe, expect, it } from 'vitest';
import { answerToolCalls, fitContext, NO_TOOL_RESULT } from '../../lib/continue/context.js';
import type { Message } from '../../lib/model/session.js';
import { makeApp } from '../http/helpers.js';
import {
  startChatServer,
  strictToolMessages as strict,
  type ChatServer,
} from '../support/chat-server.js';

// Review s52a: fitContext (lib/continue/context.ts) leaves out tool results whose call is not in front
// of them, "since chat APIs refuse them", but keeps an assistant message whose tool calls have no
// results after it (an odek session saved mid tool loop, or a client's append of only the call). Chat APIs
// refuse that too (OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages
// responding to each 'tool_call_id'"), so every continue of such a session is a 502, forever.

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('continue on a session holding an unanswered tool call (review s52a)', () => {
  it('the model gets a request it can take, and the turn is stored', async () => {
    const chat = await startChatServer(strict('the deploy is fixed now'));
    servers.push(chat);
    const app = await makeApp({
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' },
    });
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        id: 'odek-run',
        task: 'fix the deploy',
        messages: [
          { role: 'system', content: 'You are an engineer.' },
          { role: 'user', content: 'fix the deploy' },
          // The agent was stopped while its shell call ran: the call is stored, its result never was.
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'shell', arguments: '{"cmd":"make deploy"}' },
              },
            ],
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    const res = await app.call('POST', '/v1/sessions/odek-run/continue', {
      body: { message: 'is it done?' },
    });
    expect(chat.requests).toHaveLength(1);
    expect(res.status).toBe(200); // is 502: "the model endpoint answered HTTP 400"
    expect(res.json.reply).toBe('the deploy is fixed now');
    // The request carried a result saying none was recorded, right after the call …
    const sent = chat.requests[0]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent[3]).toMatchObject({ tool_call_id: 'call_1', content: NO_TOOL_RESULT });
    // … which the stored session does not hold.
    const stored = (await app.call('GET', '/v1/sessions/odek-run')).json.messages;
    expect(stored.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it('answers each call without a result once, after the results that are there', () => {
    const call = (id: string) => ({
      id,
      type: 'function' as const,
      function: { name: 'shell', arguments: '{}' },
    });
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', tool_calls: [call('a'), call('b'), call('c')] },
      { role: 'tool', content: 'A', tool_call_id: 'b' },
      { role: 'user', content: 'and?' },
    ];
    const answered = answerToolCalls(messages);
    expect(answered.map((m) => [m.role, m.tool_call_id, m.content])).toEqual([
      ['user', undefined, 'go'],
      ['assistant', undefined, ''],
      ['tool', 'b', 'A'],
      ['tool', 'a', NO_TOOL_RESULT],
      ['tool', 'c', NO_TOOL_RESULT],
      ['user', undefined, 'and?'],
    ]);
    expect(messages).toHaveLength(4); // the input is not changed
    expect(fitContext(messages, 100_000)).toEqual(answered);
    // A call's group is kept or left out whole, its added results with it.
    expect(fitContext(messages, 10)).toEqual([messages[3]]);
  });
});
