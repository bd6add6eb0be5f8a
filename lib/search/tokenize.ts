import { stemmer } from 'stemmer';

/**
 * The search tokenizer, the same for documents and queries but for one thing. Unicode-aware: accents are
 * folded (é → e) and case fully (ı → i, ß → ss); CJK text becomes overlapping character bigrams (no
 * dictionary needed), and a document's each character too, so a one-character query word is found; Thai,
 * Lao, Khmer and Myanmar text (no spaces between words) is split into words by Intl.Segmenter; and
 * identifiers stay findable both whole and by part: `ERR_OSSL_EVP_UNSUPPORTED`, `snake_case`, `camelCase`
 * give the whole lowercased identifier plus its parts. English words are stemmed (Porter) and common
 * stopwords dropped. When a document's tokens change, bump LEX_V in segment.ts (stored indexes rebuild).
 */

const STOPWORDS = new Set(
  (
    'a an and are as at be but by for from has have if in into is it its of on or that the ' +
    'their then there these this to was were will with what which who how when where why can ' +
    'do does did not no so than too very s t'
  ).split(' '),
);

/** A word: letters with their marks (vowel signs are letters' parts), digits, `_`. */
const WORD = /[\p{L}\p{M}\p{N}_]+/gu;
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
/** A lowercase word or number: no identifier parts, no CJK, nothing to fold. */
const PLAIN = /^[a-z0-9]+$/;
/**
 * A CJK character: Han, kana, Hangul, and the Common and Inherited characters written only within them
 * (their Script_Extensions): the long-vowel mark ー (and halfwidth ｰ, which NFKD makes ー; until 2026-12-06
 * it cut サーバー into サ, ー, バ), the combining voicing marks NFC leaves (セ゚), 〆, the repeat marks 〱-〵
 * and 〼. Not \p{scx=...} itself: that also takes combining marks used with Latin (U+0305, U+0323).
 */
export const CJK_CHAR =
  /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u3006\u3031-\u3035\u303c\u3099\u309a\u30fc]/u;
/** CJK runs; split by it, a word alternates other text (even indexes) and CJK runs (odd). */
const CJK = new RegExp(`(${CJK_CHAR.source}+)`, 'u');
/** Scripts written without spaces between words, and not CJK: split into words before marks are folded. */
const UNSPACED = /[\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]+/gu;
/**
 * The marks folded away: those on a Latin, Greek, Cyrillic, Hebrew or Arabic letter (accents, as NFKD
 * decomposes them; Hebrew points, Arabic harakat). Not every mark: in Indic and Southeast Asian scripts
 * the marks are vowels (दाल, दिल and दल are three words), and Japanese voicing marks tell が from か.
 */
const ACCENTS = /(?<=[\p{sc=Latn}\p{sc=Grek}\p{sc=Cyrl}\p{sc=Hebr}\p{sc=Arab}])\p{M}+/gu;
let words: Intl.Segmenter | undefined;
const wordsOf = (run: string) =>
  Array.from(
    (words ??= new Intl.Segmenter(undefined, { granularity: 'word' })).segment(run),
    (s) => s.segment,
  );

/**
 * Tokens of `text`, in order, with repeats (term frequencies matter); `doc`: a document's (CJK unigrams too).
 * `wholes` collects each identifier's whole-form token with the part tokens it stands for; `runs` the bigrams
 * of each word of a query's CJK runs.
 */
export function tokenize(
  text: string,
  doc = false,
  wholes?: Map<string, string[]>,
  runs?: string[][],
): string[] {
  const out: string[] = [];
  // Accent and case folding only where there is something to fold (most agent text is ASCII).
  const folded = ASCII.test(text)
    ? text
    : text
        .replace(UNSPACED, (run) => wordsOf(run).join(' '))
        .normalize('NFKD')
        .replace(ACCENTS, '')
        .normalize('NFC')
        .replace(/ı/g, 'i')
        .replace(/ß/g, 'ss')
        .replace(/ẞ/g, 'SS');
  for (const match of folded.matchAll(WORD)) {
    const run = match[0];
    if (PLAIN.test(run)) term(run, out);
    else if (CJK.test(run))
      run
        .split(CJK)
        .forEach((part, i) =>
          i % 2 ? cjkBigrams(part, out, doc, runs) : part && word(part, out, wholes),
        );
    else word(run, out, wholes);
  }
  return out;
}

