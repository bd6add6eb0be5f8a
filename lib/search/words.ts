import type { LexDoc } from './docs.js';
import type { Resolved } from './lsm.js';
import type { LexSegment } from './segment.js';
import { CJK_CHAR } from './tokenize.js';

/**
 * The built-in local embedder's word space, used when no embeddings service is configured: a word's
 * vector is the counts of its character bigrams and trigrams (of `^word$`), and a query word that no
 * live session holds is matched to the index's words nearest to it, so a misspelled word (`kubernets`,
 * `databse`, `pyhton`) still finds its sessions. Nothing is stored for it: the vocabulary is the lexical
 * index's, read at query time. A word is near when the cosine of the two vectors is at least NEAR_COSINE,
 * or when one edit (a letter added, dropped, changed, or two swapped) turns one into the other, which
 * catches what n-grams miss in short words (a swap changes most of a short word's trigrams), or when the
 * index's word (a stem) begins the query word, which has up to 4 letters more.
 */

/** A query word the index lacks, and a word of the index standing in for it, scored this much lower. */
export interface NearWord {
  term: string;
  weight: number;
}

export const WORD_SPACE = 'local/words-v1';
const NEAR_COSINE = 0.7;
/** Shorter words are left exact: one edit away from `log` are `fog`, `lot`, `loc`, ... */
const MIN_LENGTH = 4;
/** Longer letter runs are not words a person misspells (a DNA read, a base32 blob). */
const MAX_LENGTH = 20;
const PER_WORD = 3;
/** A query may hold hundreds of words (4,096 characters): the first 8 unheld ones are looked up. */
const MAX_PROBES = 8;
/** Terms a probe compares closely at most, whatever the vocabulary holds. */
const MAX_CHECKS = 4096;
/** Only words of letters: numbers, versions and codes one digit apart are different things. */
const LETTERS = /^\p{L}+$/u;
/** CJK text (ー too) is indexed as character bigrams, not words: near bigrams mean nothing. */
const CJK = CJK_CHAR;

/**
 * Whether a token is a word near words are for: 4 to 20 letters, not CJK, and of more than a third as
 * many distinct letters as it is long (a run of few letters, `acgtacgtgtca`, is data, and any two such
 * runs share most n-grams).
 */
export function wordLike(t: string): boolean {
  if (t.length < MIN_LENGTH || t.length > MAX_LENGTH || !LETTERS.test(t) || CJK.test(t))
    return false;
  return new Set(t).size * 3 > t.length;
}

/**
 * The query's tokens that no live session holds (`held`), each with up to 3 near words that live sessions
 * hold; none for `exact` tokens (codes typed in capitals: `ENFILE` is not a misspelled `EMFILE`), and never
 * another of the query's tokens (one stored word would count for two).
 */
export function nearWords(
  res: Resolved<LexDoc, LexSegment>,
  tokens: readonly string[],
  held: (term: string) => boolean,
  exact: ReadonlySet<string> = new Set(),
): Map<string, NearWord[]> {
  const out = new Map<string, NearWord[]>();
  const asked = new Set(tokens);
  const wanted = tokens
    .filter((t) => !exact.has(t) && wordLike(t) && !held(t))
    .slice(0, MAX_PROBES);
  if (wanted.length === 0) return out;
  const fresh: string[] = [];
  for (const ref of res.live.values())
    if ('doc' in ref) for (const t of ref.doc.tf.keys()) fresh.push(t);
  for (const token of wanted) {
    const probe = new Probe(token);
    const best = new Best(PER_WORD + 5);
    let checks = 0;
    const consider = (term: string) => {
      if (checks >= MAX_CHECKS || asked.has(term) || best.has(term) || !wordLike(term)) return;
      checks++;
      nearWork.checks++;
      const weight = probe.nearness(term);
      if (weight > 0) best.offer(term, weight);
    };
    for (const seg of res.segments) {
      const { masks, lengths } = signaturesOf(seg);
      const terms = seg.terms;
      for (let i = 0; i < terms.length && checks < MAX_CHECKS; i++)
        if (probe.mayBeNear(masks[i]!, lengths[i]!)) consider(terms[i]!);
    }
    for (const term of fresh) if (probe.mayBeNear(letterMask(term), term.length)) consider(term);
    // A term whose sessions are all gone is left.
    const near = best
      .sorted()
      .filter((w) => held(w.term))
      .slice(0, PER_WORD);
    if (near.length) out.set(token, near);
  }
  return out;
}

