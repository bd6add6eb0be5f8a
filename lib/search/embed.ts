import { tokenize } from './tokenize.js';

/**
 * Embedders turn text into unit-length vectors. `space` names the embedding space (`http/<model>/<dims>`
 * or `local/<name>/<dims>`): vectors of different spaces are never compared, and a change of space
 * rebuilds the vector index from the session objects.
 */
export interface Embedder {
  /** Known once the dimensions are (from config, or from the first answer). */
  space(): string | null;
  /** False while the service is cooling down after a failure: search goes lexical, saves go on. */
  available(): boolean;
  /**
   * `urgent` (a search's query): ahead of the saves' texts waiting for a request. A blank text, or one the
   * service refused alone, gets zeros (no vector) without failing the others.
   */
  embed(texts: string[], urgent?: boolean, options?: EmbedOptions): Promise<Float32Array[]>;
  /** Whether its similarity scores are meaningful on their own (a real model), not just for ranking. */
  readonly calibrated: boolean;
  state(): {
    configured: boolean;
    space: string | null;
    state: 'ok' | 'cooldown';
    cooldown_until?: string;
    model?: string;
  };
}

export interface EmbedOptions {
  /** The texts' namespace: vectors are cached per namespace, so one never learns what another embedded. */
  ns?: string;
  /** A save's text: dropped at once (EmbeddingsUnavailableError) while the save texts waiting are at the cap. */
  save?: boolean;
}

export class EmbeddingsUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingsUnavailableError';
  }
}

/** A bad-request answer (400, 413, 422): the inputs may be at fault, not the service. */
class RefusedError extends EmbeddingsUnavailableError {}

/** A failure's own wait: a 429's or 503's `Retry-After` in seconds (ms, 1 s to 15 min); undefined without. */
type Failed = EmbeddingsUnavailableError & { waitMs?: number };

interface Waiting {
  text: string;
  key: string;
  urgent: boolean;
  save: boolean;
  resolve: (v: Float32Array) => void;
  reject: (e: unknown) => void;
}

/** Texts waiting for a request, and whether a loop sends them: the process's, or (on Workers) one call's. */
interface Lane {
  queue: Waiting[];
  /** Save texts in `queue`. */
  saves: number;
  /** A loop sends them (unset: none has yet). */
  flushing?: boolean;
}

export interface HttpEmbedderOptions {
  url: string;
  model: string;
  key?: string;
  dims?: number;
  timeoutMs?: number;
  cooldownMs?: number;
  /** Inputs per request. */
  batchSize?: number;
  /** Save texts waiting for a request at most (default 4 batches); more are dropped, their vectors lag. */
  maxWaitingSaves?: number;
  /** Vectors kept in process, by namespace and a digest of their text. */
  cacheEntries?: number;
  fetch?: typeof fetch;
  now?: () => number;
  /** A failure that started or lengthened the cooldown, and the wait (ms) it set. */
  onError?: (err: unknown, waitMs: number) => void;
}

/**
 * An OpenAI-compatible `POST {url}/embeddings` client: bearer key, a 10 s timeout, requests batched
 * (calls made within the same tick share one request; queries in a request of their own, ahead of the
 * rest of a split in progress; on Workers each call's texts go alone, from its own request), a bounded
 * cache, a bounded queue of save texts, and after a failure (network, 429, 5xx, an answer it cannot use)
 * no call at all for the service's Retry-After (else 30 s). A batch refused as a bad request is split:
 * halves, then single inputs (unless the service refuses a one-word text too, when it has taken none of
 * them: then it is failing).
 */
export class HttpEmbedder implements Embedder {
  readonly calibrated = true;
  private dims: number | null;
  private cooldownUntil = 0;
  private readonly cache = new Map<string, Float32Array>();
  // The process's Lane: not private, so that `this` is passed as one where a Workers call passes its own.
  queue: Waiting[] = [];
  /** Save texts in `queue`. */
  saves = 0;
  flushing = false;
  /** HTTP requests made (tests and benchmarks read it). */
  calls = 0;

  constructor(private readonly options: HttpEmbedderOptions) {
    this.dims = options.dims ?? null;
  }

  space(): string | null {
    return this.dims ? `http/${this.options.model}/${this.dims}` : null;
  }

  available(): boolean {
    return this.now() >= this.cooldownUntil;
  }

  state() {
    const cooling = !this.available();
    return {
      configured: true,
      model: this.options.model,
      space: this.space(),
      state: cooling ? ('cooldown' as const) : ('ok' as const),
      ...(cooling ? { cooldown_until: new Date(this.cooldownUntil).toISOString() } : {}),
    };
  }