/** The distinct tokens of a query, in order. */
export function queryTokens(text: string): string[] {
  return parseQuery(text).tokens;
}

/**
 * A query: its distinct tokens, and for each identifier typed in it, the part tokens its whole form stands
 * for. A text holding `powershell` holds what the query `PowerShell` asks for (its whole form), though not
 * the tokens `power` and `shell`. A CJK word (`runs`: each word's bigrams) is held where all its bigrams
 * are, and counts once (its run's other bigrams only score): データベース is not held by データ and ベース apart.
 */
export interface Query {
  tokens: string[];
  parts: ReadonlyMap<string, string[]>;
  runs: string[][];
}

export function parseQuery(text: string): Query {
  const parts = new Map<string, string[]>();
  const runs: string[][] = [];
  return { tokens: [...new Set(tokenize(text, false, parts, runs))], parts, runs };
}

/**
 * How many of the query's tokens a text holds (`has`), a part counted where its whole form is held, a CJK
 * run's bigrams once, where all are; with `has` omitted, how many the two-token rule counts.
 */
export function tokensHeld(query: Query, has = (_token: string) => true): number {
  const wholes = [...query.parts].filter(([whole]) => has(whole));
  return (
    query.tokens.filter(
      (t) => !inWord(t) && (has(t) || wholes.some(([, parts]) => parts.includes(t))),
    ).length + query.runs.filter((run) => run.every(has)).length
  );
}

/** A plural acronym (`APIs`, `PRs`): the word is its singular, so `PR` finds `PRs` as `api` finds `APIs`. */
const PLURAL_ACRONYM = /^\p{Lu}{2,}s$/u;
const lowerWord = (w: string) => (PLURAL_ACRONYM.test(w) ? w.slice(0, -1) : w).toLowerCase();

function word(run: string, out: string[], wholes?: Map<string, string[]>): void {
  const parts = run
    .split(/_+|(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})(?!\p{Lu}s$)/u)
    .filter(Boolean);
  const whole = lowerWord(run.replace(/^_+|_+$/g, ''));
  if (parts.length > 1) {
    // An identifier: the whole of it (stemmed as the same word in lower case is: `PowerShell` and
    // `powershell` meet), and each part. A plural acronym (`APIs`, `GPUs`) is one word.
    const at = out.length;
    if (whole) term(whole, out);
    const kept = out.length > at;
    for (const p of parts) term(lowerWord(p), out);
    if (wholes && kept) wholes.set(out[at]!, out.slice(at + 1));
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

/**
 * A CJK run's bigrams; a document's also each character (a query's only a lone one), so a one-character
 * word is found while a longer query word still has to match as bigrams, not as scattered characters.
 * A query's run is split into words (Intl.Segmenter: a sentence has no spaces), a one-character word
 * joined to its neighbour, and each word gives `runs` its bigrams: it is held only whole (review
 * s67e: データベース was found by データを送った and ベースギター, two of its bigrams each), and a sentence
 * is its words (review s67j: 数据库连接失败 was one word, held only where 库连 and 接失 were too). The
 * other bigrams only score.
 */
function cjkBigrams(run: string, out: string[], doc: boolean, runs?: string[][]): void {
  const chars = [...run];
  for (let i = 0; i < chars.length; i++) {
    if (doc || chars.length === 1) out.push(chars[i]!);
    if (i + 1 < chars.length) out.push(chars[i]! + chars[i + 1]!);
  }
  if (!runs || !chars[1]) return;
  // A one-character word joins the word before it (the next, at the start): 数据|库 is 数据库, 猫|の|写真
  // is 猫の写真 (review s67k: dropped, 数据库 found 数据分析报告, 猫の写真 犬の写真).
  const words: string[] = [];
  let lone = '';
  for (const w of wordsOf(run))
    if ([...w][1]) (words.push(lone + w), (lone = ''));
    else if (words[0]) words[words.length - 1] += w;
    else lone += w;
  if (lone) words.push(lone);
  for (const w of words) {
    const c = [...w];
    const r = [...new Set(c.slice(1).map((x, i) => c[i] + x))];
    // A word typed twice is one word.
    if (!runs.some((h) => h + '' === r + '')) runs.push(r);
  }
}

/** A query's CJK bigram: it counts only with its word (`runs`), where all of the word's are held. */
export const inWord = (t: string): boolean => CJK_CHAR.test(t) && !![...t][1];
