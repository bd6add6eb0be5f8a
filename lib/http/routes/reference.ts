import type { Context } from 'hono';
import { DOCS_HEADERS, docsPage } from '../docs.js';
import { openApiDocument } from '../openapi.js';
import type { Route } from '../spec.js';

// The Worker bundles answer these two routes with lib/http/routes/reference-edge.ts instead
// (scripts/build.ts): there the document and the page are static assets the build writes.

/** GET /openapi.json (`page` false) and GET /docs (`page` true). */
export function serveReference(c: Context, routes: readonly Route[], page: boolean): Response {
  const doc = openApiDocument(routes);
  if (!page) return c.json(doc);
  for (const [name, value] of Object.entries(DOCS_HEADERS)) c.header(name, value);
  return c.html(docsPage(doc));
}
