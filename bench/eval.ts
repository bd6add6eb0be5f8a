// Search quality on the public Cranfield collection: `npm run eval` (writes bench/results.eval.json).
// nDCG@10 (gain 5 - grade), recall@10 and recall@100 for the lexical path, next to term overlap measured
// in the same run and the reference figures of shared/data/cranfield/README.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bm25Index } from '../test/support/bm25-reference.js';
import { localVector } from '../lib/search/embed.js';
import { fuse, rankLexical, rankVectors } from '../lib/search/engine.js';
import type { DocRef, Resolved } from '../lib/search/lsm.js';
import {
  decodeLexSegment,
  encodeLexSegment,
  VecSegment,
  type LexSegment,
} from '../lib/search/segment.js';
import { parseQuery, queryTokens, tokenize } from '../lib/search/tokenize.js';
import { nearWords } from '../lib/search/words.js';
import type { LexDoc } from '../lib/search/docs.js';

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = process.env.CRANFIELD_DIR ?? join(here, '..', '..', 'shared', 'data', 'cranfield');

/** Splits a Cranfield file into records: `.I id` then fields `.X` with text. */
function records(file: string): { id: string; fields: Record<string, string> }[] {
  const out: { id: string; fields: Record<string, string> }[] = [];
  let field = '';
  for (const line of readFileSync(join(dataDir, file), 'utf8').split('\n')) {
    const marker = /^\.([A-Z])(?:\s+(\S+))?/.exec(line);
    if (marker?.[1] === 'I') {
      out.push({ id: marker[2]!, fields: {} });
      field = '';
    } else if (marker) field = marker[1]!;
    else if (field && out.length) {
      const f = out[out.length - 1]!.fields;
      f[field] = (f[field] ? f[field] + ' ' : '') + line.trim();
    }
  }
  return out;
}

const docs = records('cran.all.1400');
const queries = records('cran.qry').map((q, i) => ({ n: String(i + 1), text: q.fields.W ?? '' }));
const qrels = new Map<string, Map<string, number>>();
for (const line of readFileSync(join(dataDir, 'cranqrel'), 'utf8').split('\n')) {
  const [q, d, g] = line.trim().split(/\s+/);
  if (!q || !d || !g) continue;
  const grade = Number(g);
  if (grade < 1 || grade > 4) continue;
  if (!qrels.has(q)) qrels.set(q, new Map());
  qrels.get(q)!.set(d, 5 - grade);
}

function evaluate(rank: (text: string) => string[]) {
  let ndcg = 0;
  let r10 = 0;
  let r100 = 0;
  let counted = 0;
  for (const q of queries) {
    const rel = qrels.get(q.n);
    if (!rel || rel.size === 0) continue;
    counted++;
    const ranked = rank(q.text);
    const dcg = ranked
      .slice(0, 10)
      .reduce((s, d, i) => s + (rel.get(d) ?? 0) / Math.log2(i + 2), 0);
    const ideal = [...rel.values()]
      .sort((a, b) => b - a)
      .slice(0, 10)
      .reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
    ndcg += ideal > 0 ? dcg / ideal : 0;
    r10 += ranked.slice(0, 10).filter((d) => rel.has(d)).length / rel.size;
    r100 += ranked.slice(0, 100).filter((d) => rel.has(d)).length / rel.size;
  }
  return {
    ndcg10: +(ndcg / counted).toFixed(3),
    recall10: +(r10 / counted).toFixed(3),
    recall100: +(r100 / counted).toFixed(3),
    queries: counted,
  };
}

const bm25 = new Bm25Index();
const docTokens = new Map<string, Set<string>>();
const t0 = performance.now();
for (const d of docs) {
  const tokens = tokenize(d.fields.W ?? '');
  bm25.add(d.id, tokens);
  docTokens.set(d.id, new Set(tokens));
}
const indexMs = performance.now() - t0;

// The stored path: documents through the segment format and the engine's ranking functions.
const lexDocs = docs.map((d) => {
  const tf = new Map<string, number>();
  const tokens = tokenize(d.fields.W ?? '');
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  return { key: { id: d.id, c: 0, r: 1 }, doc: { len: tokens.length, tf } as LexDoc };
});
const segment = decodeLexSegment(encodeLexSegment(lexDocs));
const lexRes: Resolved<LexDoc, LexSegment> = {
  segments: [segment],
  live: new Map<string, DocRef<LexDoc>>(docs.map((d, di) => [d.id, { si: 0, di }])),
  missing: [],
};
const dims = 256;
const rows = new Float32Array(docs.length * dims);
docs.forEach((d, i) => rows.set(localVector(d.fields.W ?? ''), i * dims));
const vecSeg = new VecSegment(
  lexDocs.map((d) => d.key),
  dims,
  rows,
);
const vecRes: Resolved<Float32Array, VecSegment> = {
  segments: [vecSeg],
  live: new Map<string, DocRef<Float32Array>>(docs.map((d, di) => [d.id, { si: 0, di }])),
  missing: [],
};
const lexicalRank = (text: string) =>
  rankLexical(lexRes, queryTokens(text))
    .slice(0, 100)
    .map((h) => h.id);