  async embed(
    texts: string[],
    urgent = false,
    options: EmbedOptions = {},
  ): Promise<Float32Array[]> {
    if (!this.available())
      throw new EmbeddingsUnavailableError('embeddings are cooling down after a failure');
    const save = !urgent && options.save === true;
    // Workers: each call its own queue and loop, run in its own request (review s66b). workerd cancels a
    // request waiting on another's I/O as hung, and a loop cut off with its request would stop the queue.
    const lane: Lane = globalThis.SATCHEL_SHORT_LIVED ? { queue: [], saves: 0 } : this;
    return Promise.all(
      texts.map(async (text) => {
        // Services refuse an empty input (a 400 for the whole batch): a blank text has no vector.
        if (!text.trim()) return this.none();
        // A synchronous digest: calls made in one tick reach the queue in that tick, so they share a request.
        const key = `${options.ns ?? ''}/${textDigest(text)}`;
        const hit = this.cache.get(key);
        if (hit) {
          this.cache.delete(key);
          this.cache.set(key, hit);
          return hit;
        }
        if (save && lane.saves >= (this.options.maxWaitingSaves ?? 4 * this.batchSize()))
          throw new EmbeddingsUnavailableError(
            'too many save texts wait for the embeddings service',
          );
        return new Promise<Float32Array>((resolve, reject) => {
          // A query waits for the request in flight at most, never for a backlog of saves (each of which
          // may take the whole timeout).
          const entry = { text, key, urgent, save, resolve, reject };
          if (urgent) lane.queue.unshift(entry);
          else lane.queue.push(entry);
          if (save) lane.saves++;
          if (!lane.flushing) {
            lane.flushing = true;
            setTimeout(async () => {
              while (lane.queue.length) await this.next(lane);
              lane.flushing = false;
            }, 0);
          }
        });
      }),
    );
  }

  /** Sends the next batch waiting: the queries alone, or else up to a batch of the saves' texts. */
  private async next(lane: Lane): Promise<void> {
    // The queries waiting go alone: a search does not wait for a request of large save texts.
    let n = 0;
    while (n < this.batchSize() && lane.queue[n]?.urgent) n++;
    const batch = lane.queue.splice(0, n || this.batchSize());
    for (const b of batch) if (b.save) lane.saves--;
    try {
      const split = { taken: false, refused: [] as Waiting[] };
      await this.send(batch, split);
      // Inputs refused alone by a service that takes others: theirs to blame, zeros, not asked again.
      for (const b of split.refused) b.resolve(this.none());
    } catch (err) {
      // The service's own wait when it named one (review s59-s65). Reported once per cooldown, but on Workers
      // calls' requests overlap: a later answer's longer Retry-After lengthens it (review s66n: 2 s, 10 min).
      const named = (err as Failed).waitMs;
      const wait = named ?? this.options.cooldownMs ?? 30_000;
      if (this.available() || (named && this.now() + named > this.cooldownUntil)) {
        this.cooldownUntil = this.now() + wait;
        this.options.onError?.(err, wait);
      }
      for (const b of batch) b.reject(err);
    }
  }

  /**
   * One request for `batch`; refused as a bad request, its halves, down to single inputs (`refused`).
   * An input refused alone before any of the batch was taken: a one-word request decides whose fault.
   */
  private async send(
    batch: Waiting[],
    split: { taken: boolean; refused: Waiting[] },
  ): Promise<void> {
    try {
      const vectors = await this.request(batch.map((b) => b.text));
      split.taken = true;
      batch.forEach((b, i) => {
        this.remember(b.key, vectors[i]!);
        b.resolve(vectors[i]!);
      });
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      if (batch.length === 1) {
        // A service refusing that too (a proxy's wrapped outage, a revoked model) is failing: a cooldown,
        // and no zeros stored. Until 2026-12-07, once it had answered, it was 2n-1 requests and zeros.
        if (!split.taken) await this.request(['satchel']);
        split.taken = true;
        return void split.refused.push(batch[0]!);
      }
      const half = Math.ceil(batch.length / 2);
      await this.send(batch.slice(0, half), split);
      await this.send(batch.slice(half), split);
    }
  }

  /** Every failure (network, timeout, status, an answer it cannot use) as EmbeddingsUnavailableError. */
  private async request(input: string[]): Promise<Float32Array[]> {
    // Queries overtake a split in progress (up to 2n requests): they wait for the request in flight at most.
    // Their failure starts a cooldown: the rest of the split then fails with no request.
    // (A Workers call's lane holds its own texts alone, all urgent or none: nothing to overtake.)
    if (!globalThis.SATCHEL_SHORT_LIVED) while (this.queue[0]?.urgent) await this.next(this);
    if (!this.available())
      throw new EmbeddingsUnavailableError('embeddings are cooling down after a failure');
    this.calls++;
    try {
      return await this.requestOnce(input);
    } catch (err) {
      if (err instanceof EmbeddingsUnavailableError) throw err;
      const name = err instanceof Error ? err.name : 'Error';
      throw new EmbeddingsUnavailableError(`embeddings request failed (${name})`, { cause: err });
    }
  }

