import { expect, it } from 'vitest';
import { chatClient } from '../../lib/continue/model.js';

// Review s66q: 61bed38 read a JSON error answer's ask for reasoning_content only in error.message, error.metadata.raw,
// message and a string detail: gateways' other shapes (Vertex's array, a string `error`, Cloudflare's `errors`, a
// JSON string) were missed, and every continue through them after a tool call answered 502. The answer is now read
// whole without its echoes of the request (`input`, `messages`, `content`).
// Does a 400 answer of a given shape make chatClient send the round again with reasoning_content?
// The second answer is a 200 so a retried round succeeds; without a retry the call throws.
async function retried(body: string): Promise<{ requests: number; ok: boolean }> {
  let requests = 0;
  const fetchFn = (async (_url: string, init: RequestInit) => {
    requests++;
    const sent = JSON.parse(String(init.body));
    const padded = sent.messages.some(
      (m: { reasoning_content?: string }) => 'reasoning_content' in m,
    );
    if (!padded)
      return new Response(body, { status: 400, headers: { 'content-type': 'application/json' } });
    return new Response(
      JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'ok' } }] }),
      { status: 200 },
    );
  }) as unknown as typeof fetch;
  const chat = chatClient({ url: 'http://model.test/v1' }, fetchFn);
  const messages = [
    { role: 'user', content: 'q' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'c', type: 'function', function: { name: 'session_search', arguments: '{}' } },
      ],
    },
    { role: 'tool', content: '{}', tool_call_id: 'c' },
  ];
  try {
    await chat({ model: 'm', messages } as never, new AbortController().signal, [
      undefined,
      'r',
      undefined,
    ]);
    return { requests, ok: true };
  } catch {
    return { requests, ok: false };
  }
}

const DS = 'The `reasoning_content` in the thinking mode must be passed back to the API.';
const KIMI =
  'thinking is enabled but reasoning_content is missing in assistant tool call message at index 1';
const shapes: [string, string][] = [
  [
    'control: DeepSeek direct {error:{message}}',
    JSON.stringify({ error: { message: DS, type: 'invalid_request_error' } }),
  ],
  [
    'control: OpenRouter metadata.raw string',
    JSON.stringify({
      error: {
        code: 400,
        message: 'Provider returned error',
        metadata: { provider_name: 'DeepSeek', raw: JSON.stringify({ error: { message: DS } }) },
      },
    }),
  ],
  [
    'control: SiliconFlow {code,message,data}',
    JSON.stringify({ code: 20015, message: KIMI, data: null }),
  ],
  [
    'Google/Vertex openai-compat array [{error:{message}}]',
    JSON.stringify([{ error: { code: 400, message: DS, status: 'INVALID_ARGUMENT' } }]),
  ],
  ['{error: "<string>"} (TGI, LM Studio, small proxies)', JSON.stringify({ error: KIMI })],
  [
    'ClawRouter {error, details}',
    JSON.stringify({ error: 'Internal server error', details: `400 ${KIMI}` }),
  ],
  [
    'OpenRouter metadata.raw as an object',
    JSON.stringify({
      error: {
        code: 400,
        message: 'Provider returned error',
        metadata: { provider_name: 'DeepSeek', raw: { error: { message: DS } } },
      },
    }),
  ],
  [
    'Cloudflare {errors:[{message}]}',
    JSON.stringify({ success: false, errors: [{ code: 5006, message: DS }], result: null }),
  ],
  ['JSON string body', JSON.stringify(DS)],
  ['FastAPI detail object {detail:{message}}', JSON.stringify({ detail: { message: DS } })],
  ['plain text (non-JSON) control', `Bad Request: ${DS}`],
];

it('which error shapes asking for reasoning_content are recognised', async () => {
  const rows: string[] = [];
  for (const [name, body] of shapes) {
    const r = await retried(body);
    rows.push(`${r.ok ? 'RETRIED ' : 'MISSED  '} requests=${r.requests}  ${name}`);
  }
  expect(rows.filter((r) => r.startsWith('MISSED'))).toEqual([]);
});
