import { randomHex } from '../model/ids.js';
import type { Message } from '../model/session.js';
import { textOfParts, type ContentPart } from '../model/parts.js';

/** An OpenAI-compatible chat endpoint for continue. The key is sent to `url` only and never logged. */
export interface ModelConfig {
  /**
   * `SATCHEL_MODEL_URL` without a trailing slash; a turn posts to `{url}/chat/completions`, followed by the
   * URL's query when it has one.
   */
  url: string;
  /** `SATCHEL_MODEL`: the model for sessions that name none. */
  model: string;
  /** `SATCHEL_MODEL_KEY`: the bearer key, if the endpoint needs one. */
  key?: string;
  /** `SATCHEL_MODEL_PROVIDER`: the provider stored on sessions that name none (default: the URL's host). */
  provider: string;
  /** `SATCHEL_MODEL_TIMEOUT_MS`: how long one turn (every round of it) may take, default 120 s. */
  timeoutMs: number;
  /** `SATCHEL_MODEL_CONTEXT_BYTES`: the serialised messages sent to the model, at most (default 256 KiB). */
  contextBytes: number;
  /** `SATCHEL_CONTINUE_WAIT_MS`: how long a continue waits for another turn on its session, default 5 s. */
  waitMs: number;
}

/**
 * The continue model's client: one OpenAI-compatible `POST {url}/chat/completions` call per round, with
 * fetch. Every failure (network, HTTP status, timeout, a reply that is not a chat completion) is a
 * `ModelError`; its message names the failure kind and the HTTP status, never the key or the response
 * body (providers echo parts of a bad key in their errors): an error's own message is only logged.
 */

/** A tool call as the model sends it and as it is stored (odek's format). */
export type ToolCall = {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
};

/** One message as sent to the model: the stored message without Satchel's or odek's extra fields. */
export interface ChatMessage {
  role: Message['role'];
  content: string | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  /** An assistant message's reasoning: sent only to a model that asks for it (chatClient). */
  reasoning_content?: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools: readonly unknown[];
  /** `none` on the last allowed round, so the model has to answer in text; absent (auto) otherwise. */
  tool_choice?: 'none';
}

/** The assistant message of a completion. */
export interface ChatReply {
  content: string;
  tool_calls: ToolCall[];
  reasoning_content?: string;
}

/** One round: a chat completion, cancelled by `signal`. */
/** `reasoning`: by index, the reasoning_content to send a model that asks for it ("" where none; runTurn bounds it). */
export type ChatFn = (
  request: ChatRequest,
  signal: AbortSignal,
  reasoning?: (string | undefined)[],
) => Promise<ChatReply>;

export type ModelFailure = 'timeout' | 'network' | 'status' | 'invalid';

const MODEL_ERROR = Symbol.for('satchel.model-error');

