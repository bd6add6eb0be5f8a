// A Satchel-backed `Session` for the OpenAI Agents SDK (`@openai/agents`): `run(agent, input, { session })`.
import type { AgentInputItem, Session } from '@openai/agents';
import { newSessionId } from '../model/ids.js';
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
      crypto.randomUUID(),
      this.defaults,
      this.missing,
    );
    this.missing = false;
  }

  /**
   * Removes the newest item and returns it (undefined when there is none): a read, then a pop of the
   * message based on the revision read (a write in between: read again, at most 5 times). A message that
   * holds several items (a response's function calls; another writer's text with tool calls) is
   * rewritten without its last item instead (a PUT based on that revision).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    try {
      const popped = await onRevision(this.client, this.id, async ({ session, etag }) => {
        const last = session.messages[session.messages.length - 1];
        if (!last) return undefined;
        const items = toItems(last);
        if (items.length <= 1) await this.client.pop(this.id, 1, { ifMatch: etag });
        else {
          const messages = [...session.messages.slice(0, -1), ...toMessages(items.slice(0, -1))];
          await this.client.replace(this.id, { ...session, messages }, { ifMatch: etag });
        }
        // Known before the pop: a retry after a lost answer is a replay, which names nothing popped.
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
        [ITEM_FIELD]: calls,
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
        [ITEM_FIELD]: item,
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
 * The items of a stored message: the one it carries, or, for a message another writer stored (odek, the
 * CLI, continue), its equivalent: text, one function call per tool call, a tool result, reasoning.
 */
export function toItems(message: Message): AgentInputItem[] {
  const stored = message[ITEM_FIELD];
  if (Array.isArray(stored)) return stored.map((item) => ({ ...(item as Item) }) as AgentInputItem);
  if (stored && typeof stored === 'object') {
    const item = { ...(stored as Item) };
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
      if (message.reasoning_content)
        items.push({
          type: 'reasoning',
          content: [{ type: 'input_text', text: message.reasoning_content }],
        });
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
