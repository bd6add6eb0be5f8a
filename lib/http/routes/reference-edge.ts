import { SatchelError } from '../../model/errors.js';

/**
 * The OpenAPI document and the /docs page in the Worker bundles (scripts/build.ts resolves
 * lib/http/routes/reference.ts to this module there): the build writes them as Workers static assets,
 * `dist/assets/openapi.json` and `dist/assets/docs.html` (`[assets]` in wrangler.toml), served before
 * the Worker runs, so neither the document's generator nor the page's is in the Worker's code. A GET
 * reaches the Worker only when it was deployed without its assets.
 */
export function serveReference(): never {
  throw new SatchelError(
    'not_found',
    "deployed without its static assets (wrangler.toml's [assets])",
  );
}
