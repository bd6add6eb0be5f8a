import type { DocKey, LexDoc } from './docs.js';

/**
 * Binary formats of the search indexes in the bucket. Pure functions, no I/O.
 *
 * Lexical segment (`.lex`): u32 LE header length, the header (JSON: docs as [id, c, r, len], terms in
 * order), zero padding to 4 bytes, u32 LE end offset of each term's postings, then the postings: for each
 * term, varint (doc index delta, term frequency) pairs. A reader parses the header and keeps the postings
 * as bytes; only the query's terms are ever decoded.
 *
 * Vector segment: `.json` (dims and docs as [id, c, r]) and `.f32`, the raw little-endian float32 rows
 * in doc order. A vector record is one raw `.f32` row; its doc key is in its object key.
 */

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Raised for bytes that are not a valid index object; the index then rebuilds from the sessions. */
export class CorruptIndexError extends Error {
  constructor(what: string) {
    super(`corrupt search index object: ${what}`);
    this.name = 'CorruptIndexError';
  }
}

// ---- lexical ----

/**
 * The lexical format's version, in records and segments: bumped whenever the tokenizer gives a document
 * other tokens. An older record or segment does not decode (CorruptIndexError), so it is built again from
 * the session objects (a record) or the index is rebuilt (a segment). 2: CJK unigrams, Thai/Lao/Khmer/Myanmar
 * words, full case folding (2026-12). 3: identifiers' whole forms stemmed, plural acronyms whole, vowel
 * signs of Indic and Southeast Asian scripts kept (2026-12-05). 4: a plural acronym is its singular (`PRs`
 * is `pr`, 2026-12-05). 5: the long-vowel mark ー is part of a CJK run (`サーバー` gives `サー`, `ーバ`, `バー`,
 * not `サ`, `ー`, `バ`; 2026-12-06).
 */
const LEX_V = 5;

/** A lexical record: one session version's document (JSON). */
export function encodeLexRecord(key: DocKey, doc: LexDoc): Uint8Array {
  return enc.encode(
    JSON.stringify({
      v: LEX_V,
      id: key.id,
      c: key.c,
      r: key.r,
      len: doc.len,
      t: Object.fromEntries(doc.tf),
    }),
  );
}

/** Parses a lexical record; throws CorruptIndexError. */
export function decodeLexRecord(body: Uint8Array): { key: DocKey; doc: LexDoc } {
  let v: { v?: number; id?: unknown; c?: unknown; r?: unknown; len?: unknown; t?: unknown };
  try {
    v = JSON.parse(dec.decode(body));
  } catch {
    throw new CorruptIndexError('lexical record is not JSON');
  }
  if (
    v.v !== LEX_V ||
    typeof v.id !== 'string' ||
    typeof v.c !== 'number' ||
    typeof v.r !== 'number' ||
    typeof v.len !== 'number' ||
    typeof v.t !== 'object' ||
    v.t === null
  ) {
    throw new CorruptIndexError('lexical record has the wrong shape');
  }
  const tf = new Map<string, number>();
  for (const [term, n] of Object.entries(v.t as Record<string, unknown>))
    if (typeof n === 'number' && n > 0) tf.set(term, n);
  return { key: { id: v.id, c: v.c, r: v.r }, doc: { len: v.len, tf } };
}

/** A lexical segment held in memory: the doc table, and postings decoded on demand. */
export class LexSegment {
  readonly docs: DocKey[];
  readonly lens: Uint32Array;
  readonly totalLen: number;
  /** Sorted (the encoder sorts them): a binary search finds a term without a Map's memory per term. */
  private readonly termList: string[];
  private readonly ends: Uint32Array;
  private readonly postings: Uint8Array;

  constructor(
    docs: DocKey[],
    lens: Uint32Array,
    termList: string[],
    ends: Uint32Array,
    postings: Uint8Array,
  ) {
    this.docs = docs;
    this.lens = lens;
    this.termList = termList;
    this.ends = ends;
    this.postings = postings;
    let total = 0;
    for (const n of lens) total += n;
    this.totalLen = total;
  }

