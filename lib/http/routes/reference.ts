import type { Context } from 'hono';
import { docsPage } from '../docs.js';
import { openApiDocument } from '../openapi.js';
import type { Route } from '../spec.js';

// The Worker bundles answer these two routes with lib/http/routes/reference-edge.ts instead
// (scripts/build.ts): there the document and the page are static assets the build writes.

/** GET /openapi.json (`page` false) and GET /docs (`page` true). */
export function serveReference(c: Context, routes: readonly Route[], page: boolean): Response {
  const doc = openApiDocument(routes);
  return page ? c.html(docsPage(doc)) : c.json(doc);
}