const vectorRank = (text: string) => rankVectors(vecRes, localVector(text), 100).map((h) => h.id);
const fused = (weight: number) => (text: string) =>
  fuse([
    { ids: lexicalRank(text), weight: 1 },
    { ids: vectorRank(text), weight },
  ])
    .slice(0, 100)
    .map((h) => h.id);
// The built-in local embedder's near words (words.ts): what the engine does without an embeddings service.
const vocabulary = new Set<string>();
for (const set of docTokens.values()) for (const t of set) vocabulary.add(t);
let nearCalls = 0;
let nearMs = 0;
const withNear = (text: string) => {
  const q = parseQuery(text);
  const t = performance.now();
  const near = nearWords(lexRes, q.tokens, (term) => vocabulary.has(term));
  nearMs += performance.now() - t;
  nearCalls++;
  return rankLexical(lexRes, q.tokens, Infinity, 0, q.parts, near)
    .slice(0, 100)
    .map((h) => h.id);
};

/**
 * The same queries as a hurried user types them: each word of 5 letters or more, with probability 1/4,
 * gets one typo (a letter dropped, doubled, changed to a neighbour on the keyboard, or two swapped), from
 * a fixed seed so every run types the same.
 */
const KEYS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];
function neighbour(c: string, r: () => number): string {
  const row = KEYS.find((k) => k.includes(c));
  if (!row) return c;
  const i = row.indexOf(c);
  const choices = [row[i - 1], row[i + 1]].filter((x): x is string => !!x);
  return choices[Math.floor(r() * choices.length)]!;
}
function mistyped(text: string, r: () => number): string {
  return text.replace(/[a-z]{5,}/g, (w) => {
    if (r() >= 0.25) return w;
    const i = 1 + Math.floor(r() * (w.length - 2));
    switch (Math.floor(r() * 4)) {
      case 0:
        return w.slice(0, i) + w.slice(i + 1);
      case 1:
        return w.slice(0, i) + w[i] + w.slice(i);
      case 2:
        return w.slice(0, i) + neighbour(w[i]!, r) + w.slice(i + 1);
      default:
        return w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2);
    }
  });
}
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const typoRandom = seeded(20261206);
const typed = new Map(queries.map((q) => [q.text, mistyped(q.text, typoRandom)]));
const typoWords = [...typed].reduce(
  (n, [a, b]) => n + a.split(/\s+/).filter((w, i) => w !== b.split(/\s+/)[i]).length,
  0,
);

/** odek's DeepSearch rule: sessions with ≥ 2 distinct query tokens (or the only one), by distinct count. */
const deepRank = (text: string) => {
  const q = queryTokens(text);
  const need = q.length === 1 ? 1 : 2;
  return [...docTokens]
    .map(([id, set]) => ({ id, n: q.filter((t) => set.has(t)).length }))
    .filter((x) => x.n >= need)
    .sort((a, b) => b.n - a.n || Number(a.id) - Number(b.id))
    .slice(0, 100)
    .map((x) => x.id);
};

const results = {
  date: new Date().toISOString(),
  command: 'npm run eval',
  collection: { documents: docs.length, queries: queries.length, judged: qrels.size },
  // The in-memory reference BM25 (test/support), to show the stored path ranks exactly as it does.
  reference_bm25_in_memory: evaluate((text) =>
    bm25.search(queryTokens(text), 100).map((s) => s.id),
  ),
  lexical_index_path: evaluate(lexicalRank),
  // The default without an embeddings service: query words the index lacks go to their near words.
  lexical_with_local_near_words: evaluate(withNear),
  mistyped_queries: {
    how: 'each query word of 5+ letters mistyped with probability 1/4 (one drop, double, neighbour key or swap; seed 20261206)',
    words_mistyped: typoWords,
    lexical_exact_words: evaluate((text) => lexicalRank(typed.get(text)!)),
    lexical_with_local_near_words: evaluate((text) => withNear(typed.get(text)!)),
  },
  deepsearch_rule: evaluate(deepRank),
  local_embedder_alone: evaluate(vectorRank),
  // The test embeddings server answers the same hashing vectors, so these are the hybrid with it too.
  hybrid_rrf_equal_weights: evaluate(fused(1)),
  hybrid_rrf_vector_weight_0_5: evaluate(fused(0.5)),
  hybrid_rrf_vector_weight_0_3: evaluate(fused(0.3)),
  term_overlap_same_tokenizer: evaluate((text) => {
    const q = queryTokens(text);
    return [...docTokens]
      .map(([id, set]) => ({ id, n: q.filter((t) => set.has(t)).length }))
      .filter((x) => x.n > 0)
      .sort((a, b) => b.n - a.n || Number(a.id) - Number(b.id))
      .slice(0, 100)
      .map((x) => x.id);
  }),
  reference_readme: {
    term_overlap: 0.232,
    random_projection_256: 0.159,
    plain_bm25: 0.343,
    minisearch: 0.316,
  },
  index_ms: Math.round(indexMs),
  near_words_ms_per_query: +(nearMs / nearCalls).toFixed(2),
};
console.log(JSON.stringify(results, null, 2));
writeFileSync(join(here, 'results.eval.json'), JSON.stringify(results, null, 2) + '\n');
