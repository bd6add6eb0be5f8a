// Review s62e, 1: for an assistant message another writer stored with `reasoning_content` (continue with a
// reasoning model such as DeepSeek or vLLM, odek, an import), the Agents adapter made up a `reasoning`
// item with no `id`. The SDK's default model, OpenAIResponsesModel, sends it as an input item, which the
// Responses API refuses (its reasoning items need an id: they name its own stored or encrypted
// reasoning). Now foreign reasoning stays out of the items; the adapter's own reasoning items (with their
// id and encrypted content) still come back verbatim.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, OpenAIResponsesModel, run, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

setTracingDisabled(true);

type InputItem = { type?: string; id?: string; encrypted_content?: string };

/** A Responses API endpoint that records each request's body and answers the next scripted output. */
async function startResponsesStub(outputs: unknown[][]) {
  const bodies: { input: InputItem[] }[] = [];
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      bodies.push(JSON.parse(data));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `resp_${bodies.length}`,
          object: 'response',
          created_at: 1,
          status: 'completed',
          model: 'gpt-5',
          output: outputs[bodies.length - 1] ?? [],
          usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { url, bodies, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const message = (id: string, text: string) => ({
  type: 'message',
  id,
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

describe('review s62e: the Agents adapter and reasoning another writer stored', () => {
  it('OpenAIResponsesModel sends no reasoning item without an id; its own come back with theirs', async () => {
    const stub = await startResponsesStub([
      [
        {
          type: 'reasoning',
          id: 'rs_own',
          summary: [{ type: 'summary_text', text: 'times 18 this time' }],
          encrypted_content: 'enc-own',
        },
        message('msg_1', '414'),
      ],
      [message('msg_2', 'You are welcome.')],
    ]);
    try {
      const client = new SatchelClient({ url: server.url });
      // What continue stores after turns of a model that answers reasoning_content (lib/continue/turn.ts).
      await client.create({
        id: 'foreign-reasoning',
        task: 'shared session',
        messages: [
          { role: 'user', content: 'What is 17 * 23?' },
          { role: 'assistant', content: '391', reasoning_content: '17*20 + 17*3 = 340 + 51' },
          { role: 'assistant', content: '', reasoning_content: 'nothing more to say' },
        ],
      } as never);
      const session = new SatchelSession({ client, sessionId: 'foreign-reasoning' });
      const openai = new OpenAI({ apiKey: 'sk-test', baseURL: stub.url, maxRetries: 0 });
      const agent = new Agent({ name: 'a', model: new OpenAIResponsesModel(openai, 'gpt-5') });

      // Before the fix: a {type: 'reasoning', summary: […]} input item without an id, and this run's
      // request one the Responses API refuses.
      expect((await run(agent, 'And 18 * 23?', { session })).finalOutput).toBe('414');
      const first = stub.bodies[0]!.input;
      expect(first.filter((i) => i.type === 'reasoning' && !i.id)).toEqual([]);
      expect(JSON.stringify(first)).toContain('391'); // the foreign answer itself is still sent
      expect(JSON.stringify(first)).not.toContain('340 + 51');

      // The run's own reasoning item was stored whole and goes back with its id and encrypted content.
      expect((await run(agent, 'Thanks.', { session })).finalOutput).toBe('You are welcome.');
      const second = stub.bodies[1]!.input;
      expect(second.filter((i) => i.type === 'reasoning' && !i.id)).toEqual([]);
      expect(second.filter((i) => i.type === 'reasoning')).toMatchObject([
        { id: 'rs_own', encrypted_content: 'enc-own' },
      ]);
      // The foreign messages are left as they were stored, reasoning included.
      const stored = (await client.get('foreign-reasoning')).session.messages;
      expect(stored[1]).toMatchObject({
        content: '391',
        reasoning_content: '17*20 + 17*3 = 340 + 51',
      });
    } finally {
      await stub.close();
    }
  });
});
