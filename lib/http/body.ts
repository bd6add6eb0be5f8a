import type { Context } from 'hono';
import {
  changedNumber,
  jsonPathAt,
  MAY_CHANGE,
  pathText,
  type ChangedNumber,
} from '../model/json-numbers.js';
import { redactJsonValue } from '../pipeline/save.js';
import type { z } from 'zod';
import { strictText } from '../model/bytes.js';
import {
  badRequest,
  payloadTooLarge,
  unsupportedMediaType,
  type FieldError,
} from '../model/errors.js';

import { textNestedPast } from '../model/json-depth.js';
import { MAX_JSON_DEPTH } from '../model/requests.js';

/**
 * Reads a JSON request body: checks the media type (415), the size while streaming (413), the syntax
 * and nesting depth (400), then validates it against `schema` (400 with `errors[].path`).
 */
export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  maxBytes: number,
): Promise<z.output<S>> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const json = type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
  // A browser may send a bodiless POST to another site without asking it first (no preflight), and says
  // so with Origin: only a request from outside a browser (curl) is taken without a body.
  const browser =
    c.req.header('origin') !== undefined || c.req.header('sec-fetch-mode') !== undefined;
  // A compressed body is not decoded: 415 (RFC 9110 15.5.16), where it was 400 "not valid UTF-8". Codings
  // are case-insensitive (8.4.1): `Identity`, or a list of only `identity`, is none (until 2026-12-06 415).
  const coded = (c.req.header('content-encoding') ?? '')
    .split(',')
    .some((s) => !['', 'identity'].includes(s.trim().toLowerCase()));
  if (coded || (!json && (type || browser || Number(c.req.header('content-length') || 0) > 0)))
    throw unsupportedMediaType(`send the body as application/json${coded ? ', uncompressed' : ''}`);
  const raw = await readLimited(c.req.raw, maxBytes);
  if (!json) {
    // No body at all (`curl -X POST` of a pop): `{}`, where every field is optional.
    const empty = raw === '' ? schema.safeParse({}) : undefined;
    if (empty?.success) return empty.data;
    throw unsupportedMediaType('send the body as application/json');
  }
  // Before the parse, which builds every level first (review s68c).
  if (textNestedPast(raw, MAX_JSON_DEPTH))
    throw badRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    if (err instanceof RangeError)
      throw badRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    throw badRequest('the body is not valid JSON');
  }
  const unsafe = unsafeJson(value, MAX_JSON_DEPTH);
  if (unsafe) throw badRequest(unsafe);
  // Valid UTF-8 bytes hold no lone surrogate: only an escape can make one; a number past a double's range
  // needs an exponent of 3 digits or 309 digits in a row: most bodies skip the walk.
  const bad = /\\u[dD][89a-fA-F]|[eE]\+?\d{3}|\d{309}/.test(raw) ? badLeaf(value) : null;
  if (bad !== null) {
    const { path, message } = bad;
    throw badRequest(`the body is not valid: ${path || '(body)'}: ${message}`, [{ path, message }]);
  }
  const changed = MAY_CHANGE.test(raw) ? changedNumber(raw) : null;
  if (changed !== null) throw numberChanged(raw, value, changed);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const errors = zodErrors(parsed.error);
    throw badRequest(
      `the body is not valid: ${errors
        .map((e) => `${e.path || '(body)'}: ${e.message}`)
        .slice(0, 3)
        .join('; ')}`,
      errors,
    );
  }
  return parsed.data;
}

/**
 * The 400 for a number JavaScript's JSON would store changed, naming its path as `badLeaf` does. The
 * number is quoted unless stored it would be redacted (under a secret-sounding key: a numeric PIN), by the
 * rule of redacted JSON; until 2026-12-06 it was quoted whatever its key, and only plain digits refused.
 */
function numberChanged(raw: string, value: unknown, { token, at, zero }: ChangedNumber): Error {
  const where = jsonPathAt(raw, at);
  const path = pathText(where);
  const message = zero
    ? 'a non-zero number below the range of a double would be stored as 0'
    : redactedAt(value, where)
      ? 'a number past 2^53 would be stored changed: send it as a string'
      : `the number ${token.length > 40 ? `${token.slice(0, 40)}…` : token} is past 2^53 and would be ` +
        `stored as ${String(Number(token))}: send it as a string`;
  return badRequest(`the body is not valid: ${path || '(body)'}: ${message}`, [{ path, message }]);
}

/** Whether the number at `path` of a parsed body would be stored redacted (or cannot be told). */
function redactedAt(value: unknown, path: (string | number)[]): boolean {
  let v: unknown;
  try {
    v = redactJsonValue(value, (s) => s);
  } catch {
    return true;
  }
  for (const p of path) v = (v as Record<string | number, unknown> | null | undefined)?.[p];
  return typeof v !== 'number';
}

/** Turns zod issues into the contract's `errors: [{path, message}]`, paths like `messages[2].role`. */
export function zodErrors(error: z.ZodError): FieldError[] {
  return error.issues.slice(0, 50).map((issue) => ({
    path: issue.path
      .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
      .join(''),
    message: issue.message,
  }));
}

/** Reads the whole body as UTF-8 text, refusing (413) as soon as it passes `maxBytes`. */
async function readLimited(request: Request, maxBytes: number): Promise<string> {
  const all = await readBodyBytes(request, maxBytes);
  try {
    return strictText(all);
  } catch {
    throw badRequest('the body is not valid UTF-8');
  }
}

/** Reads the whole body as raw bytes (webhook signatures cover the bytes), refusing (413) past `maxBytes`. */
export async function readBodyBytes(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes)
    throw payloadTooLarge(`the body is over ${maxBytes} bytes`);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw payloadTooLarge(`the body is over ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}

const LONE = 'a lone UTF-16 surrogate is not Unicode text';

/**
 * The path (`messages[2].content`, as in `errors[].path`) of the first value that cannot be stored as sent,
 * with why, or null: a string or key holding a surrogate with no partner (such text has no UTF-8 form, and
 * stored it would make strict JSON readers refuse the whole session or listing), or a number past a
 * double's range (`1e400` parses as Infinity, which JSON stores as null: until 2026-12-05 it was taken so).
 * Iterative, like `unsafeJson`.
 */
export function badLeaf(value: unknown): { path: string; message: string } | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return { path, message: LONE };
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { path, message: 'a number past the range of a double' };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v).reverse()) {
        // The path is sent back in the 400: a key's lone half is shown as U+FFFD there.
        const key = k.toWellFormed();
        const at = path ? `${path}.${key}` : key;
        if (key !== k) return { path: at, message: LONE };
        stack.push([child, at]);
      }
    }
  }
  return null;
}

/**
 * Why a parsed body cannot be taken: arrays/objects nested more than `limit` deep (checked iteratively: no
 * stack to blow), or a `__proto__` key; null when neither.
 */
export function unsafeJson(value: unknown, limit: number): string | null {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return `JSON nested deeper than ${limit} levels`;
    // JSON.parse makes it an own key, which any copy by assignment would then drop without a word.
    if (Object.hasOwn(v, '__proto__')) return 'a key named __proto__ is not accepted';
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return null;
}
