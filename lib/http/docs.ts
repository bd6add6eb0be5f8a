import type { OpenApiDocument, Operation } from './openapi.js';

/**
 * `GET /docs`: a self-contained API reference page made from the OpenAPI document (no scripts, no
 * external assets: it must work on a machine without internet). Operations with their parameters,
 * bodies, responses and the document's examples, then every schema as a table of fields. An error that
 * many operations answer the same way (401, 503, …) is described once, in "Shared errors", and each
 * operation links to it instead of repeating the row. Readable at 390 px: tables scroll on their own,
 * long paths and code wrap. Its link to the OpenAPI document is relative to the page: under an API
 * Gateway stage `/prod/docs` links `/prod/openapi.json` (review s57a: `/openapi.json` was outside the API).
 */

/** An error row repeated by at least this many operations is shown once, under "Shared errors". */
const SHARED_AT = 3;
/** Examples up to this many lines are shown open. */
const EXAMPLE_OPEN_LINES = 16;

type Schema = Record<string, unknown>;

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** Escaped text with `code` spans, the only markup the descriptions use. */
const prose = (s: unknown) =>
  typeof s === 'string'
    ? esc(s)
        .replace(/`([^`]+)`/g, '<code>$1</code>')
        .replace(/\n\n/g, '</p><p>')
    : '';
const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const schemaLink = (name: string) => `<a href="#schema-${esc(name)}">${esc(name)}</a>`;

/** A schema's type in a few words: `string`, `array of Message`, `integer 1–100`, `"a" | "b"`. */
function typeOf(schema: Schema | undefined): string {
  if (!schema || Object.keys(schema).length === 0) return 'any';
  if (typeof schema.$ref === 'string') return schemaLink(refName(schema.$ref));
  if ('const' in schema) return `<code>${esc(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum))
    return schema.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ');
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union)
    return union
      .map((s) => (s.title ? `${typeOf(s)} (${esc(String(s.title))})` : typeOf(s)))
      .join(' | ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  return types
    .map((t) => {
      if (t === 'array') return `array of ${typeOf(schema.items as Schema)}`;
      if (t === 'object' && schema.properties)
        return `object {${Object.keys(schema.properties as Schema)
          .map(esc)
          .join(', ')}}`;
      return esc(String(t ?? 'any'));
    })
    .join(' | ');
}

/** Constraints worth a word: default, format, pattern, bounds. */
function notes(schema: Schema): string {
  const out: string[] = [];
  if ('default' in schema) out.push(`default <code>${esc(JSON.stringify(schema.default))}</code>`);
  if (schema.format) out.push(esc(String(schema.format)));
  if (
    typeof schema.minimum === 'number' &&
    schema.minimum !== 0 &&
    schema.minimum > -Number.MAX_SAFE_INTEGER
  )
    out.push(`≥ ${schema.minimum}`);
  if (typeof schema.maximum === 'number' && schema.maximum < Number.MAX_SAFE_INTEGER)
    out.push(`≤ ${schema.maximum}`);
  if (typeof schema.minLength === 'number') out.push(`at least ${schema.minLength} characters`);
  if (typeof schema.maxLength === 'number') out.push(`at most ${schema.maxLength} characters`);
  if (typeof schema.minItems === 'number') out.push(`at least ${schema.minItems} items`);
  if (typeof schema.pattern === 'string' && schema.format === undefined)
    out.push(`matches <code>${esc(schema.pattern)}</code>`);
  if (typeof schema.description === 'string') out.push(prose(schema.description));
  return out.join('; ');
}

