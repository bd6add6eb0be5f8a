import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import type { AgentInputItem } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { inChild, startStack, storedText, type Stack } from './stack.js';

setTracingDisabled(true);

// Realistic secrets (not documented examples, which the redactor leaves alone).
const OPENAI_KEY = 'sk-proj-Xq7Lm2Vn9Tz4Wb8Kc3Yd6Hf1Js5Pa0Qe7Rg2Uh4Mi9Nk';
const STRIPE_KEY = 'sk_live_51Hx9Kq2Lm8Vn4Tz7Wb3Nc6Yd1Hf5Js0Pa';

describe('SatchelSession (OpenAI Agents SDK) on radosgw', () => {
  let stack: Stack;
  let agent: Agent;

  beforeAll(async () => {
    stack = await startStack('agents');
    const model = new OpenAIChatCompletionsModel(
      new OpenAI({ baseURL: stack.chat.url, apiKey: 'test-key' }),
      'test-model',
    );
    const weather = tool({
      name: 'weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `sunny in ${city}, 21 °C`,
    });
    agent = new Agent({ name: 'helper', instructions: 'Be brief.', model, tools: [weather] });
  });
  afterAll(() => stack?.close());

  it('stores a multi-turn run with tool calls, image and file parts; a fresh process reads it identical', async () => {
    const session = new SatchelSession({ client: stack.client, sessionId: 'agents-multi-turn' });
    stack.chat.script(
      { toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
      { reply: 'It is sunny in Oslo.' },
    );
    const before = stack.requests.length;
    const first = await run(agent, 'What is the weather in Oslo?', { session });
    expect(first.finalOutput).toBe('It is sunny in Oslo.');
    // A new session: one read, one create, one append for a run of two model steps.
    expect(stack.requests.slice(before)).toEqual([
      'GET /v1/sessions/agents-multi-turn',
      'POST /v1/sessions',
      'POST /v1/sessions/agents-multi-turn/messages',
    ]);

    // The model saw the first turn again: history came back from Satchel.
    stack.chat.script({ reply: 'A cat on a PDF.' });
    const mark = stack.requests.length;
    const turn2: AgentInputItem[] = [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in these?' },
          { type: 'input_image', image: 'https://example.com/cat.png', detail: 'high' },
          { type: 'input_image', image: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==' },
          {
            type: 'input_file',
            file: 'data:application/pdf;base64,JVBERi0xLjQK',
            filename: 'r.pdf',
          },
        ],
      },
    ];
    const second = await run(agent, turn2, { session });
    expect(second.finalOutput).toBe('A cat on a PDF.');
    expect(stack.requests.slice(mark)).toEqual([
      'GET /v1/sessions/agents-multi-turn',
      'POST /v1/sessions/agents-multi-turn/messages',
    ]);
    const sent = stack.chat.requests.at(-1)!.body.messages;
    expect(sent.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);

    const here = await session.getItems();
    expect(here.map((i) => ('type' in i && i.type) || 'message')).toEqual([
      'message',
      'function_call',
      'function_call_result',
      'message',
      'message',
      'message',
    ]);
    expect(here[4]).toEqual(turn2[0]);
    const fresh = await inChild<AgentInputItem[]>(
      'agents-items',
      stack.server.url,
      'agents-multi-turn',
    );
    expect(fresh).toEqual(here);
    expect(await session.getItems(2)).toEqual(here.slice(-2));

    // Stored as odek messages: roles, tool calls and string content odek reads.
    const stored = (await stack.client.get('agents-multi-turn')).session;
    expect(stored.messages[1]!.tool_calls![0]!.function.name).toBe('weather');
    expect(stored.messages[2]).toMatchObject({ role: 'tool', content: 'sunny in Oslo, 21 °C' });
    expect(stored.metadata).toMatchObject({ framework: 'openai-agents' });
  });

  it('pops the newest item and clears the session, keeping its task', async () => {
    const session = new SatchelSession({
      client: stack.client,
      sessionId: 'agents-pop',
      task: 'pop and clear',
    });
    const items: AgentInputItem[] = [
      { role: 'user', content: 'one' },
      {
        type: 'reasoning',
        content: [{ type: 'input_text', text: 'thinking about two' }],
        providerData: { encrypted: 'opaque' },
      },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'two' }] },
    ];
    await session.addItems(items);
    expect(await session.popItem()).toEqual(items[2]);
    expect(await session.getItems()).toEqual(items.slice(0, 2));
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
    expect((await stack.client.get('agents-pop')).session.task).toBe('pop and clear');
  });

  it(
    '8 processes adding items to one session at once lose nothing',
    { timeout: 300_000 },
    async () => {
      const writers = 8;
      const calls = 5;
      await Promise.all(
        Array.from({ length: writers }, (_, w) =>
          inChild('agents-add', stack.server.url, 'agents-concurrent', String(w), String(calls)),
        ),
      );
      const items = await new SatchelSession({
        client: stack.client,
        sessionId: 'agents-concurrent',
      }).getItems();
      expect(items).toHaveLength(writers * calls * 2);
      const texts = new Set(
        items.flatMap((i) => ('role' in i && i.role === 'user' ? [i.content as string] : [])),
      );
      for (let w = 0; w < writers; w++)
        for (let c = 0; c < calls; c++) expect(texts.has(`writer ${w} call ${c}`)).toBe(true);
      // Each call's two items stay together, in order.
      items.forEach((item, n) => {
        if (n % 2 === 1) expect(item).toMatchObject({ type: 'function_call' });
      });
    },
  );

  it('secrets inside parts, tool arguments and tool output never reach storage', async () => {
    const session = new SatchelSession({ client: stack.client, sessionId: 'agents-secrets' });
    await session.addItems([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: `the key is ${OPENAI_KEY}` },
          { type: 'input_image', image: `https://example.com/x.png?k=${OPENAI_KEY}` },
        ],
      },
      {
        type: 'function_call',
        callId: 'call-s',
        name: 'charge',
        arguments: JSON.stringify({ api_key: STRIPE_KEY }),
      },
      {
        type: 'function_call_result',
        callId: 'call-s',
        name: 'charge',
        status: 'completed',
        output: { type: 'text', text: `used ${STRIPE_KEY}` },
      },
    ]);
    const text = await storedText(stack.objects);
    expect(text).toContain('agents-secrets');
    expect(text).not.toContain(OPENAI_KEY);
    expect(text).not.toContain(STRIPE_KEY);
    const items = JSON.stringify(await session.getItems());
    expect(items).toContain('[REDACTED]');
    expect(items).not.toContain(OPENAI_KEY);
  });
});
