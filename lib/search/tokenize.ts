import { stemmer } from 'stemmer';

/**
 * The search tokenizer, the same for documents and queries. Unicode-aware: accents are folded (é → e),
 * CJK text becomes overlapping character bigrams (no dictionary needed), and identifiers stay findable
 * both whole and by part: `ERR_OSSL_EVP_UNSUPPORTED`, `snake_case`, `camelCase` give the whole lowercased
 * identifier plus its parts. English words are stemmed (Porter) and common stopwords dropped.
 */

const STOPWORDS = new Set(
  (
    'a an and are as at be but by for from has have if in into is it its of on or that the ' +
    'their then there these this to was were will with what which who how when where why can ' +
    'do does did not no so than too very s t'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}_]+/gu;
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
/** A lowercase word or number: no identifier parts, no CJK, nothing to fold. */
const PLAIN = /^[a-z0-9]+$/;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_SCRIPTS = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}`;
const CJK_RUN = new RegExp(`[${CJK_SCRIPTS}]+|[^${CJK_SCRIPTS}]+`, 'gu');

/** Tokens of `text`, in order, with repeats (term frequencies matter). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  // Accent folding only where there is something to fold (most agent text is ASCII).
  const folded = ASCII.test(text)
    ? text
    : text
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .normalize('NFC');
  for (const match of folded.matchAll(WORD)) {
    const run = match[0];
    if (PLAIN.test(run)) term(run, out);
    else if (CJK.test(run)) {
      for (const part of run.match(CJK_RUN) ?? []) {
        if (CJK.test(part)) cjkBigrams(part, out);
        else word(part, out);
      }
    } else word(run, out);
  }
  return out;
}

/** The distinct tokens of a query, in order. */
export function queryTokens(text: string): string[] {
  return [...new Set(tokenize(text))];
}

function word(run: string, out: string[]): void {
  const parts = run
    .split(/_+|(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u)
    .filter(Boolean);
  const whole = run.toLowerCase().replace(/^_+|_+$/g, '');
  if (parts.length > 1) {
    // An identifier: the whole of it, and each part.
    if (whole) out.push(whole);
    for (const p of parts) term(p.toLowerCase(), out);
  } else if (whole) term(whole, out);
}

function term(t: string, out: string[]): void {
  if (t.length === 0 || STOPWORDS.has(t)) return;
  if (!/^[a-z]{4,}$/.test(t)) {
    out.push(t);
    return;
  }
  let stem = STEMS.get(t);
  if (stem === undefined) {
    stem = stemmer(t);
    // Words repeat (Zipf): a bounded memo makes stemming nearly free. Cleared, not evicted, when full.
    if (STEMS.size >= 100_000) STEMS.clear();
    STEMS.set(t, stem);
  }
  out.push(stem);
}

const STEMS = new Map<string, string>();

function cjkBigrams(run: string, out: string[]): void {
  const chars = [...run];
  if (chars.length === 1) out.push(chars[0]!);
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
}