/** The model could not produce a reply: it timed out, was unreachable, answered an error or nonsense. */
export class ModelError extends Error {
  readonly [MODEL_ERROR] = true;
  constructor(
    readonly kind: ModelFailure,
    message: string,
    readonly status?: number,
    /** An error answer's body, for the log only: its first 200 characters, without the key. */
    readonly said?: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
  /** True for a ModelError from any bundle. */
  static is(err: unknown): err is ModelError {
    return (err as Record<symbol, unknown> | undefined)?.[MODEL_ERROR] === true;
  }
}

/**
 * The most bytes a model's answer is read to: a chat completion is a few KiB to a few hundred (a reply of
 * 128k tokens is about 512 KiB); a longer body is a broken or hostile endpoint, answered as an invalid
 * answer (502) before it fills the memory (a Worker has 128 MB).
 */
export const MODEL_ANSWER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A model's error asking for reasoning_content (DeepSeek: "Missing reasoning_content field…", "The reasoning_content
 * in the thinking mode must be passed back"; Kimi: "…reasoning_content is missing…"), not one quoting the user's
 * text that names the field (review s65i).
 */
const ASKS_REASONING =
  /(missing|required|must)[^"]{0,40}reasoning_content|reasoning_content[^"]{0,40}(missing|required|must)/i;

/**
 * Whether an error answer asks for reasoning_content: a JSON answer read without its echoes of the request
 * (`input`, `input_value`, `messages`, `content` members), any other answer whole. Cutting each message's text
 * out of the answer was quadratic (41 s at 1 MiB of context) and a pasted sentence of DeepSeek's hid its ask
 * (review s66l); reading only `error.message` and the like missed gateways' shapes (`[{error}]`, a string
 * `error`, `errors: [...]`: review s66q).
 */
const asksReasoning = (text = '') => {
  try {
    text = JSON.stringify(JSON.parse(text), (k, v) =>
      /^(input(_value)?|messages|content)$/.test(k) ? undefined : v,
    );
  } catch {}
  return ASKS_REASONING.test(text);
};

/**
 * A chat function for the endpoint at `url` (its query kept after the path), with an optional bearer key.
 * An answer over `maxAnswerBytes` is a ModelError('invalid'). A round offering tools that the model
 * refuses with a 4xx whose body names tools (vLLM without --enable-auto-tool-choice, an Ollama model
 * without tool support) runs once more without them. Nothing is remembered: a one-off refusal (Groq's
 * `tool_use_failed`) took session_search away for good until review s64j; each round asks again.
 */
export function chatClient(
  endpoint: { url: string; key?: string },
  fetchFn: typeof fetch = fetch,
  maxAnswerBytes = MODEL_ANSWER_MAX_BYTES,
): ChatFn {
  // `{url}/chat/completions`, with the URL's query (Azure OpenAI's `?api-version=`) after that path.
  const target = new URL(endpoint.url);
  target.pathname = `${target.pathname.replace(/\/+$/, '')}/chat/completions`;
  // A request as sent: without tools when the model refused them.
  const chat = async (
    request: Omit<ChatRequest, 'tools'> & { tools?: ChatRequest['tools'] },
    signal: AbortSignal,
    reasoning?: (string | undefined)[],
  ): Promise<ChatReply> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (endpoint.key) headers.authorization = `Bearer ${endpoint.key}`;
    let text: string | undefined;
    let status: number;
    try {
      const res = await fetchFn(target.href, {
        method: 'POST',
        headers,
        body: JSON.stringify(request),
        signal,
      });
      status = res.status;
      // An error's body is read for the log (see above), for 2 s at most: one that stalls held the turn
      // (and the session's lease) to its deadline, answered as a timeout (review s65b).
      text = await readAtMost(res, maxAnswerBytes, status < 200 || status > 299 ? 2000 : 0);
    } catch (err) {
      if (signal.aborted) throw new ModelError('timeout', 'the model did not answer in time');
      throw new ModelError(
        'network',
        `the model endpoint could not be reached (${err instanceof Error ? err.name : 'error'})`,
      );
    }
    if (status < 200 || status > 299) {
      // The model's own message, for the log: the key cut out first (one without a key's shape escapes
      // the log's redactor, and one cut in two at 200 characters would too). `split(undefined)`: all.
      const said = text?.split(endpoint.key!).join('').slice(0, 200);
      // A 4xx naming tools (no body: tests "undefined", no match), to a request that offered them; not a
      // 429 (a rate limit: asking again at once only adds to it). JSON leaves the undefined members out
      // (OpenAI refuses a tool_choice without tools).
      // A 4xx asking for reasoning_content (DeepSeek's thinking mode wants every assistant message's back once
      // tools were called; Groq and Mistral refuse the field, so it goes only when asked: review s65h): the
      // round again with each one's, "" where none is given. The whole answer is read for it: a gateway's
      // prefix may push the model's words past `said`'s 200 characters (review s65j).
      if (reasoning && status < 429 && asksReasoning(text))
        return chat(
          {
            ...request,
            messages: request.messages.map((m, i) =>
              m.role === 'assistant' ? { ...m, reasoning_content: reasoning[i] ?? '' } : m,
            ),
          },
          signal,
        );
      if (request.tools && status < 429 && /tool/i.test(said!))
        return chat({ ...request, tools: undefined, tool_choice: undefined }, signal, reasoning);
      // A 404 is most often SATCHEL_MODEL_URL's path (not the model being away): the path it went to.
      const at = status === 404 ? ` for POST ${target.pathname}: check SATCHEL_MODEL_URL` : '';
      throw new ModelError(
        'status',
        `the model endpoint answered HTTP ${status}${at}`,
        status,
        said,
      );
    }
    if (text === undefined)
      throw new ModelError(
        'invalid',
        `the model endpoint answered more than ${maxAnswerBytes} bytes`,
      );
    return parseCompletion(text);
  };
  return chat;
}

