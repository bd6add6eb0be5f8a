// A Satchel-backed `Session` for the OpenAI Agents SDK (`@openai/agents`): `run(agent, input, { session })`.
import type { AgentInputItem, Session } from '@openai/agents';
import { newSessionId } from '../model/ids.js';
import { newKey } from '../client/client.js';
import type { Message, MessageInput, SatchelClient } from '../client/index.js';
import { textOfParts } from '../model/parts.js';
import { appendOrCreate, isStatus, onRevision, without, type SessionDefaults } from './append.js';
import { toAgentsUserParts } from './parts.js';

/**
 * The extra message field that keeps an Agents SDK item verbatim (less `content`, kept as `content`); for
 * the function calls of one model response, stored as one assistant message, the list of them.
 */
export const ITEM_FIELD = 'openai_agents_item';

export interface SatchelSessionOptions extends SessionDefaults {
  client: SatchelClient;
  /** The Satchel session id; a new one (`YYYYMMDD-` + 32 hex) when omitted. */
  sessionId?: string;
}

/**
 * The Agents SDK's `Session` on a Satchel session. Each item is one stored message (odek's roles and
 * fields, so odek and the browser read it) that carries the item itself, so `getItems` gives back what
 * `addItems` was given; the function calls of one response (parallel tool calls) are one assistant
 * message with every call, as chat models require before the tool results. `addItems` is one append
 * under its own Idempotency-Key: writers in several processes never overwrite each other, and a retry
 * stores nothing twice.
 */
export class SatchelSession implements Session {
  readonly client: SatchelClient;
  private readonly id: string;
  private readonly defaults: SessionDefaults & { task: string };
  /** The last read found no session (so the next add creates it without a doomed append first). */
  private missing = false;

  constructor(options: SatchelSessionOptions) {
    this.client = options.client;
    this.id = options.sessionId ?? newSessionId();
    this.defaults = {
      ...options,
      task: options.task ?? 'OpenAI Agents SDK session',
      metadata: { framework: 'openai-agents', ...options.metadata },
    };
  }

  /** The Satchel session id. */
  async getSessionId(): Promise<string> {
    return this.id;
  }

  /** The stored items, oldest first; with `limit`, the newest `limit` of them. One GET. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    let messages: Message[];
    try {
      messages = (await this.client.get(this.id)).session.messages;
      this.missing = false;
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      this.missing = true;
      return [];
    }
    const items = messages.flatMap(toItems);
    return limit === undefined ? items : items.slice(-limit);
  }

  /** Appends the items as messages: one keyed POST (plus a create, the first time). */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    await appendOrCreate(
      this.client,
      this.id,
      toMessages(items),
      newKey(), // not crypto.randomUUID: that needs a secure context (an https page)
      this.defaults,
      this.missing,
    );
    this.missing = false;
  }

  /**
   * Removes the newest item and returns it (undefined when there is none): a read, then a write based on
   * the revision read (a write in between: read again, at most 5 times). The newest message that holds
   * items is the one changed; messages after it that hold none (an empty reply another writer stored)
   * stay. A message that holds that item alone is popped (or, with such messages after it, removed by a
   * PUT); one that holds several (a response's function calls; another writer's text with tool calls)
   * loses its last item in place, its other fields kept (`withoutLastItem`).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    try {
      const popped = await onRevision(this.client, this.id, async ({ session, etag }) => {
        const { messages } = session;
        const k = messages.findLastIndex((m) => toItems(m).length > 0);
        if (k < 0) return undefined;
        const items = toItems(messages[k]!);
        if (k === messages.length - 1 && items.length === 1)
          await this.client.pop(this.id, 1, { ifMatch: etag });
        else {
          const kept = withoutLastItem(messages[k]!);
          const next = [...messages.slice(0, k), ...(kept ? [kept] : []), ...messages.slice(k + 1)];
          await this.client.replace(this.id, { ...session, messages: next }, { ifMatch: etag });
        }
        // Known before the write: a retry after a lost answer is a replay, which names nothing popped.
        return items[items.length - 1];
      });
      return popped ?? undefined;
    } catch (err) {
      if (isStatus(err, 404)) return undefined; // deleted between the read and the pop
      throw err;
    }
  }

  /** Removes every item; the session, its task and metadata stay. */
  async clearSession(): Promise<void> {
    try {
      await this.client.clear(this.id);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }
}

type Item = Record<string, unknown> & { type?: string };

/** Items as stored messages: one each, but a run of function calls (one response's) is one message. */
export function toMessages(items: AgentInputItem[]): MessageInput[] {
  const out: MessageInput[] = [];
  let calls: Item[] = [];
  const flush = () => {
    if (calls.length === 1) out.push(toMessage(calls[0] as AgentInputItem));
    else if (calls.length > 1)
      out.push({
        role: 'assistant',
        content: '',
        tool_calls: calls.map(toolCallOf),
        [ITEM_FIELD]: calls.map(withoutArguments),
      });
    calls = [];
  };
  for (const agentItem of items) {
    const item = agentItem as Item;
    if (item.type === 'function_call') calls.push(item);
    else {
      flush();
      out.push(toMessage(agentItem));
    }
  }
  flush();
  return out;
}

