import { sessionSearchBodySchema } from '../../model/requests.js';
import { sessionSearchResultSchema } from '../../model/responses.js';
import { runSessionSearch } from '../../search/tool.js';
import { namespaceOf, requestContext } from '../context.js';
import { bodyErrors, P, route } from '../spec.js';

/** The session_search agent tool. */

/** The session_search agent tool. */
export const sessionSearch = route(
  {
    method: 'post',
    path: '/v1/session_search',
    operationId: 'sessionSearch',
    tag: 'search',
    summary: 'The session_search agent tool',
    description:
      '`list`: newest sessions; `find`: sessions whose task matches `query`; `search`: ' +
      'ranked sessions whose messages match `query`; `get`: the last 100 user/assistant ' +
      'messages of `id`, wrapped as untrusted content. `limit` ≤ 0 is 5, at most 20. ' +
      'Tool-level errors (unknown action, empty query, unknown id) are 200 with `{"error"}`.',
    auth: 'bearer',
    body: sessionSearchBodySchema,
    responses: {
      200: { description: 'The tool result.', schema: sessionSearchResultSchema },
      ...bodyErrors,
      401: P.token,
      503: P.storage,
    },
  },
  async (c, body) => {
    const { sessions, search } = c.var.services;
    return c.json(
      await runSessionSearch(sessions, namespaceOf(c), body, search, requestContext(c)),
    );
  },
);