/** Terms the probes compared closely since a test set it to 0 (a deterministic measure of the work). */
export const nearWork = { checks: 0 };

/** The best few terms by weight (ties: the first in term order), without sorting every candidate. */
class Best {
  private readonly items: NearWord[] = [];
  constructor(private readonly k: number) {}

  has(term: string): boolean {
    return this.items.some((w) => w.term === term);
  }

  offer(term: string, weight: number): void {
    const better = (a: NearWord, b: NearWord) =>
      a.weight > b.weight || (a.weight === b.weight && a.term < b.term);
    const item = { term, weight };
    if (this.items.length === this.k && !better(item, this.items[this.k - 1]!)) return;
    let i = this.items.length;
    while (i > 0 && better(item, this.items[i - 1]!)) i--;
    this.items.splice(i, 0, item);
    if (this.items.length > this.k) this.items.pop();
  }

  sorted(): NearWord[] {
    return [...this.items];
  }
}

/**
 * Each term's letters as a 32-bit set, and its length: a scan of a large vocabulary looks closer only at
 * the terms of about the probe's length whose letters differ in a few (one edit changes at most two).
 */
const signatures = new WeakMap<LexSegment, { masks: Uint32Array; lengths: Uint16Array }>();

function signaturesOf(seg: LexSegment): { masks: Uint32Array; lengths: Uint16Array } {
  let had = signatures.get(seg);
  if (!had) {
    const terms = seg.terms;
    had = { masks: new Uint32Array(terms.length), lengths: new Uint16Array(terms.length) };
    for (let i = 0; i < terms.length; i++) {
      had.masks[i] = letterMask(terms[i]!);
      had.lengths[i] = Math.min(terms[i]!.length, 0xffff);
    }
    signatures.set(seg, had);
  }
  return had;
}

function letterMask(word: string): number {
  let m = 0;
  for (let i = 0; i < word.length; i++) m |= 1 << (word.charCodeAt(i) & 31);
  return m >>> 0;
}

function bitCount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** One query word's vector, compared with many index words. */
class Probe {
  private readonly grams = new Map<string, number>();
  private readonly norm: number;
  private readonly slack: number;
  private readonly mask: number;

  constructor(readonly word: string) {
    this.mask = letterMask(word);
    let sq = 0;
    forGrams(word, (g) => this.grams.set(g, (this.grams.get(g) ?? 0) + 1));
    for (const n of this.grams.values()) sq += n * n;
    this.norm = Math.sqrt(sq);
    this.slack = Math.max(2, Math.floor(word.length / 3));
  }

  /** A cheap test that rules most terms out: a near term has about the word's length and letters. */
  mayBeNear(mask: number, length: number): boolean {
    return (
      Math.abs(length - this.word.length) <= this.slack && bitCount((mask ^ this.mask) >>> 0) <= 4
    );
  }

  /** 0 when `term` is not near; else how much it stands for the word: its cosine, at least 0.5. */
  nearness(term: string): number {
    const w = this.word;
    if (Math.abs(term.length - w.length) > this.slack || term === w || !LETTERS.test(term))
      return 0;
    const seen = new Map<string, number>();
    let dot = 0;
    let sq = 0;
    forGrams(term, (g) => {
      const n = (seen.get(g) ?? 0) + 1;
      seen.set(g, n);
      sq += 2 * n - 1; // Σ n² grows by (n+1)² - n²
      dot += this.grams.get(g) ?? 0; // Σ a·b grows by a when b grows by 1
    });
    const cosine = dot / (this.norm * Math.sqrt(sq));
    if (cosine >= NEAR_COSINE) return Math.min(cosine, 0.9);
    if (cosine < 0.3) return 0;
    // The index holds stems: a misspelled word keeps the suffix its stem would have lost (`deploymnt`
    // for `deploy`, from `deployment`).
    if (term.length >= MIN_LENGTH && w.length - term.length <= 4 && w.startsWith(term)) return 0.5;
    return oneEditApart(w, term) ? 0.5 : 0;
  }
}

function forGrams(word: string, each: (gram: string) => void): void {
  const p = `^${word}$`;
  for (let i = 0; i + 2 <= p.length; i++) each(p.slice(i, i + 2));
  for (let i = 0; i + 3 <= p.length; i++) each(p.slice(i, i + 3));
}

/** Whether one edit turns `a` into `b`: a letter inserted, deleted or changed, or two adjacent swapped. */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // changed
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // swapped
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}