/**
 * A function call as ITEM_FIELD keeps it: without `arguments`, which the tool call holds (where the server
 * redacts them as JSON: a secret under a key such as `"password": 918273645` is caught there, not in a
 * copy stored as plain text); `toItems` puts them back.
 */
function withoutArguments(item: Item): Item {
  return without(item, 'arguments') as Item;
}

function toolCallOf(item: Item) {
  return {
    id: String(item.callId),
    type: 'function' as const,
    function: { name: String(item.name), arguments: String(item.arguments ?? '') },
  };
}

/**
 * An item as a stored message. Messages keep their content as `content` (a string, or the array of parts,
 * which the server stores as text plus the parts); function calls become an assistant tool call, their
 * results a tool message, reasoning `reasoning_content`; every item rides along whole in ITEM_FIELD.
 */
export function toMessage(agentItem: AgentInputItem): MessageInput {
  const item = agentItem as Item;
  if (isMessageItem(item)) {
    const role = item.role === 'developer' ? 'system' : (item.role as MessageInput['role']);
    return {
      role,
      content: (item.content as MessageInput['content']) ?? '',
      [ITEM_FIELD]: without(item, 'content'),
    };
  }
  switch (item.type) {
    case 'function_call':
      return {
        role: 'assistant',
        content: '',
        tool_calls: [toolCallOf(item)],
        [ITEM_FIELD]: withoutArguments(item),
      };
    case 'function_call_result':
      return {
        role: 'tool',
        tool_call_id: String(item.callId),
        name: String(item.name),
        content: textOf(item.output),
        [ITEM_FIELD]: item,
      };
    case 'reasoning':
      return {
        role: 'assistant',
        content: '',
        reasoning_content: textOf(item.rawContent ?? item.content),
        [ITEM_FIELD]: item,
      };
    default:
      // Hosted tools, computer and shell calls, compaction…: kept whole, no text for odek.
      return { role: 'assistant', content: '', [ITEM_FIELD]: item };
  }
}

/**
 * A message without its last item (`toItems`' order: text, then the function calls), its other fields
 * (another writer's `reasoning_content`, say) as they are; null when that was its only item (the message
 * goes, its reasoning with it).
 */
function withoutLastItem(message: Message): Message | null {
  if (toItems(message).length <= 1) return null;
  // More than one item: a response's function calls, or another writer's text and tool calls.
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return null;
  const stored = message[ITEM_FIELD];
  return {
    ...message,
    tool_calls: calls.slice(0, -1),
    ...(Array.isArray(stored) ? { [ITEM_FIELD]: stored.slice(0, -1) } : {}),
  };
}

/**
 * The items of a stored message: the one it carries, or, for a message another writer stored (odek, the
 * CLI, continue), its equivalent: text, one function call per tool call, a tool result. Its
 * `reasoning_content` is left out (it stays stored): a reasoning item the SDK's Responses model sends
 * needs an id naming the API's own reasoning, which another model's text has not (review s62e).
 */
export function toItems(message: Message): AgentInputItem[] {
  const stored = message[ITEM_FIELD];
  // A function call's arguments are its tool call's (stored once, redacted as JSON).
  const withArguments = (item: Item): AgentInputItem => {
    const call = message.tool_calls?.find((c) => c.id === String(item.callId));
    return (
      item.type === 'function_call' && !('arguments' in item) && call
        ? { ...item, arguments: call.function.arguments }
        : { ...item }
    ) as AgentInputItem;
  };
  if (Array.isArray(stored)) return stored.map((item) => withArguments(item as Item));
  if (stored && typeof stored === 'object') {
    const item = withArguments(stored as Item) as Item;
    if (isMessageItem(item) && !('content' in item)) item.content = message.content;
    return [item as AgentInputItem];
  }
  // Content sent as parts (the API shows them as `content`): their text, or for a user the SDK's parts.
  const parts = Array.isArray(message.content) ? (message.content as Item[]) : undefined;
  const text = parts
    ? textOfParts(parts as { type: string }[])
    : typeof message.content === 'string'
      ? message.content
      : '';
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: text }];
    case 'user':
      return [
        {
          role: 'user',
          content: (parts ? toAgentsUserParts(parts) : text) as Extract<
            AgentInputItem,
            { role: 'user' }
          >['content'],
        },
      ];
    case 'tool':
      return [
        {
          type: 'function_call_result',
          callId: message.tool_call_id ?? '',
          name: message.name ?? '',
          status: 'completed',
          output: text,
        },
      ];
    default: {
      const items: AgentInputItem[] = [];
      if (text)
        items.push({
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text }],
        });
      for (const call of message.tool_calls ?? [])
        items.push({
          type: 'function_call',
          callId: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        });
      return items;
    }
  }
}

function isMessageItem(item: Item): boolean {
  return (item.type === undefined || item.type === 'message') && typeof item.role === 'string';
}

/** The text of a tool output or reasoning content: a string, a text part, or a list of them. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).filter(Boolean).join('\n');
  if (value && typeof value === 'object' && typeof (value as { text?: unknown }).text === 'string')
    return (value as { text: string }).text;
  return '';
}