/** An object schema as a table of its fields; any other schema as one line. */
function fields(schema: Schema): string {
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants)
    return variants
      .map((v) => `<p class="variant">${esc(String(v.title ?? 'or'))}</p>${fields(v)}`)
      .join('');
  const props = schema.properties as Record<string, Schema> | undefined;
  if (!props) return `<p>${typeOf(schema)}</p>`;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const rows = Object.entries(props).map(
    ([name, s]) =>
      `<tr><td><code>${esc(name)}</code>` +
      `${required.has(name) ? ' <span class="req">required</span>' : ''}</td>` +
      `<td>${typeOf(s)}</td><td>${notes(s)}</td></tr>`,
  );
  const extra =
    schema.additionalProperties === false
      ? 'No other fields.'
      : schema.additionalProperties
        ? 'Other fields are kept as they are.'
        : '';
  return (
    '<div class="scroll"><table><tr><th>field</th><th>type</th><th>notes</th></tr>' +
    `${rows.join('')}</table></div>${extra ? `<p class="note">${extra}</p>` : ''}`
  );
}

/** A response row's identity: status and description (the same status can mean different things). */
const rowKey = (status: string, r: Record<string, unknown>) =>
  `${status} ${String(r.description ?? '')}`;

interface SharedError {
  anchor: string;
  status: string;
  response: Record<string, unknown>;
  count: number;
}

/** Error rows (4xx, 5xx) that SHARED_AT or more operations repeat word for word. */
function sharedErrors(ops: { op: Operation }[]): Map<string, SharedError> {
  const seen = new Map<string, SharedError>();
  for (const { op } of ops) {
    for (const [status, r] of Object.entries(op.responses)) {
      if (Number(status) < 400) continue;
      const key = rowKey(status, r);
      const entry = seen.get(key) ?? { anchor: '', status, response: r, count: 0 };
      entry.count++;
      seen.set(key, entry);
    }
  }
  const shared = [...seen.entries()]
    .filter(([, e]) => e.count >= SHARED_AT)
    .sort((a, b) => Number(a[1].status) - Number(b[1].status));
  shared.forEach(([, e], i) => (e.anchor = `error-${e.status}-${i + 1}`));
  return new Map(shared);
}

/** A media type's examples (`example`, or the named `examples`), each as pretty JSON with its title. */
function examplesHtml(label: string, media: Record<string, unknown> | undefined): string {
  if (!media) return '';
  const out: { title: string; value: unknown }[] = [];
  if ('example' in media) out.push({ title: '', value: media.example });
  for (const [name, ex] of Object.entries(
    (media.examples as Record<string, Schema> | undefined) ?? {},
  )) {
    if (ex && typeof ex === 'object' && 'value' in ex)
      out.push({ title: String(ex.summary ?? name), value: ex.value });
  }
  return out
    .map((ex) => {
      const text = typeof ex.value === 'string' ? ex.value : JSON.stringify(ex.value, null, 2);
      // Short examples open; long ones (a whole session) folded, so the page stays short without a script.
      const open = text.split('\n').length <= EXAMPLE_OPEN_LINES ? ' open' : '';
      return (
        `<details class="example"${open}><summary class="ex-label">${esc(label)}` +
        `${ex.title ? ` — ${esc(ex.title)}` : ''}</summary>` +
        `<pre><code>${esc(text)}</code></pre></details>`
      );
    })
    .join('');
}

/** A response's cells: status, meaning, body type, headers. */
function responseCells(status: string, r: Record<string, unknown>): string {
  const content = r.content as Record<string, { schema: Schema }> | undefined;
  const media = content ? Object.entries(content)[0] : undefined;
  const headers = Object.keys((r.headers as Schema | undefined) ?? {});
  const body = media ? `${typeOf(media[1].schema)} <small>${esc(media[0])}</small>` : '—';
  return (
    `<td class="status s${status[0]}">${esc(status)}</td><td>${prose(r.description)}</td>` +
    `<td>${body}</td><td>${headers.map((h) => `<code>${esc(h)}</code>`).join(' ')}</td>`
  );
}