  private async requestOnce(input: string[]): Promise<Float32Array[]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.key) headers.authorization = `Bearer ${this.options.key}`;
    const body: Record<string, unknown> = {
      model: this.options.model,
      input,
      encoding_format: 'float',
    };
    if (this.options.dims) body.dimensions = this.options.dims;
    const res = await (this.options.fetch ?? fetch)(
      `${this.options.url.replace(/\/+$/, '')}/embeddings`,
      {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      },
    );
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      const Refused = [400, 413, 422].includes(res.status)
        ? RefusedError
        : EmbeddingsUnavailableError;
      const failed: Failed = new Refused(`embeddings service answered ${res.status}`);
      const seconds = Number(res.headers.get('retry-after') || NaN);
      if (seconds >= 0) failed.waitMs = Math.min(Math.max(seconds * 1000, 1000), 900_000);
      throw failed;
    }
    const json = (await res.json()) as { data?: { index?: number; embedding?: unknown }[] } | null;
    const data = json?.data;
    if (!Array.isArray(data) || data.length !== input.length)
      throw new EmbeddingsUnavailableError('embeddings answer has the wrong number of vectors');
    const out = new Array<Float32Array>(input.length);
    data.forEach((d, i) => {
      const at = typeof d?.index === 'number' ? d.index : i;
      if (!Number.isInteger(at) || at < 0 || at >= input.length || out[at])
        throw new EmbeddingsUnavailableError('embeddings answer has a wrong or repeated index');
      if (
        !Array.isArray(d.embedding) ||
        d.embedding.length === 0 ||
        // Finite as a float32 too: 1e39 would be Infinity in the Float32Array, and NaN once normalized.
        !d.embedding.every((x) => typeof x === 'number' && Number.isFinite(Math.fround(x)))
      ) {
        throw new EmbeddingsUnavailableError('embeddings answer holds a malformed vector');
      }
      if (this.dims === null) this.dims = d.embedding.length;
      if (d.embedding.length !== this.dims)
        throw new EmbeddingsUnavailableError(
          `embeddings answer has ${d.embedding.length} dimensions, not ${this.dims}`,
        );
      const v = normalize(Float32Array.from(d.embedding as number[]));
      if (!v.every(Number.isFinite))
        throw new EmbeddingsUnavailableError('embeddings answer holds a malformed vector');
      out[at] = v;
    });
    return out;
  }

  /** No vector: zeros (of no length while the dimensions are unknown). */
  private none(): Float32Array {
    return new Float32Array(this.dims ?? 0);
  }

  private batchSize(): number {
    return this.options.batchSize ?? 64;
  }

  private remember(key: string, v: Float32Array): void {
    this.cache.set(key, v);
    while (this.cache.size > (this.options.cacheEntries ?? 2048))
      this.cache.delete(this.cache.keys().next().value!);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/**
 * The built-in embedder, used when no embeddings service is configured: signed feature hashing of the
 * text's tokens (log-scaled counts) and of their character trigrams, into 256 dimensions. No model and
 * no network; it adds spelling- and morphology-tolerant matching that whole-word BM25 lacks.
 */
export class LocalEmbedder implements Embedder {
  readonly calibrated = false;
  static readonly DIMS = 256;

  /** v5 (2026-12-06): the tokenizer's new tokens (LEX_V 5), so vectors stored before are made again. */
  space(): string {
    return `local/hash-v5/${LocalEmbedder.DIMS}`;
  }

  available(): boolean {
    return true;
  }

  state() {
    return { configured: false, space: this.space(), state: 'ok' as const };
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map(localVector);
  }
}

/** The built-in embedding of one text (pure, deterministic). */
export function localVector(text: string): Float32Array {
  const dims = LocalEmbedder.DIMS;
  const v = new Float32Array(dims);
  const counts = new Map<string, number>();
  for (const t of tokenize(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (const [t, n] of counts) {
    const w = 1 + Math.log(n);
    add(v, `w:${t}`, w);
    const padded = `^${t}$`;
    if (padded.length > 4)
      for (let i = 0; i + 3 <= padded.length; i++)
        add(v, `g:${padded.slice(i, i + 3)}`, (0.5 * w) / (padded.length - 2));
  }
  return normalize(v);
}

function add(v: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const i = h % v.length;
  v[i] = v[i]! + (h & 0x80000000 ? -weight : weight);
}

/** Two independent 32-bit FNV-1a hashes and the length: a cache key with negligible collision odds. */
function textDigest(text: string): string {
  return `${fnv1a(text).toString(36)}.${fnv1a(text, 0x01000193).toString(36)}.${text.length}`;
}

function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Scales a vector to unit length (a zero vector stays zero). */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const n = Math.sqrt(sum);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / n;
  return v;
}
