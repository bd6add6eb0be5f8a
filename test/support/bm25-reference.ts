/**
 * A plain in-memory BM25, the reference the stored index is checked against (test/search/segment.test.ts)
 * and compared with on Cranfield (bench/eval.ts). Search itself ranks with rankLexical (lib/search/engine.ts).
 */
export interface Bm25Options {
  k1?: number;
  b?: number;
}

export interface Scored {
  id: string;
  score: number;
}

export class Bm25Index {
  private readonly k1: number;
  private readonly b: number;
  private readonly postings = new Map<string, Map<string, number>>();
  private readonly lengths = new Map<string, number>();
  private totalLength = 0;

  constructor(options: Bm25Options = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
  }

  /** Number of documents. */
  get size(): number {
    return this.lengths.size;
  }

  /** Adds (or replaces) a document. */
  add(id: string, tokens: string[]): void {
    this.remove(id);
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      let list = this.postings.get(t);
      if (!list) this.postings.set(t, (list = new Map()));
      list.set(id, n);
    }
    this.lengths.set(id, tokens.length);
    this.totalLength += tokens.length;
  }

  /** Removes a document; a missing id is fine. */
  remove(id: string): void {
    const length = this.lengths.get(id);
    if (length === undefined) return;
    for (const [t, list] of this.postings) {
      if (list.delete(id) && list.size === 0) this.postings.delete(t);
    }
    this.lengths.delete(id);
    this.totalLength -= length;
  }

  /** The best `limit` documents for the query tokens (each distinct token counts once). */
  search(query: string[], limit: number): Scored[] {
    const n = this.lengths.size;
    if (n === 0) return [];
    const avg = this.totalLength / n;
    const scores = new Map<string, number>();
    for (const t of new Set(query)) {
      const list = this.postings.get(t);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.size + 0.5) / (list.size + 0.5));
      for (const [id, tf] of list) {
        const norm = tf + this.k1 * (1 - this.b + (this.b * this.lengths.get(id)!) / avg);
        scores.set(id, (scores.get(id) ?? 0) + (idf * tf * (this.k1 + 1)) / norm);
      }
    }
    return [...scores]
      .map(([id, score]) => ({ id, score }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
  }
}