function operationHtml(
  doc: OpenApiDocument,
  path: string,
  method: string,
  op: Operation,
  shared: Map<string, SharedError>,
): string {
  const params = ((op.parameters as { $ref: string }[] | undefined) ?? []).map(
    (p) => doc.components.parameters![refName(p.$ref)] as Schema,
  );
  const auth =
    Array.isArray(op.security) && op.security.length === 0
      ? path.startsWith('/v1/hooks/')
        ? 'signature headers, no token'
        : 'no token'
      : 'bearer token';
  const parts = [
    `<section class="op" id="op-${esc(op.operationId)}">`,
    `<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3>`,
    `<p><strong>${prose(op.summary)}</strong> <span class="auth">${auth}</span></p>`,
    op.description ? `<p>${prose(op.description)}</p>` : '',
  ];
  if (params.length > 0) {
    parts.push(
      '<h4>Parameters</h4><div class="scroll"><table>' +
        '<tr><th>name</th><th>in</th><th>type</th><th>notes</th></tr>',
      ...params.map(
        (p) =>
          `<tr><td><code>${esc(String(p.name))}</code>` +
          `${p.required ? ' <span class="req">required</span>' : ''}</td>` +
          `<td>${esc(String(p.in))}</td><td>${typeOf(p.schema as Schema)}</td>` +
          `<td>${notes({ ...(p.schema as Schema), description: p.description })}</td></tr>`,
      ),
      '</table></div>',
    );
  }
  const body = op.requestBody as
    | {
        description?: string;
        content: Record<string, { schema: Schema } & Record<string, unknown>>;
      }
    | undefined;
  if (body) {
    const [type, media] = Object.entries(body.content)[0]!;
    parts.push(
      `<h4>Request body</h4><p><code>${esc(type)}</code>: ${typeOf(media.schema)}` +
        `${body.description ? ` — ${prose(body.description)}` : ''}</p>`,
    );
    parts.push(examplesHtml('Example request', media));
  }
  const own = Object.entries(op.responses).filter(([status, r]) => !shared.has(rowKey(status, r)));
  const common = Object.entries(op.responses).flatMap(
    ([status, r]) => shared.get(rowKey(status, r)) ?? [],
  );
  parts.push(
    '<h4>Responses</h4><div class="scroll"><table>' +
      '<tr><th>status</th><th>meaning</th><th>body</th><th>headers</th></tr>',
  );
  for (const [status, r] of own) parts.push(`<tr>${responseCells(status, r)}</tr>`);
  parts.push('</table></div>');
  if (common.length > 0) {
    parts.push(
      `<p class="shared">Also: ${common
        .map((e) => `<a href="#${e.anchor}" class="status s${e.status[0]}">${esc(e.status)}</a>`)
        .join(' · ')} <span class="note">(shared errors)</span></p>`,
    );
  }
  for (const [status, r] of Object.entries(op.responses)) {
    const content = r.content as Record<string, Record<string, unknown>> | undefined;
    if (content) parts.push(examplesHtml(`Example response ${status}`, Object.values(content)[0]));
  }
  parts.push('</section>');
  return parts.join('');
}

/** The page. */
/**
 * The security headers of the /docs page on every build (the Node server and Lambda set them on the
 * route, the Workers build's assets `_headers`): the page is static HTML with one inline stylesheet, no
 * script and no image. Until 2026-12-06 it was served with none (review s58d).
 */
export const DOCS_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

