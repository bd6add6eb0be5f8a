import type { RequestContext } from '../model/context.js';
import { SatchelError } from '../model/errors.js';
import { randomHex } from '../model/ids.js';
import type { SessionSummary, StoredSession } from '../model/session.js';
import { summaryOf, type SessionStore } from '../sessions/store.js';
import { deepSearch, type SearchEngine, type SearchHit } from './engine.js';
import { parseQuery, tokenize, tokensHeld, type Query } from './tokenize.js';

/**
 * The `session_search` agent tool (odek's semantics): `list`, `search`, `get`, `find`. Tool-level errors
 * are results (`{"error": …}`), as a tool call's are. `search` is the exhaustive DeepSearch over the
 * engine's indexed path (lexical and vector, fused) with DeepSearch behind it; without an engine (unit
 * tests of other parts) it is DeepSearch alone.
 */

/** The tool's OpenAI function definition, to hand to a model as is. */
export const sessionSearchTool = {
  type: 'function',
  function: {
    name: 'session_search',
    description:
      'Search and read past agent sessions. action=list: newest sessions; action=search: ' +
      'sessions whose messages mention the query; action=find: sessions whose task matches ' +
      'the query; action=get: the last messages of one session by id.',
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

/** A field sent as `null` is absent (sessionSearchBodySchema). */
export interface ToolInput {
  action: string;
  query?: string | null | undefined;
  id?: string | null | undefined;
  limit?: number | null | undefined;
}

export type { SearchHit };

const GET_MESSAGES = 100;

/** Runs one tool call for a namespace; the context keeps background upkeep alive (Workers waitUntil). */
export async function runSessionSearch(
  sessions: SessionStore,
  ns: string,
  input: ToolInput,
  engine?: SearchEngine,
  ctx: RequestContext = {},
): Promise<Record<string, unknown>> {
  const limit = clampLimit(input.limit);
  switch (input.action) {
    case 'list': {
      const page = await sessions.list(ns, { limit }, ctx);
      return { sessions: page.sessions };
    }
    case 'find': {
      // Whole words only: a query with none ("", "the", "?") is an error, not a match of every task.
      const wanted = parseQuery(input.query ?? '');
      if (!wanted.tokens.length) return { error: 'find needs a word' };
      return { sessions: await findByTask(sessions, ns, wanted, limit, ctx) };
    }
    case 'search': {
      const query = (input.query ?? '').trim();
      if (!query) return { error: 'search needs a query' };
      if (engine) return { results: await engine.search(ns, query, limit, ctx) };
      return {
        results: await deepSearch(
          sessions,
          ns,
          (await sessions.manifest.view(ns, ctx.schedule)).entries,
          query,
          limit,
        ),
      };
    }
    case 'get': {
      const id = (input.id ?? '').trim();
      if (!id) return { error: 'get needs an id' };
      let session: StoredSession;
      try {
        session = await sessions.get(ns, id);
      } catch (err) {
        if (SatchelError.is(err, 'not_found') || SatchelError.is(err, 'invalid'))
          return { error: `no session with id ${id.slice(0, 128).toWellFormed()}` };
        throw err;
      }
      const messages = session.messages
        .filter((m) => m.role === 'user' || m.role === 'assistant')
        .slice(-GET_MESSAGES);
      return {
        id: session.id,
        task: session.task,
        count: messages.length,
        messages: messages.map((m) => ({ role: m.role, content: wrapUntrusted(m.content) })),
      };
    }
    default:
      return {
        error: `unknown action ${JSON.stringify(String(input.action))}; use list, search, get or find`,
      };
  }
}

/** odek's limit rule: ≤ 0 (or absent) means 5; at most 20. */
export function clampLimit(limit: number | null | undefined): number {
  // Whole results: 0.5 is 0, which means 5 (not an empty answer).
  const n = limit == null ? NaN : Math.floor(limit);
  return Number.isFinite(n) && n > 0 ? Math.min(20, n) : 5;
}

/**
 * Wraps text as untrusted content for the model: a fresh random tag, so content cannot close it. `nonce`
 * (16 hex digits) replaces the random part where a retry must store the same text (webhooks derive it
 * from their secret, so it stays unguessable).
 */
export function wrapUntrusted(
  text: string,
  source = 'session_search',
  nonce = randomHex(8),
): string {
  const tag = `untrusted_content_${nonce}`;
  // odek's exact bytes: a newline after the opening tag and before the closing one (contract v1.1).
  return `<${tag} source="${source}">\n${text}\n</${tag}>`;
}

/**
 * Sessions whose task holds every query token, newest first; manifest only. Tokens, not substrings: "cat"
 * is not found in "application", nor "art" in "restart" (a phrase's tokens are all in the task too).
 */
async function findByTask(
  sessions: SessionStore,
  ns: string,
  wanted: Query,
  limit: number,
  ctx: RequestContext,
): Promise<SessionSummary[]> {
  const out: SessionSummary[] = [];
  for (const s of (await sessions.manifest.view(ns, ctx.schedule)).entries) {
    const tokens = new Set(tokenize(s.task, true));
    const all = tokensHeld(wanted, (t) => tokens.has(t)) === tokensHeld(wanted);
    if (all && out.push(summaryOf(s)) >= limit) break;
  }
  return out;
}
