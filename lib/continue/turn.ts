import type { z } from 'zod';
import type { Schedule } from '../model/context.js';
import { sessionSearchTool } from '../search/tool.js';
import { type Message } from '../model/session.js';
import { jsonBytes, utf8Length } from '../pipeline/cap.js';
import { sessionSearchBodySchema } from '../model/requests.js';
import { ModelError, toChatMessage, type ChatFn, type ToolCall } from './model.js';

/**
 * The agent loop of one continue, as odek runs it: send the conversation with the `session_search` tool
 * offered; while the model answers with tool calls, run them here and send their results back; stop at
 * the first answer without tool calls. At most `MAX_ROUNDS` model calls; the last one is made with
 * `tool_choice: "none"`, so a model that keeps searching has to answer. At most `MAX_TOOL_CALLS` calls
 * in one answer.
 */

export const MAX_ROUNDS = 8;

/**
 * The most tool calls one model answer may ask for (a session_search each); an answer with more is an
 * invalid answer (a 502), as is one still calling tools on the last round.
 */
export const MAX_TOOL_CALLS = 64;

/** Tool calls run between two yields to the event loop. */
const YIELD_EVERY = 8;

/** What the model may pass to `session_search` (the same validation as `POST /v1/session_search`). */
export type SessionSearchInput = z.output<typeof sessionSearchBodySchema>;

/**
 * Runs one `session_search` call in a namespace; injected, so search can change without the loop.
 * `schedule` keeps the call's background work alive (the request's: `waitUntil` on Workers).
 */
export type SearchFn = (
  ns: string,
  input: SessionSearchInput,
  schedule?: Schedule,
) => Promise<Record<string, unknown>>;

export interface TurnOptions {
  chat: ChatFn;
  /** The model name sent with every round. */
  model: string;
  /** The namespace the tool searches: the session's own. */
  ns: string;
  search: SearchFn;
  /** The continue request's background work (the searches' index upkeep). */
  schedule?: Schedule;
  /** Aborts the whole turn (every round and tool call) at its deadline. */
  signal: AbortSignal;
  maxRounds?: number;
  /**
   * The model request's budget (SATCHEL_MODEL_CONTEXT_BYTES): a tool result that would take the request
   * past it (and past 4 KiB) is answered as an error asking for less, not sent whole (a `get` of a
   * session with long messages made every later round's request too large for the model).
   */
  contextBytes?: number;
}

export interface TurnResult {
  /** The turn's messages to store: assistant messages with tool calls, their results, then the answer. */
  messages: Message[];
  /** The final answer's text. */
  reply: string;
  rounds: number;
}

/** Runs the loop on `context` (already fitted); throws ModelError when the model fails or times out. */
export async function runTurn(context: Message[], options: TurnOptions): Promise<TurnResult> {
  const maxRounds = options.maxRounds ?? MAX_ROUNDS;
  const added: Message[] = [];
  for (let round = 1; ; round++) {
    const last = round === maxRounds;
    const sent = [...context, ...added];
    const messages = sent.map(toChatMessage);
    // The reasoning a model that asks for it gets (chatClient): the stored texts, newest first (this turn's tool
    // loop, then older turns' as DeepSeek wants them) while they fit in what the budget has left; "" for the rest
    // (it checks only that the field is there). All of it went past the budget 12 times (review s66e).
    // (The messages measured again only when there is reasoning to send: most models store none.)
    const stored = sent.map((m) => m.reasoning_content);
    let room = stored.some(Boolean) ? (options.contextBytes ?? Infinity) - jsonBytes(messages) : 0;
    const reply = await options.chat(
      {
        model: options.model,
        messages,
        tools: [sessionSearchTool],
        tool_choice: last ? 'none' : undefined, // JSON leaves it out
      },
      options.signal,
      stored
        .reverse()
        // Once one does not fit, `room` stays below 0: no older one is sent either.
        .map((t) => (t && (room -= jsonBytes(t)) >= 0 ? t : ''))
        .reverse(),
    );
    added.push({
      role: 'assistant',
      content: reply.content,
      ...(reply.tool_calls.length ? { tool_calls: reply.tool_calls } : {}),
      ...(reply.reasoning_content ? { reasoning_content: reply.reasoning_content } : {}),
    });
    if (reply.tool_calls.length === 0)
      return { messages: added, reply: reply.content, rounds: round };
    // A half-finished tool loop is never stored: the caller stores nothing when this throws.
    if (last)
      throw new ModelError('invalid', `the model still called tools after ${maxRounds} rounds`);
    // A model repeating a call until max_tokens answers thousands of them (review s61b: 3,000 in 236 KB
    // blocked the process for 11 s); more than a turn runs is no answer to act on, as after the last round.
    if (reply.tool_calls.length > MAX_TOOL_CALLS)
      throw new ModelError(
        'invalid',
        `the model asked for ${reply.tool_calls.length} tool calls in one answer, ` +
          `more than the ${MAX_TOOL_CALLS} a turn runs`,
      );
    await runCalls(reply.tool_calls, context, added, options);
  }
}

