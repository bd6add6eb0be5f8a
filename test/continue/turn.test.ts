import { describe, expect, it } from 'vitest';
import {
  ModelError,
  parseCompletion,
  toChatMessage,
  type ChatFn,
  type ChatReply,
  type ChatRequest,
} from '../../lib/continue/model.js';
import { MAX_ROUNDS, runTool, runTurn, type SessionSearchInput } from '../../lib/continue/turn.js';
import type { Message } from '../../lib/model/session.js';

const context: Message[] = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'what did we decide about the cache?' },
];

/** A chat function answering from a list, recording every request. */
function scripted(...replies: ChatReply[]) {
  const requests: ChatRequest[] = [];
  const chat: ChatFn = async (request) => {
    requests.push(structuredClone(request));
    const next = replies.shift();
    if (!next) throw new ModelError('status', 'no reply left', 500);
    return next;
  };
  return { chat, requests };
}

const text = (content: string): ChatReply => ({ content, tool_calls: [] });
const calls = (...list: [string, string, string][]): ChatReply => ({
  content: '',
  tool_calls: list.map(([id, name, args]) => ({
    id,
    type: 'function',
    function: { name, arguments: args },
  })),
});

function searchRecorder() {
  const seen: [string, SessionSearchInput][] = [];
  const search = async (ns: string, input: SessionSearchInput) => {
    seen.push([ns, input]);
    return { results: [{ id: 's1', snippet: `about ${input.query ?? input.action}` }] };
  };
  return { search, seen };
}

const signal = () => new AbortController().signal;

