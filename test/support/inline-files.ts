// Shared by the inline-file redaction tests: secrets, a `.env` holding them, and what a bucket reader sees.
import { expect } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';

export type App = Awaited<ReturnType<typeof makeApp>>;

export const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
export const GITHUB = 'ghp_' + rep('Zq8xW3vN5', 36);
export const STRIPE = 'sk_live_' + rep('51HxYzAbCdEf', 40);
export const DOTENV = `NODE_ENV=production\nGITHUB_TOKEN=${GITHUB}\nSTRIPE_SECRET_KEY=${STRIPE}\n`;
export const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');
export const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/**
 * Every stored object as one text, with every base64 or base64url run in it decoded as UTF-8, Latin-1
 * and UTF-16LE (at both byte alignments): what a bucket reader can read.
 */
export async function bucketText(app: App): Promise<string> {
  await app.sessions.settled();
  const keys = await listAll(app.objects, '');
  const bodies = await Promise.all(keys.map(async (k) => text((await app.objects.get(k))!.body)));
  const all = bodies.join('\n');
  const runs = [...all.matchAll(/[A-Za-z0-9+/_-]{40,}={0,2}/g)].map((m) =>
    Buffer.from(m[0].replace(/-/g, '+').replace(/_/g, '/'), 'base64'),
  );
  return [
    all,
    ...runs.flatMap((b) => [
      b.toString('utf8'),
      b.toString('latin1'),
      b.toString('utf16le'),
      b.subarray(1).toString('utf16le'),
    ]),
  ].join('\n');
}

/** Creates a session whose one user message has `content` (and the session `extra` fields): 201. */
export async function save(app: App, content: unknown, extra: Record<string, unknown> = {}) {
  const made = await app.call('POST', '/v1/sessions', {
    body: { task: 'why does prod crash?', messages: [{ role: 'user', content }], ...extra },
  });
  expect(made.status, made.text).toBe(201);
  return made;
}

export const HEAD = 'data:text/plain;base64,';
/** `s` in lines of `width` characters joined by `eol`, as `base64` and PEM wrap it. */
export const wrap = (s: string, width: number, eol: string) =>
  s.match(new RegExp(`.{1,${width}}`, 'g'))!.join(eol);

/** Saves `content` as one user message: what GET answers for it, the redactions header, the bucket. */
export async function roundTrip(content: unknown) {
  const app = await makeApp();
  const made = await save(app, content);
  const got = await app.call('GET', `/v1/sessions/${made.json.id}`);
  expect(got.status).toBe(200);
  return {
    content: got.json.messages[0].content,
    redactions: made.headers.get('satchel-redactions'),
    stored: await bucketText(app),
  };
}

/**
 * The file a reader gets from a URL's base64: blanks skipped, each run up to a padding `=` decoded on its
 * own (a line stored as sent after a re-encoded one starts a run of its own).
 */
export const fileOf = (base64: string) =>
  base64
    .replace(/\s/g, '')
    .split(/=+/)
    .map((run) => Buffer.from(run, 'base64').toString('latin1'))
    .join('');

/** A text content part. */
export const t = (text: string) => ({ type: 'text', text });
/** `s` in pieces of `n` characters, as a stream delivers it. */
export const pieces = (s: string, n: number) => s.match(new RegExp(`[^]{1,${n}}`, 'g'))!;
/** The parts' texts run together, as GET answers them. */
export const runOn = (c: unknown) =>
  Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? '').join('') : String(c);
/** The bucket's text with part separators and line breaks taken out: a key stored in pieces reads whole. */
export const glued = (stored: string) =>
  stored
    .replace(/"\}?,\{"type":"(?:text|refusal)","(?:text|refusal)":"/g, '')
    .replace(/\\n|\n/g, '');
/** The file a reader decodes from the first data: URL in `s` (base64 or base64url, blanks skipped), as Latin-1. */
export const fileIn = (s: string) => {
  const m = /;base64,([\w+/=\s-]*)/.exec(s)!;
  const b64 = m[1]!.replace(/\s/g, '').replace(/-/g, '+').replace(/_/g, '/');
  return Buffer.from(b64, 'base64').toString('latin1');
};
