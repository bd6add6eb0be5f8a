// SatchelSession on the items a real run makes and on messages other writers stored: parallel tool calls,
// content parts of other formats, popItem of a message that holds several items, popItem after a lost answer.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import type { AgentInputItem } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { SatchelClient } from '../../lib/client/index.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { onceFor, startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';

setTracingDisabled(true);

let server: RunningServer;
let chat: ChatServer;
let client: SatchelClient;
let agent: Agent;
beforeAll(async () => {
  chat = await startChatServer();
  // continue runs its model turns on the same scripted chat server.
  server = await startSatchelServer({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' },
  });
  client = new SatchelClient({ url: server.url });
  const model = new OpenAIChatCompletionsModel(
    new OpenAI({ baseURL: chat.url, apiKey: 'k' }),
    'test-model',
  );
  const weather = tool({
    name: 'weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  });
  agent = new Agent({ name: 'helper', instructions: 'Be brief.', model, tools: [weather] });
});
afterAll(async () => {
  await server?.close();
  await chat?.close();
});

const callIds = (items: AgentInputItem[], type: string) =>
  items.flatMap((i) =>
    (i as { type?: string }).type === type ? [(i as { callId: string }).callId] : [],
  );

/** Chat-completions rule: an assistant message with tool_calls is followed by a tool message for each. */
function orphanCalls(
  messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[],
) {
  const bad: string[] = [];
  messages.forEach((m, i) => {
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++)
      answered.add(messages[j]!.tool_call_id!);
    for (const call of m.tool_calls ?? []) if (!answered.has(call.id)) bad.push(`${call.id}@${i}`);
  });
  return bad;
}

describe('SatchelSession: a model response with parallel tool calls', () => {
  it('is stored as valid chat messages, so continue (and odek) can send the session to a model', async () => {
    const session = new SatchelSession({ client, sessionId: 'parallel-continue' });
    chat.script(
      {
        toolCalls: [
          { name: 'weather', arguments: { city: 'Oslo' } },
          { name: 'weather', arguments: { city: 'Bergen' } },
        ],
      },
      { reply: 'Oslo and Bergen are sunny.' },
    );
    await run(agent, 'Weather in Oslo and Bergen?', { session });
    // The same session continued by Satchel's own model turn: the history it sends must be a valid
    // chat-completions conversation (OpenAI answers 400 "An assistant message with 'tool_calls' must be
    // followed by tool messages responding to each 'tool_call_id'").
    chat.script({ reply: 'Anything else?' });
    await client.continue('parallel-continue', { message: 'thanks' });
    expect(orphanCalls(chat.requests.at(-1)!.body.messages)).toEqual([]);
  });

  it('keeps every function_call_result with its function_call when the size cap drops old history', async () => {
    const capped = await startSatchelServer({ env: { SATCHEL_MAX_SESSION_BYTES: '6000' } });
    try {
      const session = new SatchelSession({
        client: new SatchelClient({ url: capped.url }),
        sessionId: 'parallel-cap',
      });
      await session.addItems([
        { role: 'user', content: 'Weather in Oslo and Bergen?' },
        {
          type: 'function_call',
          callId: 'call_A',
          name: 'weather',
          arguments: JSON.stringify({ city: 'Oslo', note: 'x'.repeat(1500) }),
          status: 'completed',
        },
        {
          type: 'function_call',
          callId: 'call_B',
          name: 'weather',
          arguments: JSON.stringify({ city: 'Bergen' }),
          status: 'completed',
        },
        {
          type: 'function_call_result',
          callId: 'call_A',
          name: 'weather',
          status: 'completed',
          output: 'sunny',
        },
        {
          type: 'function_call_result',
          callId: 'call_B',
          name: 'weather',
          status: 'completed',
          output: 'rain',
        },
        {
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Oslo sunny, Bergen rain.' }],
        },
      ]);
      // The session grows past SATCHEL_MAX_SESSION_BYTES: the oldest groups after the head are dropped.
      await session.addItems([{ role: 'user', content: 'y'.repeat(2500) }]);
      const items = await session.getItems();
      const calls = new Set(callIds(items, 'function_call'));
      // A result whose call is gone is refused by the model API on the next run.
      for (const id of callIds(items, 'function_call_result'))
        expect(calls.has(id), `result ${id} without its call`).toBe(true);
    } finally {
      await capped.close();
    }
  });
});

describe('SatchelSession: messages other writers stored (odek, the CLI, the HTTP API)', () => {
  it('an assistant message sent as content parts reaches the model on the next run', async () => {
    await client.create({
      id: 'foreign-assistant-parts',
      task: 't',
      messages: [
        { role: 'user', content: 'What is the code word?' },
        { role: 'assistant', content: [{ type: 'text', text: 'The code word is heliotrope.' }] },
      ],
    });
    const session = new SatchelSession({ client, sessionId: 'foreign-assistant-parts' });
    chat.script({ reply: 'ok' });
    await run(agent, 'Repeat it.', { session });
    const sent = JSON.stringify(chat.requests.at(-1)!.body.messages);
    expect(sent).toContain('heliotrope');
  });

  it('a user message sent as chat-completions parts (text, image_url) does not break the next run', async () => {
    await client.create({
      id: 'foreign-user-parts',
      task: 't',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
          ],
        },
        { role: 'assistant', content: 'A cat.' },
      ],
    });
    const session = new SatchelSession({ client, sessionId: 'foreign-user-parts' });
    chat.script({ reply: 'Yes, a cat.' });
    // Today: the item carries parts of type 'text' / 'image_url' and the SDK throws "Unknown content".
    const result = await run(agent, 'Sure?', { session });
    expect(result.finalOutput).toBe('Yes, a cat.');
  });

  it('popItem on an assistant message with text and two tool calls removes only the item it returns', async () => {
    await client.create({
      id: 'foreign-pop',
      task: 't',
      messages: [
        { role: 'user', content: 'do two things' },
        {
          role: 'assistant',
          content: 'On it.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'b', arguments: '{}' } },
          ],
        },
      ],
    });
    const session = new SatchelSession({ client, sessionId: 'foreign-pop' });
    const before = await session.getItems();
    expect(before).toHaveLength(4); // user, assistant text, function_call c1, function_call c2
    expect(await session.popItem()).toEqual(before.at(-1));
    expect(await session.getItems()).toEqual(before.slice(0, -1));
  });
});