describe('runTurn', () => {
  it('one round: the answer alone; the tool is offered with auto choice', async () => {
    const { chat, requests } = scripted(text('LRU, 256 MiB.'));
    const { search } = searchRecorder();
    const out = await runTurn(context, {
      chat,
      model: 'm1',
      ns: 'alice',
      search,
      signal: signal(),
    });
    expect(out).toEqual({
      messages: [{ role: 'assistant', content: 'LRU, 256 MiB.' }],
      reply: 'LRU, 256 MiB.',
      rounds: 1,
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.model).toBe('m1');
    expect(requests[0]!.messages).toEqual(context.map(toChatMessage));
    expect(
      requests[0]!.tools.map((t) => (t as { function: { name: string } }).function.name),
    ).toEqual(['session_search']);
    expect(requests[0]!.tool_choice).toBeUndefined();
  });

  it('tool calls run in the namespace, results go back in order, then the answer', async () => {
    const { chat, requests } = scripted(
      calls(
        ['c1', 'session_search', '{"action":"search","query":"cache"}'],
        ['c2', 'session_search', '{"action":"list","limit":3}'],
      ),
      text('We chose LRU.'),
    );
    const { search, seen } = searchRecorder();
    const out = await runTurn(context, {
      chat,
      model: 'm1',
      ns: 'alice',
      search,
      signal: signal(),
    });
    expect(seen).toEqual([
      ['alice', { action: 'search', query: 'cache' }],
      ['alice', { action: 'list', limit: 3 }],
    ]);
    expect(out.rounds).toBe(2);
    expect(out.reply).toBe('We chose LRU.');
    expect(out.messages.map((m) => [m.role, m.tool_call_id ?? null])).toEqual([
      ['assistant', null],
      ['tool', 'c1'],
      ['tool', 'c2'],
      ['assistant', null],
    ]);
    expect(JSON.parse(out.messages[1]!.content)).toEqual({
      results: [{ id: 's1', snippet: 'about cache' }],
    });
    // The second round carries the call and both results after the context.
    const second = requests[1]!.messages;
    expect(second.slice(0, 2)).toEqual(context.map(toChatMessage));
    expect(second[2]).toMatchObject({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1' }, { id: 'c2' }],
    });
    expect(second.slice(3).map((m) => m.tool_call_id)).toEqual(['c1', 'c2']);
  });

  it('a tool result the context budget cannot hold is an error asking for less (review s50f)', async () => {
    // A `get` of a session with long messages was sent whole: every later round's request was far over
    // SATCHEL_MODEL_CONTEXT_BYTES, too large for the model.
    const { chat, requests } = scripted(
      calls(['c1', 'session_search', '{"action":"get","id":"big"}']),
      calls(['c2', 'session_search', '{"action":"list","limit":3}']),
      text('Done.'),
    );
    const big = { messages: [{ role: 'user', content: 'x'.repeat(50_000) }] };
    const out = await runTurn(context, {
      chat,
      model: 'm1',
      ns: 'alice',
      search: async (_ns, args) => (args.action === 'get' ? big : { results: [] }),
      signal: signal(),
      contextBytes: 8192,
    });
    const [first, second] = out.messages.filter((m) => m.role === 'tool');
    expect(JSON.parse(first!.content).error).toMatch(/more than this turn's context can hold/);
    expect(JSON.parse(second!.content)).toEqual({ results: [] }); // a small result goes whole
    const sizes = requests.map((r) => JSON.stringify(r.messages).length);
    expect(Math.max(...sizes)).toBeLessThan(8192);
  });

  it('unknown tools and bad arguments become error results; the loop goes on', async () => {
    const { chat } = scripted(
      calls(
        ['c1', 'shell', '{"cmd":"ls"}'],
        ['c2', 'session_search', 'not json'],
        ['c3', 'session_search', '{"query":"x"}'],
      ),
      text('done'),
    );
    const { search, seen } = searchRecorder();
    const out = await runTurn(context, { chat, model: 'm', ns: 'alice', search, signal: signal() });
    expect(seen).toEqual([]);
    const errors = out.messages
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(m.content).error as string);
    expect(errors[0]).toMatch(/unknown tool "shell"/);
    expect(errors[1]).toMatch(/not valid JSON/);
    expect(errors[2]).toMatch(/action/);
  });

  it("a search runs with the request's schedule (waitUntil on Workers), so its index upkeep is kept alive", async () => {
    const { chat } = scripted(calls(['c1', 'session_search', '{"action":"list"}']), text('done'));
    const given: unknown[] = [];
    const schedule = (work: Promise<unknown>) => void work;
    await runTurn(context, {
      chat,
      model: 'm',
      ns: 'alice',
      search: async (_ns, _input, s) => {
        given.push(s);
        return { sessions: [] };
      },
      schedule,
      signal: signal(),
    });
    expect(given).toEqual([schedule]);
  });

  it('a search that throws is an error result, not a failed turn', async () => {
    const { chat } = scripted(calls(['c1', 'session_search', '{"action":"list"}']), text('sorry'));
    const out = await runTurn(context, {
      chat,
      model: 'm',
      ns: 'alice',
      search: async () => {
        throw new Error('storage down at s3://secret-bucket');
      },
      signal: signal(),
    });
    expect(JSON.parse(out.messages[1]!.content)).toEqual({
      error: 'session_search failed; try again later',
    });
    expect(out.reply).toBe('sorry');
  });

  it(`at most ${MAX_ROUNDS} rounds; the last one forbids tools; still calling tools then is a model error`, async () => {
    const loop = Array.from({ length: MAX_ROUNDS }, (_, i) =>
      calls([`c${i}`, 'session_search', '{"action":"list"}']),
    );
    const { chat, requests } = scripted(...loop);
    const { search } = searchRecorder();
    const err = await runTurn(context, {
      chat,
      model: 'm',
      ns: 'alice',
      search,
      signal: signal(),
    }).catch((e: unknown) => e);
    expect(ModelError.is(err)).toBe(true);
    expect(requests).toHaveLength(MAX_ROUNDS);
    expect(requests.map((r) => r.tool_choice ?? 'auto')).toEqual([
      ...Array(MAX_ROUNDS - 1).fill('auto'),
      'none',
    ]);
  });

  it('answering on the last round is fine', async () => {
    const { chat } = scripted(calls(['c1', 'session_search', '{"action":"list"}']), text('ok'));
    const { search } = searchRecorder();
    const out = await runTurn(context, {
      chat,
      model: 'm',
      ns: 'alice',
      search,
      signal: signal(),
      maxRounds: 2,
    });
    expect(out.rounds).toBe(2);
  });

  it('a model error propagates and nothing is returned', async () => {
    const { chat } = scripted();
    const { search } = searchRecorder();
    await expect(
      runTurn(context, { chat, model: 'm', ns: 'alice', search, signal: signal() }),
    ).rejects.toMatchObject({ kind: 'status' });
  });
});

describe('runTool', () => {
  it('passes validated input through; extra fields a model adds are kept', async () => {
    const { search, seen } = searchRecorder();
    await runTool(
      {
        id: 'c',
        type: 'function',
        function: {
          name: 'session_search',
          arguments: '{"action":"get","id":"x","why":"because"}',
        },
      },
      { ns: 'n', search },
    );
    expect(seen).toEqual([['n', { action: 'get', id: 'x', why: 'because' }]]);
  });
  it('empty arguments are an empty object (no action: an error result)', async () => {
    const { search } = searchRecorder();
    const out = await runTool(
      { id: 'c', type: 'function', function: { name: 'session_search', arguments: '' } },
      { ns: 'n', search },
    );
    expect(out.error).toMatch(/action/);
  });
  it('a refused field is named, with why (review s68g: `"limit": "5"` read only as the usage)', async () => {
    const { search, seen } = searchRecorder();
    const out = await runTool(
      {
        id: 'c',
        type: 'function',
        function: {
          name: 'session_search',
          arguments: '{"action":"search","query":"x","limit":"5"}',
        },
      },
      { ns: 'n', search },
    );
    expect(out.error).toMatch(/; limit: .*number/);
    expect(seen).toEqual([]);
  });
});

describe('parseCompletion', () => {
  it('reads a refusal, and text sent as parts (review s50f: both became an empty reply)', () => {
    const of = (message: object) =>
      parseCompletion(JSON.stringify({ choices: [{ message }] })).content;
    expect(of({ role: 'assistant', content: null, refusal: 'I cannot help with that.' })).toBe(
      'I cannot help with that.',
    );
    expect(
      of({
        role: 'assistant',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
      }),
    ).toBe('first\nsecond');
    expect(of({ role: 'assistant', content: 'plain', refusal: null })).toBe('plain');
  });

  it('reads text, tool calls (object arguments re-encoded, missing ids made up) and reasoning', () => {
    const reply = parseCompletion(
      JSON.stringify({
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              reasoning_content: 'thinking',
              tool_calls: [
                {
                  id: 'c1',
                  type: 'function',
                  function: { name: 'session_search', arguments: '{"action":"list"}' },
                },
                {
                  type: 'function',
                  function: { name: 'session_search', arguments: { action: 'find', query: 'q' } },
                },
              ],
            },
          },
        ],
      }),
    );
    expect(reply.content).toBe('');
    expect(reply.reasoning_content).toBe('thinking');
    expect(reply.tool_calls[0]).toEqual({
      id: 'c1',
      type: 'function',
      function: { name: 'session_search', arguments: '{"action":"list"}' },
    });
    expect(reply.tool_calls[1]!.id).toMatch(/^call_[0-9a-f]{16}$/);
    expect(JSON.parse(reply.tool_calls[1]!.function.arguments)).toEqual({
      action: 'find',
      query: 'q',
    });
  });
  for (const [name, body] of [
    ['not JSON', '<html>'],
    ['no choices', '{}'],
    ['null', 'null'],
    [
      'a tool call without a name',
      '{"choices":[{"message":{"tool_calls":[{"id":"x","function":{}}]}}]}',
    ],
  ] as const) {
    it(`${name} is ModelError invalid`, () => {
      expect(() => parseCompletion(body)).toThrow(expect.objectContaining({ kind: 'invalid' }));
    });
  }
});

describe('toChatMessage', () => {
  it('keeps what the API takes and drops the rest', () => {
    const stored = {
      role: 'assistant' as const,
      content: '',
      reasoning_content: 'hmm',
      odek_extra: 1,
      tool_calls: [
        {
          id: 'c',
          type: 'function',
          function: { name: 'session_search', arguments: '{}' },
          extra: true,
        },
      ],
    };
    // Reasoning goes only to a model that asks for it (chatClient; Groq and Mistral refuse the field).
    expect(toChatMessage(stored)).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c', type: 'function', function: { name: 'session_search', arguments: '{}' } },
      ],
    });
    expect(toChatMessage({ role: 'tool', content: '{"a":1}', tool_call_id: 'c' })).toEqual({
      role: 'tool',
      content: '{"a":1}',
      tool_call_id: 'c',
    });
  });
});