export function docsPage(doc: OpenApiDocument): string {
  const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const byTag = doc.tags.map((t) => ({
    tag: t,
    ops: ops.filter((o) => (o.op.tags as string[])[0] === t.name),
  }));
  const schemas = Object.entries(doc.components.schemas as Record<string, Schema>);
  const shared = sharedErrors(ops);
  const sharedHtml = [...shared.values()]
    .map(
      (e) =>
        `<tr id="${e.anchor}">${responseCells(e.status, e.response)}<td>${e.count} operations</td></tr>`,
    )
    .join('');
  const nav = ops
    .map(
      (o) =>
        `<li><a href="#op-${esc(o.op.operationId)}"><span class="method ${o.method}">` +
        `${o.method.toUpperCase()}</span> <code>${esc(o.path)}</code></a></li>`,
    )
    .join('');
  const tagsHtml = byTag
    .map(
      ({ tag, ops: list }) =>
        `<h2>${esc(tag.name)}</h2><p>${prose(tag.description)}</p>` +
        list.map((o) => operationHtml(doc, o.path, o.method, o.op, shared)).join(''),
    )
    .join('\n');
  const schemasHtml = schemas
    .map(
      ([name, s]) =>
        `<section id="schema-${esc(name)}"><h3>${esc(name)}</h3>` +
        `<p>${prose(s.description)}</p>${fields(s)}</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} API reference</title>
<style>
${STYLE}
</style></head><body>
<h1>${esc(doc.info.title)} API <small>v${esc(doc.info.version)}</small></h1>
<p>${prose(doc.info.description)}</p>
<p>Machine-readable: <a href="./openapi.json">openapi.json</a> (OpenAPI ${esc(doc.openapi)}).</p>
<nav><h2>Operations</h2><ul>${nav}</ul></nav>
<h2 id="shared-errors">Shared errors</h2>
<p>Answers that many operations give in the same way (every error body is \
<code>application/problem+json</code>); each operation links here instead of repeating them.</p>
<div class="scroll"><table>\
<tr><th>status</th><th>meaning</th><th>body</th><th>headers</th><th>used by</th></tr>\
${sharedHtml}</table></div>
${tagsHtml}
<h2>Schemas</h2>
${schemasHtml}
</body></html>`;
}

/** The page's style sheet (terser joins the pieces into one string). */
const STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;' +
  'margin:0 auto;padding:1rem 1.5rem;color:#1d2330}' +
  'code{font:13px ui-monospace,monospace;background:#f1f3f7;' +
  'padding:0 .25em;border-radius:3px;overflow-wrap:anywhere}' +
  'pre{background:#f1f3f7;padding:.5rem .7rem;border-radius:4px;' +
  'overflow-x:auto;margin:.2rem 0 .8rem}' +
  'pre code{padding:0;overflow-wrap:normal}' +
  '.scroll{overflow-x:auto}' +
  '.ex-label{font-size:13px;font-weight:600;color:#5b6478;margin:.6rem 0 .2rem;cursor:pointer}' +
  '.shared{font-size:14px;margin:.2rem 0 .6rem}' +
  'h3 code{overflow-wrap:anywhere}' +
  'table{border-collapse:collapse;width:100%;margin:.4rem 0 1rem}' +
  'td,th{border-bottom:1px solid #e2e5ec;padding:.3rem .5rem;text-align:left;vertical-align:top}' +
  'th{font-weight:600;background:#f7f8fa}' +
  '.op{border-top:2px solid #e2e5ec;padding-top:.5rem;margin-top:1.5rem}' +
  '.method{display:inline-block;min-width:4.2em;text-align:center;' +
  'color:#fff;border-radius:4px;font-size:13px;padding:.1em .4em}' +
  '.get{background:#2f7d4f}.post{background:#2457a6}' +
  '.put{background:#9a5b00}.delete{background:#a8322d}' +
  '.req{color:#a8322d;font-size:12px}.auth{color:#5b6478;font-size:13px;margin-left:.5em}' +
  '.note,.variant{color:#5b6478;font-size:13px;margin:.2rem 0}' +
  '.status{font-weight:600}.s2,.s3{color:#2f7d4f}.s4{color:#9a5b00}' +
  '.s5{color:#a8322d}nav ul{columns:2}h4{margin:.8rem 0 .2rem}' +
  '@media (max-width:640px){body{padding:.6rem .8rem;font-size:14px}' +
  'nav ul{columns:1;padding-left:1rem}td,th{padding:.25rem .35rem}h1{font-size:1.5rem}}';
