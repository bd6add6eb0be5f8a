import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small OpenAI-compatible chat server for tests: `POST /chat/completions` answers from a script, one
 * step per request, and records what it received and how many requests overlapped. A step can reply
 * with text or tool calls, fail with a status, hang until the server closes, wait first, or run its own
 * check (through the API, say) before answering. A request with no step left gets a 500.
 */

export interface ScriptedCall {
  name: string;
  /** Object arguments are sent JSON-encoded, as OpenAI does. */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export type Step =
  | { reply: string; toolCalls?: ScriptedCall[]; delayMs?: number }
  | { toolCalls: ScriptedCall[]; delayMs?: number }
  | { status: number; body?: unknown }
  | { hang: true }
  | ((request: ReceivedRequest) => Promise<Step> | Step);

export interface ReceivedRequest {
  body: {
    model: string;
    messages: {
      role: string;
      content: string | null;
      tool_calls?: { id: string; function: { name: string; arguments: string } }[];
      tool_call_id?: string;
    }[];
    tools?: { function: { name: string } }[];
    tool_choice?: string;
  };
  authorization: string | undefined;
}

/** A message as sent, with the reasoning_content a thinking model may be given back. */
export type SentMessage = ReceivedRequest['body']['messages'][number] & {
  reasoning_content?: string;
};

/**
 * DeepSeek's thinking mode as a step: once tools were called, each assistant message must carry reasoning_content
 * ("" will do), else its 400; otherwise a 200 whose message is `answer`.
 */
export const deepseekThinking = (answer: unknown) => (request: ReceivedRequest) => {
  const messages = request.body.messages as SentMessage[];
  const called = messages.some((m) => m.tool_calls?.length);
  const missing = messages.findIndex(
    (m) => m.role === 'assistant' && m.reasoning_content === undefined,
  );
  if (called && missing >= 0)
    return {
      status: 400,
      body: {
        error: {
          message:
            `Missing reasoning_content field in the assistant message at message index ${missing}. For ` +
            'more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls',
        },
      },
    };
  return { status: 200, body: { choices: [{ message: answer }] } };
};

export interface ChatServer {
  /** The base URL to put in SATCHEL_MODEL_URL. */
  url: string;
  requests: ReceivedRequest[];
  /**
   * How long each request took here, from its headers arriving to the last byte of the answer written
   * (performance.now() times, so a caller in the same process can subtract them from its own).
   */
  served: { startedAt: number; ms: number }[];
  /** The most requests that were in flight at once. */
  maxConcurrent: number;
  /** Appends steps to the script. */
  script(...steps: Step[]): void;
  close(): Promise<void>;
}

/** Starts a chat server on 127.0.0.1 at a random port. */
export async function startChatServer(...steps: Step[]): Promise<ChatServer> {
  const queue: Step[] = [...steps];
  let inFlight = 0;
  const state: ChatServer = {
    url: '',
    requests: [],
    served: [],
    maxConcurrent: 0,
    script: (...more) => void queue.push(...more),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const answer = async (
    step: Step,
    request: ReceivedRequest,
    res: ServerResponse,
  ): Promise<void> => {
    if (typeof step === 'function') return answer(await step(request), request, res);
    if ('hang' in step) return new Promise(() => undefined);
    if ('status' in step)
      return send(res, step.status, step.body ?? { error: { message: 'scripted failure' } });
    if (step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
    const calls = (step.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${state.requests.length}_${i}`,
      type: 'function',
      function: {
        name: c.name,
        arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
      },
    }));
    const content = 'reply' in step ? step.reply : null;
    const message = { role: 'assistant', content, ...(calls.length ? { tool_calls: calls } : {}) };
    return send(res, 200, {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      model: request.body.model,
      choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
    });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const startedAt = performance.now();
    res.once('finish', () => state.served.push({ startedAt, ms: performance.now() - startedAt }));
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (req.method !== 'POST' || req.url !== '/chat/completions')
        return send(res, 404, { error: { message: 'not found' } });
      const request: ReceivedRequest = {
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        authorization: req.headers.authorization,
      };
      state.requests.push(request);
      inFlight++;
      state.maxConcurrent = Math.max(state.maxConcurrent, inFlight);
      try {
        const step = queue.shift();
        if (!step) return send(res, 500, { error: { message: 'no scripted reply left' } });
        await answer(step, request, res);
      } catch (err) {
        send(res, 500, { error: { message: `scripted step failed: ${String(err)}` } });
      } finally {
        inFlight--;
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/**
 * A step that answers like OpenAI's chat API: 400 unless every `tool` message answers, by id and once, a
 * call of the assistant message in front of it, and every call is answered right after its message.
 */
export const strictToolMessages =
  (reply: string): Step =>
  (req: ReceivedRequest) => {
    const msgs = req.body.messages;
    const refuse = (message: string) => ({
      status: 400,
      body: { error: { message, type: 'invalid_request_error' } },
    });
    let open = new Set<string>();
    for (const m of msgs) {
      if (m.role === 'tool') {
        if (!m.tool_call_id || !open.delete(m.tool_call_id))
          return refuse(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          );
        continue;
      }
      if (open.size) return refuse('tool_calls must be followed by tool messages');
      open = new Set((m.tool_calls ?? []).map((c) => c.id));
    }
    return { reply };
  };