/** Runs one answer's tool calls in order, appending each result to `added`; throws at the deadline. */
async function runCalls(
  calls: ToolCall[],
  context: Message[],
  added: Message[],
  options: TurnOptions,
): Promise<void> {
  // The request's size once per round, then each result's own bytes and comma: re-serialising the whole
  // conversation per call was quadratic in the calls of one answer (review s61b).
  let used = jsonBytes([...context, ...added].map(toChatMessage));
  for (const [i, call] of calls.entries()) {
    // Results without I/O (an unknown tool, bad arguments) resolve in microtasks: without a macrotask now
    // and then, the deadline's timer (and every other request of the process) waited for the whole answer.
    if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    if (options.signal.aborted) throw timedOut();
    // A tool call (a search, which may wait on the embeddings service) ends the turn when the signal
    // fires, not when the call returns (review s56f: a stopping server's cut-off waited for it); the
    // call finishes on its own, its result unused.
    const result = await untilAborted(runTool(call, options), options.signal);
    let content = JSON.stringify(result);
    const room = (options.contextBytes ?? Infinity) - used;
    if (utf8Length(content) > Math.max(room, 4096))
      content = JSON.stringify({
        error:
          `the result is ${utf8Length(content)} bytes, more than this turn's context can hold ` +
          `(${Math.max(room, 0)} bytes left): ask for less`,
      });
    const message: Message = { role: 'tool', content, tool_call_id: call.id };
    added.push(message);
    used += jsonBytes(toChatMessage(message)) + 1;
  }
}

const timedOut = () => new ModelError('timeout', 'the model turn ran out of time');

/** `work`'s result, or the turn's timeout as soon as `signal` fires (before or while `work` runs). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined); // its failure after the abort is nobody's
  if (signal.aborted) return Promise.reject(timedOut());
  let stop!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(timedOut());
    signal.addEventListener('abort', stop, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', stop));
}

/** One tool call's result. Bad calls are results too (`{"error": …}`), as odek's tools answer them. */
export async function runTool(
  call: ToolCall,
  options: Pick<TurnOptions, 'ns' | 'search' | 'schedule'>,
): Promise<Record<string, unknown>> {
  const name = call.function.name;
  if (name !== sessionSearchTool.function.name)
    return { error: `unknown tool ${JSON.stringify(name)}; the only tool here is session_search` };
  let args: unknown;
  try {
    args = JSON.parse(call.function.arguments.trim() || '{}');
  } catch {
    return { error: 'the arguments of session_search are not valid JSON' };
  }
  const input = sessionSearchBodySchema.safeParse(args);
  if (!input.success) {
    // Which field, and why: a model corrects `"limit": "5"` or a query too long (review s68g).
    const [issue] = input.error.issues;
    return {
      error:
        'session_search takes {"action": "list" | "search" | "get" | "find", "query"?, "id"?, "limit"?}' +
        (issue ? `; ${issue.path.join('.') || '(arguments)'}: ${issue.message}` : ''),
    };
  }
  try {
    return await options.search(options.ns, input.data, options.schedule);
  } catch {
    // The model can still answer without the search; the failure itself is not the model's to read.
    return { error: 'session_search failed; try again later' };
  }
}