/**
 * A response's body as UTF-8 text, read to `limit` bytes at most: undefined (and cancelled) past it. With
 * `ms`, what came within `ms` (the body cancelled then).
 */
async function readAtMost(res: Response, limit: number, ms = 0): Promise<string | undefined> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > limit || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    return res.body ? undefined : '';
  }
  const reader = res.body.getReader();
  // Cancelling ends a pending read as done.
  const timer = ms && setTimeout(() => reader.cancel().catch(() => undefined), ms);
  const decoder = new TextDecoder();
  let read = 0;
  let out = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return out + decoder.decode();
      read += value.byteLength;
      if (read > limit) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
      out += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The assistant message of a chat completion body; ModelError('invalid') when it is not one. */
export function parseCompletion(text: string): ChatReply {
  let body: unknown;
  try {
    // Half an emoji's pair (`"\ud83d"`, a reply cut mid-character) becomes U+FFFD: it has no UTF-8 form.
    body = JSON.parse(text, (_k, v: unknown) => (typeof v === 'string' ? v.toWellFormed() : v));
  } catch {
    throw new ModelError('invalid', 'the model endpoint answered with something that is not JSON');
  }
  const message = (body as { choices?: { message?: unknown }[] } | null)?.choices?.[0]?.message as
    Record<string, unknown> | undefined;
  if (!message || typeof message !== 'object')
    throw new ModelError('invalid', 'the model answered without a message');
  // Text as a string, or as parts (some providers answer `[{type: "text", text}]`); an OpenAI refusal
  // (`content: null, refusal: "…"`) is the reply's text too. Until 2026-12-05 both became an empty reply.
  const parts = Array.isArray(message.content) ? (message.content as ContentPart[]) : undefined;
  // A part that is not an object (`[null]`) is no chat completion: until 2026-12-06 it threw a TypeError,
  // answered as a 500 after the continue's message was stored (review s55b).
  if (parts?.some((p) => typeof p !== 'object' || !p))
    throw new ModelError('invalid', 'the model answered a part that is not an object');
  // Content that is neither text, parts nor absent (`{text}`, `42`), or tool calls that are not a list, is
  // no chat completion: until 2026-12-06 it became an empty reply, stored and answered 200 (review s58i).
  const content0 = message.content;
  if (content0 != null && typeof content0 !== 'string' && !parts)
    throw new ModelError('invalid', 'the model answered content that is neither text nor parts');
  if (message.tool_calls != null && !Array.isArray(message.tool_calls))
    throw new ModelError('invalid', 'the model answered tool calls that are not a list');
  // Past the checks above: text, parts or absent; a list of calls or absent.
  const said = parts ? textOfParts(parts) : ((content0 as string | null | undefined) ?? '');
  const content = said || (typeof message.refusal === 'string' ? message.refusal : '');
  const calls = (message.tool_calls ?? []) as unknown[];
  const tool_calls: ToolCall[] = [];
  for (const call of calls) {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (typeof fn?.name !== 'string')
      throw new ModelError('invalid', 'the model sent a tool call without a function name');
    const args =
      typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    const id = (call as { id?: unknown }).id;
    // Some servers omit ids; the tool result must still point at its call.
    tool_calls.push({
      id: typeof id === 'string' && id ? id : `call_${randomHex(8)}`,
      type: 'function',
      function: { name: fn.name, arguments: args },
    });
  }
  return {
    content,
    tool_calls,
    ...(typeof message.reasoning_content === 'string' && message.reasoning_content
      ? { reasoning_content: message.reasoning_content }
      : {}),
  };
}

/** A stored message in the shape the chat API takes (unknown fields and reasoning are left out). */
export function toChatMessage(m: Message): ChatMessage {
  const calls = m.tool_calls?.length ? m.tool_calls : undefined;
  // Members left undefined are not in the JSON the model gets.
  return {
    role: m.role,
    // OpenAI's form of an assistant turn that only calls tools.
    content: calls && m.content === '' ? null : m.content,
    name: m.name,
    tool_call_id: m.tool_call_id,
    tool_calls: calls?.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments },
    })),
  };
}
