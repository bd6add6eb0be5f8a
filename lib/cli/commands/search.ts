import { integerArg, stringOpt } from '../args.js';
import type { Command } from '../command.js';
import { EXIT } from '../io.js';
import { searchHits } from '../render.js';
import { words } from './session.js';

export const search: Command = {
  name: 'search',
  summary: 'search past sessions (the session_search tool)',
  help: `satchel search "query" [--limit N] [--json]

Ranks sessions whose messages or task mention the query, as the agents' session_search tool does:
id, score and task, with the best-matching snippet below.

  --limit N   1 to 20 (default 5)
  --json      the tool's result: {"results": [{id, task, score, snippet, updated_at}]}`,
  options: { limit: { type: 'string', short: 'n' } },
  async run(ctx) {
    const query = words(ctx.args.positionals, '"query"');
    const limitArg = stringOpt(ctx.args.values, 'limit');
    const limit = limitArg === undefined ? undefined : integerArg(limitArg, '--limit', 1, 20);
    const out = await ctx
      .client()
      .sessionSearch({ action: 'search', query, ...(limit !== undefined ? { limit } : {}) });
    if ('error' in out) {
      // A tool-level error comes back as a result, not a problem: still a failure for the command line.
      if (ctx.json) ctx.printJson(out);
      else ctx.io.stderr.write(`satchel: search failed: ${out.error}\n`);
      return EXIT.api;
    }
    if (ctx.json) ctx.printJson(out);
    else ctx.print(searchHits(out.results, ctx.width));
    return EXIT.ok;
  },
};
