import { afterEach, describe, expect, it } from 'vitest';
import { answerToolCalls, fitContext, NO_TOOL_RESULT } from '../../lib/continue/context.js';
import type { Message } from '../../lib/model/session.js';
import { makeApp } from '../http/helpers.js';
import {
  startChatServer,
  strictToolMessages as strict,
  type ChatServer,
} from '../support/chat-server.js';

// Review s67c: a `tool` message inside an assistant message's group was sent whatever its `tool_call_id`
// (none, or a call of an earlier message: a late result, an import), though fitContext says results
// whose call is not in front of them are left out. OpenAI refuses such a request ("messages with role
// 'tool' must be a response to a preceeding message with 'tool_calls'"), so every continue of the session
// was a 502. Review s52a fixed the other half of the rule (a call without a result): test/continue/
// open-tool-call.test.ts.

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const call = (id: string) => ({
  id,
  type: 'function' as const,
  function: { name: 'shell', arguments: '{"command":"ls"}' },
});

const cases: { name: string; messages: Message[]; sentTools: [string, string][] }[] = [
  {
    name: 'a result naming a call of no message in front of it',
    messages: [
      { role: 'assistant', content: '', tool_calls: [call('call_1')] },
      { role: 'tool', content: 'a.txt', tool_call_id: 'call_1' },
      { role: 'tool', content: 'stale', tool_call_id: 'call_old' },
      { role: 'assistant', content: 'done' },
    ],
    sentTools: [['call_1', 'a.txt']],
  },
  {
    name: 'a result without tool_call_id',
    messages: [
      { role: 'assistant', content: '', tool_calls: [call('call_1')] },
      { role: 'tool', content: 'a.txt', tool_call_id: 'call_1' },
      { role: 'tool', content: 'no id' },
      { role: 'assistant', content: 'done' },
    ],
    sentTools: [['call_1', 'a.txt']],
  },
  {
    name: 'a second result for the same call',
    messages: [
      { role: 'assistant', content: '', tool_calls: [call('call_1')] },
      { role: 'tool', content: 'a.txt', tool_call_id: 'call_1' },
      { role: 'tool', content: 'again', tool_call_id: 'call_1' },
      { role: 'assistant', content: 'done' },
    ],
    sentTools: [['call_1', 'a.txt']],
  },
  {
    // The late result is left out, and the newer call it stood for gets the "none recorded" result.
    name: "a late result after a newer call's message",
    messages: [
      { role: 'assistant', content: '', tool_calls: [call('call_a')] },
      { role: 'tool', content: 'A', tool_call_id: 'call_a' },
      { role: 'assistant', content: '', tool_calls: [call('call_b')] },
      { role: 'tool', content: 'A late', tool_call_id: 'call_a' },
      { role: 'assistant', content: 'done' },
    ],
    sentTools: [
      ['call_a', 'A'],
      ['call_b', NO_TOOL_RESULT],
    ],
  },
];

describe('continue on a session holding a tool result of no call in front of it (review s67c)', () => {
  it.each(cases)('$name: left out of the request, the turn stored', async (c) => {
    // Two steps: a refused request is tried once more without tools (review s64g), refused the same way.
    const chat = await startChatServer(strict('fine'), strict('fine'));
    servers.push(chat);
    const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
    const messages: Message[] = [
      { role: 'system', content: 'You are an engineer.' },
      { role: 'user', content: 'list the files' },
      ...c.messages,
    ];
    const created = await app.call('POST', '/v1/sessions', {
      body: { id: 'odek-run', task: 't', messages },
    });
    expect(created.status).toBe(201);
    const res = await app.call('POST', '/v1/sessions/odek-run/continue', {
      body: { message: 'thanks, now what?' },
    });
    const sent = chat.requests[0]!.body.messages;
    expect(sent.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual(
      c.sentTools,
    );
    expect(res.status, res.text).toBe(200); // was 502 "the model endpoint answered HTTP 400"
    expect(chat.requests).toHaveLength(1);
    expect(res.json.reply).toBe('fine');
    // The request only is shaped: the session keeps what was stored, then the turn.
    const stored = (await app.call('GET', '/v1/sessions/odek-run')).json.messages;
    expect(stored.slice(0, messages.length)).toEqual(
      messages.map((m) => expect.objectContaining({ role: m.role, content: m.content })),
    );
    expect(stored.slice(messages.length).map((m: Message) => [m.role, m.content])).toEqual([
      ['user', 'thanks, now what?'],
      ['assistant', 'fine'],
    ]);
  });

  it('answerToolCalls keeps a result only for a call of its group, once, in stored order', () => {
    const messages: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', tool_calls: [call('a'), call('b'), call('c')] },
      { role: 'tool', content: 'B', tool_call_id: 'b' },
      { role: 'tool', content: 'X', tool_call_id: 'x' },
      { role: 'tool', content: 'none' },
      { role: 'tool', content: 'A', tool_call_id: 'a' },
      { role: 'tool', content: 'B2', tool_call_id: 'b' },
      { role: 'user', content: 'and?' },
    ];
    const copy = structuredClone(messages);
    const answered = answerToolCalls(messages);
    expect(answered.map((m) => [m.role, m.tool_call_id, m.content])).toEqual([
      ['user', undefined, 'go'],
      ['assistant', undefined, ''],
      ['tool', 'b', 'B'],
      ['tool', 'a', 'A'],
      ['tool', 'c', NO_TOOL_RESULT],
      ['user', undefined, 'and?'],
    ]);
    expect(messages).toEqual(copy); // the input is not changed
    expect(fitContext(messages, 100_000)).toEqual(answered);
  });
});
