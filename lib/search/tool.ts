import { randomHex } from '../sessions/ids.js';
import { mapLimit } from '../sessions/manifest.js';
import type { Message, SessionSummary, StoredSession } from '../sessions/schema.js';
import type { SessionStore } from '../sessions/store.js';
import { queryTokens, tokenize } from './tokenize.js';

/**
 * The `session_search` agent tool (odek's semantics): `list`, `search`, `get`, `find`. Tool-level errors
 * are results (`{"error": …}`), as a tool call's are. `search` is the exhaustive DeepSearch over the
 * stored session objects here; the lexical index and vectors (the search issue) will answer first.
 */

/** The tool's OpenAI function definition, to hand to a model as is. */
export const sessionSearchTool = {
  type: 'function',
  function: {
    name: 'session_search',
    description:
      'Search and read past agent sessions. action=list: newest sessions; action=search: sessions whose messages mention the query; action=find: sessions whose task matches the query; action=get: the last messages of one session by id.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['list', 'search', 'get', 'find'] },
        query: { type: 'string', description: 'Words to look for (search, find).' },
        id: { type: 'string', description: 'Session id (get).' },
        limit: { type: 'integer', description: 'How many results, 1-20 (default 5).' },
      },
      required: ['action'],
    },
  },
} as const;

export interface ToolInput {
  action: string;
  query?: string | undefined;
  id?: string | undefined;
  limit?: number | undefined;
}

export interface SearchHit {
  id: string;
  task: string;
  score: number;
  snippet: string;
  updated_at: string;
}

const GET_MESSAGES = 100;
const SCAN_CONCURRENCY = 8;

/** Runs one tool call for a namespace. */
export async function runSessionSearch(sessions: SessionStore, ns: string, input: ToolInput): Promise<Record<string, unknown>> {
  const limit = clampLimit(input.limit);
  switch (input.action) {
    case 'list': {
      const page = await sessions.list(ns, { limit });
      return { sessions: page.sessions };
    }
    case 'find': {
      const query = (input.query ?? '').trim();
      if (!query) return { error: 'find needs a query' };
      return { sessions: await findByTask(sessions, ns, query, limit) };
    }
    case 'search': {
      const query = (input.query ?? '').trim();
      if (!query) return { error: 'search needs a query' };
      return { results: await deepSearch(sessions, ns, query, limit) };
    }
    case 'get': {
      const id = (input.id ?? '').trim();
      if (!id) return { error: 'get needs an id' };
      let session: StoredSession;
      try {
        session = await sessions.get(ns, id);
      } catch (err) {
        if ((err as { status?: number }).status === 404 || (err as { status?: number }).status === 400) return { error: `no session with id ${id}` };
        throw err;
      }
      const messages = session.messages.filter((m) => m.role === 'user' || m.role === 'assistant').slice(-GET_MESSAGES);
      return { id: session.id, task: session.task, count: messages.length, messages: messages.map((m) => ({ role: m.role, content: wrapUntrusted(m.content) })) };
    }
    default:
      return { error: `unknown action ${JSON.stringify(String(input.action))}; use list, search, get or find` };
  }
}

/** odek's limit rule: ≤ 0 (or absent) means 5; at most 20. */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return 5;
  return Math.min(20, Math.floor(limit));
}

/** Wraps text as untrusted content for the model: a fresh random tag, so content cannot close it. */
export function wrapUntrusted(text: string, source = 'session_search'): string {
  const tag = `untrusted_content_${randomHex(8)}`;
  return `<${tag} source="${source}">${text}</${tag}>`;
}

/** Sessions whose task holds every query token (or the query as a phrase), newest first; manifest only. */
async function findByTask(sessions: SessionStore, ns: string, query: string, limit: number): Promise<SessionSummary[]> {
  const wanted = queryTokens(query);
  const phrase = query.toLowerCase();
  const out: SessionSummary[] = [];
  for (const s of (await sessions.manifest.view(ns)).entries) {
    const tokens = new Set(tokenize(s.task));
    if (s.task.toLowerCase().includes(phrase) || (wanted.length > 0 && wanted.every((t) => tokens.has(t)))) {
      out.push({ id: s.id, task: s.task, turns: s.turns, model: s.model, provider: s.provider, created_at: s.created_at, updated_at: s.updated_at, bytes: s.bytes });
      if (out.length >= limit) break;
    }
  }
  return out;
}

/**
 * DeepSearch: reads the namespace's sessions newest first (bounded parallel GETs). A session qualifies
 * with 2 or more distinct query tokens (or the only token of a one-token query) in its task or its user,
 * assistant or tool messages; system messages never match. Score = distinct tokens found; ties go to the
 * newer session. The scan stops once `limit` sessions hold every token: nothing older can beat them.
 */
export async function deepSearch(sessions: SessionStore, ns: string, query: string, limit: number): Promise<SearchHit[]> {
  const wanted = queryTokens(query);
  if (wanted.length === 0) return [];
  const need = wanted.length === 1 ? 1 : 2;
  const entries = (await sessions.manifest.view(ns)).entries;
  const hits: (SearchHit & { at: number })[] = [];
  let strong = 0;
  for (let i = 0; i < entries.length && strong < limit; i += SCAN_CONCURRENCY) {
    const batch = entries.slice(i, i + SCAN_CONCURRENCY);
    const loaded = await mapLimit(batch, SCAN_CONCURRENCY, (e) => sessions.get(ns, e.id).catch(() => null));
    for (const session of loaded) {
      if (!session) continue;
      const found = new Set<string>();
      let snippet = '';
      const texts = [session.task, ...session.messages.filter((m: Message) => m.role !== 'system').map((m) => m.content)];
      for (const text of texts) {
        const tokens = new Set(tokenize(text));
        const before = found.size;
        for (const t of wanted) if (tokens.has(t)) found.add(t);
        if (found.size > before && !snippet) snippet = snippetOf(text, query);
      }
      if (found.size < need) continue;
      if (found.size === wanted.length) strong++;
      hits.push({ id: session.id, task: session.task, score: found.size, snippet, updated_at: session.updated_at, at: Date.parse(session.updated_at) || 0 });
    }
  }
  return hits
    .sort((a, b) => b.score - a.score || b.at - a.at)
    .slice(0, limit)
    .map(({ at: _at, ...hit }) => hit);
}

/** About 200 characters around the first query word found in `text`. */
function snippetOf(text: string, query: string): string {
  const lower = text.toLowerCase();
  let at = -1;
  for (const word of query.toLowerCase().split(/\s+/).filter((w) => w.length > 1)) {
    at = lower.indexOf(word);
    if (at >= 0) break;
  }
  const start = Math.max(0, (at < 0 ? 0 : at) - 80);
  const piece = text.slice(start, start + 200).replace(/\s+/g, ' ').trim();
  return (start > 0 ? '…' : '') + piece + (start + 200 < text.length ? '…' : '');
}
