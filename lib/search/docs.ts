import type { Message, StoredSession } from '../model/session.js';
import { tokenize } from './tokenize.js';

/**
 * What the search indexes see of a session: the task and the user, assistant and tool content, plus the
 * names and arguments of tool calls. System messages are left out (they repeat across sessions and the
 * contract says they never match). Only stored, i.e. redacted, text ever reaches an index.
 */

/** One session version in an index: its id, creation time (ms) and revision. */
export interface DocKey {
  id: string;
  /** created_at in ms: a session deleted and created again under the same id is a different document. */
  c: number;
  r: number;
}

/** The lexical document of a session version: token count and term frequencies. */
export interface LexDoc {
  len: number;
  tf: Map<string, number>;
}

/** The document key of a stored session. */
export function docKeyOf(session: Pick<StoredSession, 'id' | 'created_at' | 'revision'>): DocKey {
  return { id: session.id, c: Date.parse(session.created_at) || 0, r: session.revision };
}

/** The searchable texts of messages (no system messages). */
export function messageTexts(messages: readonly Message[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.content) out.push(m.content);
    for (const call of m.tool_calls ?? [])
      out.push(`${call.function.name} ${call.function.arguments}`);
  }
  return out;
}

/** The lexical document of a whole session. */
export function lexDocOf(session: Pick<StoredSession, 'task' | 'messages'>): LexDoc {
  return addTexts({ len: 0, tf: new Map() }, [session.task, ...messageTexts(session.messages)]);
}

/** `doc` plus the texts (a new document; `doc` is not changed): how an append extends a cached document. */
export function extendLexDoc(doc: LexDoc, messages: readonly Message[]): LexDoc {
  return addTexts({ len: doc.len, tf: new Map(doc.tf) }, messageTexts(messages));
}

function addTexts(doc: LexDoc, texts: string[]): LexDoc {
  for (const text of texts) {
    for (const t of tokenize(text, true)) {
      doc.tf.set(t, (doc.tf.get(t) ?? 0) + 1);
      doc.len++;
    }
  }
  return doc;
}

/** Characters of a session given to an embedding model: enough to say what it was about. */
const EMBED_CHARS = 6000;

/**
 * The text embedded for a session: the task, then user and assistant content (tool output is noisy and
 * long), head and tail kept when it is too long, since a session's purpose is usually stated early and
 * its outcome late.
 */
export function embeddingTextOf(session: Pick<StoredSession, 'task' | 'messages'>): string {
  const parts = [session.task];
  for (const m of session.messages)
    if ((m.role === 'user' || m.role === 'assistant') && m.content) parts.push(m.content);
  const all = parts.join('\n').replace(/\s+/g, ' ').trim();
  if (all.length <= EMBED_CHARS) return all;
  const half = EMBED_CHARS / 2;
  return `${all.slice(0, half)} … ${all.slice(-half)}`;
}