describe("SatchelSession: one response's function calls", () => {
  it('are one stored message; getItems gives them back, popItem takes the last and keeps the rest', async () => {
    const session = new SatchelSession({ client, sessionId: 'grouped-calls' });
    const items: AgentInputItem[] = [
      { role: 'user', content: 'Two cities?' },
      {
        type: 'function_call',
        callId: 'c1',
        name: 'weather',
        arguments: '{"city":"Oslo"}',
        status: 'completed',
      },
      {
        type: 'function_call',
        callId: 'c2',
        name: 'weather',
        arguments: '{"city":"Rome"}',
        status: 'completed',
      },
    ];
    await session.addItems(items);
    const { session: stored } = await client.get('grouped-calls');
    expect(stored.messages).toHaveLength(2);
    expect(stored.messages[1]!.tool_calls!.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(await session.getItems()).toEqual(items);
    expect(await session.getItems(1)).toEqual(items.slice(2));
    expect(await session.popItem()).toEqual(items[2]);
    expect(await session.getItems()).toEqual(items.slice(0, 2));
    const { session: after } = await client.get('grouped-calls');
    expect(after.messages[1]!.tool_calls!.map((c) => c.id)).toEqual(['c1']);
    expect(await session.popItem()).toEqual(items[1]);
    expect(await session.popItem()).toEqual(items[0]);
    expect(await session.popItem()).toBeUndefined();
  });
});

describe('SatchelSession.popItem after a lost answer', () => {
  let proxy: FaultProxy;
  afterAll(() => proxy?.close());
  it('returns the item it removed when the first answer was lost and the client retried', async () => {
    proxy = await startFaultProxy(
      server.url,
      onceFor((r) => r.method === 'POST' && r.path.endsWith('/pop'), { action: 'lose-answer' }),
    );
    const flaky = new SatchelClient({ url: proxy.url, sleep: async () => undefined });
    const session = new SatchelSession({ client: flaky, sessionId: 'pop-lost' });
    await session.addItems([
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
    ]);
    const popped = await session.popItem();
    expect(await session.getItems()).toEqual([{ role: 'user', content: 'one' }]);
    // Today: the retry is answered as a replay with `popped: []`, so popItem says there was nothing.
    expect(popped).toEqual({ role: 'user', content: 'two' });
  });
});