  /** Bytes this segment keeps in memory, roughly. */
  get memoryBytes(): number {
    let chars = 0;
    for (const t of this.termList) chars += t.length;
    // A string costs about 16 bytes plus its characters; a slot of the array 8; a doc key about 80.
    return (
      this.postings.byteLength +
      this.ends.byteLength +
      this.lens.byteLength +
      this.termList.length * 24 +
      chars +
      this.docs.length * 80
    );
  }

  /** The segment's terms, sorted. */
  get terms(): readonly string[] {
    return this.termList;
  }

  /** The postings of a term: doc indexes and term frequencies, in doc order. */
  postingsOf(term: string): { docs: Uint32Array; tfs: Uint32Array } | null {
    const i = this.indexOf(term);
    if (i < 0) return null;
    const start = i === 0 ? 0 : this.ends[i - 1]!;
    return decodePostings(this.postings, start, this.ends[i]!);
  }

  private indexOf(term: string): number {
    let lo = 0;
    let hi = this.termList.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.termList[mid]!;
      if (t === term) return mid;
      if (t < term) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Every document's term frequencies (for merging segments). */
  all(): LexDoc[] {
    const out: LexDoc[] = this.docs.map((_, i) => ({ len: this.lens[i]!, tf: new Map() }));
    for (let t = 0; t < this.termList.length; t++) {
      const p = decodePostings(this.postings, t === 0 ? 0 : this.ends[t - 1]!, this.ends[t]!);
      for (let k = 0; k < p.docs.length; k++) out[p.docs[k]!]!.tf.set(this.termList[t]!, p.tfs[k]!);
    }
    return out;
  }
}

/** Encodes documents into one lexical segment. */
export function encodeLexSegment(entries: { key: DocKey; doc: LexDoc }[]): Uint8Array {
  const postings = new Map<string, number[]>();
  entries.forEach(({ doc }, i) => {
    for (const [term, tf] of doc.tf) {
      let list = postings.get(term);
      if (!list) postings.set(term, (list = []));
      list.push(i, tf);
    }
  });
  const terms = [...postings.keys()].sort();
  const header = enc.encode(
    JSON.stringify({
      v: LEX_V,
      docs: entries.map(({ key, doc }) => [key.id, key.c, key.r, doc.len]),
      terms,
    }),
  );
  const body = new VarintWriter();
  const ends = new Uint32Array(terms.length);
  terms.forEach((term, t) => {
    const list = postings.get(term)!;
    let last = 0;
    for (let k = 0; k < list.length; k += 2) {
      body.write(list[k]! - last);
      body.write(list[k + 1]!);
      last = list[k]!;
    }
    ends[t] = body.length;
  });
  const pad = (4 - ((4 + header.length) % 4)) % 4;
  const out = new Uint8Array(4 + header.length + pad + ends.byteLength + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, header.length, true);
  out.set(header, 4);
  let at = 4 + header.length + pad;
  for (const e of ends) {
    view.setUint32(at, e, true);
    at += 4;
  }
  out.set(body.bytes(), at);
  return out;
}

/** Parses a lexical segment; throws CorruptIndexError. */
export function decodeLexSegment(bytes: Uint8Array): LexSegment {
  try {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const headerLength = view.getUint32(0, true);
    const header = JSON.parse(dec.decode(bytes.subarray(4, 4 + headerLength))) as {
      v: number;
      docs: [string, number, number, number][];
      terms: string[];
    };
    if (header.v !== LEX_V || !Array.isArray(header.docs) || !Array.isArray(header.terms))
      throw new Error('shape');
    const pad = (4 - ((4 + headerLength) % 4)) % 4;
    let at = 4 + headerLength + pad;
    const ends = new Uint32Array(header.terms.length);
    for (let t = 0; t < ends.length; t++, at += 4) ends[t] = view.getUint32(at, true);
    const postings = bytes.slice(at);
    if (ends.length > 0 && ends[ends.length - 1] !== postings.length)
      throw new Error('postings length');
    for (let t = 1; t < header.terms.length; t++)
      if (!(header.terms[t - 1]! < header.terms[t]!)) throw new Error('terms not sorted');
    const docs = header.docs.map(([id, c, r]) => ({ id, c, r }));
    const lens = Uint32Array.from(header.docs, (d) => d[3]);
    return new LexSegment(docs, lens, header.terms, ends, postings);
  } catch (err) {
    if (err instanceof CorruptIndexError) throw err;
    throw new CorruptIndexError(`lexical segment: ${(err as Error).message}`);
  }
}

function decodePostings(
  bytes: Uint8Array,
  start: number,
  end: number,
): { docs: Uint32Array; tfs: Uint32Array } {
  const docs: number[] = [];
  const tfs: number[] = [];
  let at = start;
  let doc = 0;
  while (at < end) {
    let delta = 0;
    let shift = 0;
    let b: number;
    do {
      b = bytes[at++]!;
      delta += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    let tf = 0;
    shift = 0;
    do {
      b = bytes[at++]!;
      tf += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    doc += delta;
    docs.push(doc);
    tfs.push(tf);
  }
  return { docs: Uint32Array.from(docs), tfs: Uint32Array.from(tfs) };
}

class VarintWriter {
  private buf = new Uint8Array(1024);
  length = 0;
  write(n: number): void {
    if (this.length + 10 > this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    while (n >= 0x80) {
      this.buf[this.length++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.length++] = n;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

// ---- vectors ----

/** A vector as raw little-endian float32. */
export function encodeF32(rows: readonly Float32Array[], dims: number): Uint8Array {
  const out = new Uint8Array(rows.length * dims * 4);
  const view = new DataView(out.buffer);
  rows.forEach((row, i) => {
    if (row.length !== dims) throw new Error(`vector has ${row.length} dimensions, not ${dims}`);
    for (let k = 0; k < dims; k++) view.setFloat32((i * dims + k) * 4, row[k]!, true);
  });
  return out;
}

/** Raw little-endian float32 rows of `dims`; throws CorruptIndexError. */
export function decodeF32(bytes: Uint8Array, dims: number): Float32Array {
  if (dims <= 0 || bytes.byteLength % (dims * 4) !== 0)
    throw new CorruptIndexError(`float32 data of ${bytes.byteLength} bytes is not rows of ${dims}`);
  const out = new Float32Array(bytes.byteLength / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let k = 0; k < out.length; k++) out[k] = view.getFloat32(k * 4, true);
  return out;
}

/** A vector segment's doc table. */
export function encodeVecTable(keys: DocKey[], dims: number): Uint8Array {
  return enc.encode(JSON.stringify({ v: 1, dims, docs: keys.map((k) => [k.id, k.c, k.r]) }));
}

/** Parses a vector segment's doc table; throws CorruptIndexError. */
/** A vector segment held in memory: the doc table and one float32 row per doc. */
export class VecSegment {
  constructor(
    readonly docs: DocKey[],
    readonly dims: number,
    readonly rows: Float32Array,
  ) {}

  get memoryBytes(): number {
    return this.rows.byteLength + this.docs.length * 80;
  }

  row(i: number): Float32Array {
    return this.rows.subarray(i * this.dims, (i + 1) * this.dims);
  }

  all(): Float32Array[] {
    return this.docs.map((_, i) => this.row(i));
  }
}

export function decodeVecTable(body: Uint8Array): { dims: number; docs: DocKey[] } {
  try {
    const v = JSON.parse(dec.decode(body)) as {
      v: number;
      dims: number;
      docs: [string, number, number][];
    };
    if (v.v !== 1 || typeof v.dims !== 'number' || !Array.isArray(v.docs)) throw new Error('shape');
    return { dims: v.dims, docs: v.docs.map(([id, c, r]) => ({ id, c, r })) };
  } catch {
    throw new CorruptIndexError('vector segment table');
  }
}
