// Adapter defects found by review s50d: a function call's arguments stored a second time as plain text (a
// secret under a key the JSON redaction catches stayed in clear there), a task cut inside an emoji (every
// save of that chat refused), and popItem after a message with no item or in another writer's message.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { SatchelClient } from '../../lib/client/index.js';
import { makeApp, TOKENS } from '../http/helpers.js';

async function setup() {
  const app = await makeApp();
  const client = new SatchelClient({
    url: 'http://localhost',
    token: TOKENS.laptop,
    fetch: (input, init) => app.app.fetch(new Request(input as string, init)) as Promise<Response>,
    retry: { retries: 0 },
  });
  return { app, client };
}

function holders(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const f = join(d, n);
      if (statSync(f).isDirectory()) walk(f);
      else if (readFileSync(f, 'utf8').includes(needle)) out.push(f.slice(dir.length));
    }
  };
  walk(dir);
  return out;
}

const call = (id: string, name: string) => ({
  id,
  type: 'function',
  function: { name, arguments: '{}' },
});

describe('openai-agents', () => {
  it('keeps a function call’s arguments once, in its tool call, where their secrets are redacted', async () => {
    const { app, client } = await setup();
    const session = new SatchelSession({ client, sessionId: 'agents-arg-secret' });
    const args = JSON.stringify({ target: 'prod', api_key: 'qq77zz9a', password: 918273645 });
    await session.addItems([
      { role: 'user', content: 'deploy with my key' },
      { type: 'function_call', callId: 'call_1', name: 'deploy', arguments: args },
      { type: 'function_call', callId: 'call_2', name: 'deploy', arguments: args },
      { type: 'function_call', callId: 'call_3', name: 'deploy', arguments: args },
    ]);
    await app.background.drain();
    const stored = JSON.stringify((await client.get('agents-arg-secret')).session);
    expect(stored).toContain('\\"api_key\\":\\"[REDACTED]\\"');
    for (const secret of ['qq77zz9a', '918273645']) {
      expect(stored).not.toContain(secret);
      expect(holders(app.dir, secret)).toEqual([]);
    }
    // The items come back with their (redacted) arguments, in order.
    const items = (await session.getItems()) as { callId?: string; arguments?: string }[];
    expect(items.slice(1).map((i) => [i.callId, JSON.parse(i.arguments!).api_key])).toEqual([
      ['call_1', '[REDACTED]'],
      ['call_2', '[REDACTED]'],
      ['call_3', '[REDACTED]'],
    ]);
  });

  it('popItem returns the newest item, not undefined, after a message with no item (which stays)', async () => {
    const { client } = await setup();
    await client.create({
      id: 'pop-empty',
      task: 't',
      messages: [
        { role: 'user', content: 'weather in Oslo?' },
        { role: 'assistant', content: '' }, // an empty reply another writer stored
      ],
    });
    const session = new SatchelSession({ client, sessionId: 'pop-empty' });
    const before = await session.getItems();
    expect(before).toHaveLength(1);
    expect(await session.popItem()).toEqual(before[0]);
    expect(await session.getItems()).toEqual([]);
    const { messages } = (await client.get('pop-empty')).session;
    expect(messages.map((m) => [m.role, m.content])).toEqual([['assistant', '']]);
    expect(await session.popItem()).toBeUndefined(); // no item left
  });

  it("popItem of one tool call keeps the rest of another writer's message as it was", async () => {
    const { client } = await setup();
    await client.create({
      id: 'pop-foreign',
      task: 't',
      messages: [
        { role: 'user', content: 'check both' },
        {
          role: 'assistant',
          content: 'let me look',
          reasoning_content: 'two lookups',
          tool_calls: [call('x1', 'a'), call('x2', 'b')],
          extra_field: 'kept by odek',
        } as never,
      ],
    });
    const session = new SatchelSession({ client, sessionId: 'pop-foreign' });
    expect(await session.popItem()).toMatchObject({ type: 'function_call', callId: 'x2' });
    const { messages } = (await client.get('pop-foreign')).session;
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({
      content: 'let me look',
      reasoning_content: 'two lookups',
      tool_calls: [call('x1', 'a')],
      extra_field: 'kept by odek',
    });
    // Then the text: its message goes whole, reasoning and all (another writer's reasoning is no item:
    // review s62e); then the user message.
    expect(await session.popItem()).toMatchObject({ type: 'function_call', callId: 'x1' });
    expect(await session.popItem()).toMatchObject({ role: 'assistant' });
    expect((await client.get('pop-foreign')).session.messages).toHaveLength(1);
    expect(await session.popItem()).toMatchObject({ role: 'user' });
    expect(await session.getItems()).toEqual([]);
  });
});

describe('ai-sdk', () => {
  it('saves a chat whose first user message has an emoji at character 200 (the task is cut on characters)', async () => {
    const { client } = await setup();
    const text = 'x'.repeat(199) + '😀 and the rest of a long first question';
    const messages: UIMessage[] = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'hello' }] },
    ];
    await expect(saveUIMessages(client, 'emoji-task', messages, { known: [] })).resolves.toEqual({
      appended: 2,
    });
    expect(await loadUIMessages(client, 'emoji-task')).toEqual(messages);
    expect((await client.get('emoji-task')).session.task).toBe('x'.repeat(199) + '😀');
  });
});
