import { sha256Hex } from '../model/digest.js';
import { badRequest, conflict, SatchelError, notFound, preconditionFailed, unavailable, unprocessable } from '../model/errors.js';
import { corePipeline, type SaveOutput, type SavePipeline } from '../pipeline/save.js';
import { PreconditionFailedError, type ObjectStore } from '../storage/port.js';
import { concat, decodeSession, encodeCoreParts, encodeTail, type EncodedMessages } from '../model/codec.js';
import { assertSessionId, newSessionId, randomHex } from '../model/ids.js';
import { keys } from '../model/keys.js';
import type { AuditLog, AuditRecord } from './audit.js';
import { Manifest, type ManifestEntry, type ManifestOptions } from './manifest.js';
import { mapLimit } from '../storage/concurrency.js';
import { mergeExternalRefs } from '../model/refs.js';
import type { Message, SessionSummary, StoredSession, WriteReceipt, WriteRecord } from '../model/session.js';
import type { AppendBody, CreateBody, ReplaceBody } from '../model/requests.js';

/** Per-request context of a write: who writes, and how to keep background work alive. */
export interface WriteContext {
  /** Device label of the token (audit). */
  device?: string;
  /** Client's Idempotency-Key: a repeated key returns the first write's receipt and changes nothing. */
  idempotencyKey?: string;
  /** What the audit log calls this write when it is not the operation's own name (e.g. `continue`). */
  op?: AuditRecord['op'];
  /** Secret values registered for this request only (redacted in every form). */
  knownValues?: string[];
  /** Receives background work that must outlive the response (Workers waitUntil). */
  schedule?: (work: Promise<unknown>) => void;
  /** Extra fields kept with this write's receipt in its write record, so a replay returns them too (continue's reply). */
  remember?: (saved: StoredSession) => Record<string, unknown>;
}

/** Called after each successful write or delete; search indexing and audit plug in here. */
/** What a write did, for listeners: `added` messages were appended at the end (nothing else changed when the op is an append and no group was dropped). */
export interface WriteChange {
  op: AuditRecord['op'];
  added: number;
}

export interface SessionListener {
  afterWrite?(ns: string, session: StoredSession, receipt: WriteReceipt, ctx: WriteContext, change: WriteChange): Promise<void> | void;
  afterDelete?(ns: string, id: string, ctx: WriteContext): Promise<void> | void;
}

export interface SessionStoreOptions {
  pipeline?: SavePipeline;
  /** The audit log (one record per write); none in unit tests that do not need it. */
  audit?: AuditLog;
  /** Reports failures that must not fail the write itself (an audit record that could not be stored). */
  onError?: (what: string, err: unknown) => void;
  manifest?: ManifestOptions;
  listeners?: SessionListener[];
  /** Bytes of parsed sessions kept in process, so an append with a current revision skips the GET. */
  cacheBytes?: number;
  /** How long a write keeps retrying against concurrent writers before answering 503. */
  maxContentionMs?: number;
  now?: () => number;
}

export interface ListOptions {
  limit: number;
  cursor?: string;
  updatedAfter?: number;
}

export interface WriteResult {
  session: StoredSession;
  receipt: WriteReceipt;
  /** True when an Idempotency-Key matched an earlier write and nothing was written. */
  replayed: boolean;
}

interface Cached {
  etag: string;
  session: StoredSession;
  bytes: number;
  /** The encoded messages of this exact object, when this process wrote it: an append reuses them. */
  encoded?: EncodedMessages;
}

/**
 * A create's own times (an import keeps the original session's): never in the future (5 minutes of
 * clock skew allowed), and updated_at not before created_at.
 */
function importedTimes(body: CreateBody, now: number): { created_at?: string; updated_at?: string } {
  const skew = 5 * 60_000;
  for (const field of ['created_at', 'updated_at'] as const) {
    const value = body[field];
    if (value !== undefined && Date.parse(value) > now + skew) throw badRequest(`${field} is in the future`, [{ path: field, message: 'in the future' }]);
  }
  if (body.created_at && body.updated_at && Date.parse(body.updated_at) < Date.parse(body.created_at)) {
    throw badRequest('updated_at is before created_at', [{ path: 'updated_at', message: 'before created_at' }]);
  }
  return { ...(body.created_at ? { created_at: body.created_at } : {}), ...(body.updated_at ? { updated_at: body.updated_at } : {}) };
}

/** If-Match: * — any current revision (the session must exist). */
export const ANY_REVISION = -2;

const KEYED_WRITES_KEPT_MS = 24 * 3600_000;
const KEYED_WRITES_MAX = 1000;
const UNKEYED_WRITES_MAX = 16;

/**
 * Session operations over the object-store port. Every write is a compare-and-swap on the session
 * object (If-Match on its etag, or create-only), retried against concurrent writers, so appends are
 * never lost; each write carries an id recorded inside the object, so an ambiguous retry (the PUT
 * landed but its answer was lost) is never applied twice.
 */
export class SessionStore {
  readonly manifest: Manifest;
  private readonly pipeline: SavePipeline;
  private readonly listeners: SessionListener[];
  private readonly audit: AuditLog | undefined;
  private readonly onError: (what: string, err: unknown) => void;
  private readonly cache = new Map<string, Cached>();
  private readonly turns = new Map<string, Promise<void>>();
  private cachedBytes = 0;
  private readonly cacheBytes: number;
  private readonly maxContentionMs: number;
  private readonly now: () => number;

  constructor(
    readonly objects: ObjectStore,
    options: SessionStoreOptions = {},
  ) {
    this.pipeline = options.pipeline ?? corePipeline;
    this.listeners = options.listeners ?? [];
    this.audit = options.audit;
    this.onError = options.onError ?? (() => undefined);
    this.cacheBytes = options.cacheBytes ?? 64 * 1024 * 1024;
    this.maxContentionMs = options.maxContentionMs ?? 30_000;
    this.now = options.now ?? Date.now;
    this.manifest = new Manifest(objects, (ns, id) => this.readSummary(ns, id), { now: this.now, ...options.manifest });
  }

  /** Adds a listener (search indexing registers itself after the store is built). */
  addListener(listener: SessionListener): void {
    this.listeners.push(listener);
  }

  /** The session at `revision`: the cached copy when it is exactly that revision, else storage; null when gone. */
  async getAt(ns: string, id: string, revision: number): Promise<StoredSession | null> {
    assertSessionId(id);
    const cached = this.cache.get(keys.session(ns, id));
    if (cached && cached.session.revision === revision) return cached.session;
    return (await this.load(ns, id))?.session ?? null;
  }

  /** The stored session; 404 when it does not exist. Always reads storage, never the cache. */
  async get(ns: string, id: string): Promise<StoredSession> {
    assertSessionId(id);
    const found = await this.load(ns, id);
    if (!found) throw notFound(`session ${id} does not exist`);
    return found.session;
  }

  /** The most recently updated session, whole. */
  async latest(ns: string, schedule?: (w: Promise<unknown>) => void): Promise<StoredSession> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const newest = (await this.manifest.list(ns, { limit: 1 }, schedule)).entries[0];
      if (!newest) throw notFound('there are no sessions in this namespace');
      const found = await this.load(ns, newest.id);
      if (found) return found.session;
    }
    throw unavailable('the session list changed while reading it; try again');
  }

  /** Metadata newest first, with keyset pagination. */
  async list(ns: string, options: ListOptions, schedule?: (w: Promise<unknown>) => void) {
    const before = options.cursor ? decodeCursor(options.cursor) : undefined;
    const page = await this.manifest.list(
      ns,
      { limit: options.limit, ...(before ? { before } : {}), ...(options.updatedAfter !== undefined ? { updatedAfter: options.updatedAfter } : {}) },
      schedule,
    );
    const last = page.entries[page.entries.length - 1];
    return {
      sessions: page.entries.map(toSummary),
      next_cursor: page.more && last ? encodeCursor(last) : null,
    };
  }

  /** Creates a session; 409 when the id exists in this namespace. */
  async create(ns: string, body: CreateBody, ctx: WriteContext = {}): Promise<WriteResult> {
    if (body.id !== undefined) {
      assertSessionId(body.id);
      // An id becomes part of storage keys: one that holds a secret is refused rather than stored.
      if (this.pipeline.redactText(body.id) !== body.id) throw badRequest('the id looks like a secret; choose another', [{ path: 'id', message: 'looks like a secret' }]);
    }
    const id = body.id ?? newSessionId(new Date(this.now()));
    const nowIso = new Date(this.now()).toISOString();
    const times = importedTimes(body, this.now());
    const draft: StoredSession = {
      id,
      created_at: times.created_at ?? nowIso,
      updated_at: times.updated_at ?? times.created_at ?? nowIso,
      model: body.model ?? '',
      provider: body.provider ?? '',
      turns: 0,
      task: body.task,
      sandbox: body.sandbox ?? false,
      messages: body.messages ?? [],
      external_refs: mergeExternalRefs([], body.external_refs, nowIso, ctx.device ?? 'api'),
      untrusted_ingested: body.untrusted_ingested ?? false,
      episode_untrusted: body.episode_untrusted ?? false,
      episode_taint_tracked: false,
      revision: 1,
    };
    const writeId = randomHex(12);
    const key = keys.session(ns, id);
    // The pending marker is stored while the pipeline runs, and before the session PUT.
    const pending = this.manifest.markPending(ns, id, writeId);
    pending.catch(() => undefined);
    let written = false;
    const record: WriteRecord = { k: 'w:' + writeId, at: this.now(), r: {} };
    draft.satchel = { writes: [record] };
    let saved: SaveOutput;
    let session: StoredSession;
    let receipt: WriteReceipt;
    let finalBody: Uint8Array;
    try {
      saved = this.pipeline.apply({ next: draft, previous: null, ...(ctx.knownValues ? { knownValues: ctx.knownValues } : {}) });
      session = saved.session;
      receipt = makeReceipt(session, 0, saved.redactions, saved.dropped_groups);
      const sealed = seal(session, receipt, record);
      finalBody = sealed.body;
      await pending;
      const { etag } = await this.objects.put(key, finalBody, { ifNoneMatch: '*' });
      written = true;
      this.remember(key, { etag, session, bytes: finalBody.byteLength, encoded: sealed.messages });
    } catch (err) {
      if (PreconditionFailedError.is(err)) throw conflict(`session ${id} already exists`);
      throw err;
    } finally {
      if (!written) await pending.then((k) => this.manifest.clearPending(k), () => undefined);
    }
    await this.afterWrite(ns, session, receipt, ctx, writeId, { op: ctx.op ?? 'create', added: session.messages.length, sources: saved.sources });
    return { session, receipt, replayed: false };
  }

  /** Appends messages (and refs); without `ifMatch` the append lands after whatever is stored. */
  async append(ns: string, id: string, body: AppendBody, ifMatch: number | undefined, ctx: WriteContext = {}): Promise<WriteResult> {
    const fingerprint = ctx.idempotencyKey ? await sha256Hex(JSON.stringify(['append', body])) : undefined;
    return this.mutate('append', ns, id, ifMatch, ctx, fingerprint, (cur, nowIso) => ({
      next: {
        ...cur,
        messages: [...cur.messages, ...body.messages],
        external_refs: mergeExternalRefs(cur.external_refs, body.external_refs, nowIso, ctx.device ?? 'api'),
      },
    }));
  }

  /**
   * Appends a model turn (assistant and tool messages) and records the model and provider it used, in one
   * write that lands after whatever is stored. A repeated Idempotency-Key returns the first turn's record.
   */
  async appendTurn(ns: string, id: string, turn: { messages: Message[]; model: string; provider: string }, ctx: WriteContext = {}): Promise<WriteResult> {
    // No fingerprint: a repeat of a turn is never "a different request", whatever the model said.
    return this.mutate('append', ns, id, undefined, ctx, undefined, (cur) => ({
      next: { ...cur, model: turn.model, provider: turn.provider, messages: [...cur.messages, ...turn.messages] },
    }));
  }

  /** Replaces the session's content; the caller must hold the current revision. */
  async replace(ns: string, id: string, body: ReplaceBody, ifMatch: number, ctx: WriteContext = {}): Promise<WriteResult> {
    if (body.id !== undefined && body.id !== id) throw badRequest('the body id does not match the path', [{ path: 'id', message: `expected "${id}"` }]);
    const fingerprint = ctx.idempotencyKey ? await sha256Hex(JSON.stringify(['replace', body])) : undefined;
    return this.mutate('replace', ns, id, ifMatch, ctx, fingerprint, (cur, nowIso) => ({
      next: {
        ...cur,
        task: body.task,
        model: body.model ?? cur.model,
        provider: body.provider ?? cur.provider,
        messages: body.messages,
        // Refs are add-only: a replace can add refs but never drop stored ones.
        external_refs: mergeExternalRefs(cur.external_refs, body.external_refs ?? undefined, nowIso, ctx.device ?? 'api'),
        sandbox: body.sandbox ?? cur.sandbox,
        untrusted_ingested: body.untrusted_ingested ?? cur.untrusted_ingested,
        episode_untrusted: body.episode_untrusted ?? cur.episode_untrusted,
      },
    }));
  }

  /** Keeps the system message and the newest messages, `keep` in all, never splitting a tool group. */
  async trim(ns: string, id: string, keep: number, ctx: WriteContext = {}) {
    let before = 0;
    let after = 0;
    const result = await this.mutate('trim', ns, id, undefined, ctx, undefined, (cur) => {
      before = cur.messages.length;
      const messages = trimMessages(cur.messages, keep);
      after = messages.length;
      return after === before ? null : { next: { ...cur, messages } };
    });
    return { id, before, after, dropped: before - after, receipt: result?.receipt };
  }

  /** Deletes a session and its manifest entry; 404 when it does not exist. */
  async delete(ns: string, id: string, ctx: WriteContext = {}): Promise<void> {
    assertSessionId(id);
    const key = keys.session(ns, id);
    const writeId = randomHex(12);
    const pending = await this.manifest.markPending(ns, id, writeId);
    const found = await this.objects.get(key);
    if (!found) {
      await this.manifest.clearPending(pending);
      throw notFound(`session ${id} does not exist`);
    }
    const stored = decodeSession(found.body, key);
    await this.objects.delete(key);
    this.forget(key);
    const at = Math.max(this.now(), Date.parse(stored.updated_at) + 1 || 0);
    await Promise.all([this.manifest.recordDelete(ns, id, at, writeId), this.audit?.deleteAll(ns, id)]);
    for (const l of this.listeners) await l.afterDelete?.(ns, id, ctx);
  }

  /** Deletes every session whose updated_at is older than `days` days (0: all of them). */
  async cleanup(ns: string, days: number, ctx: WriteContext = {}): Promise<{ deleted: number }> {
    const cutoff = days === 0 ? Infinity : this.now() - days * 86_400_000;
    const view = await this.manifest.view(ns, ctx.schedule);
    const doomed = view.entries.filter((e) => e.at < cutoff);
    const results = await mapLimit(doomed, 8, (e) =>
      this.delete(ns, e.id, ctx).then(
        () => 1,
        (err) => (SatchelError.is(err, 'not_found') ? 0 : Promise.reject(err)),
      ),
    );
    return { deleted: results.reduce((a: number, b: number) => a + b, 0) };
  }

  /** Reads a session object straight from storage, refreshing the cache. */
  private async load(ns: string, id: string): Promise<Cached | null> {
    const key = keys.session(ns, id);
    const found = await this.objects.get(key);
    if (!found) {
      this.forget(key);
      return null;
    }
    const entry = { etag: found.etag, session: decodeSession(found.body, key), bytes: found.body.byteLength };
    this.remember(key, entry);
    return entry;
  }

  /** The manifest's view of one session, read from its object (used for verification and rebuilds). */
  private async readSummary(ns: string, id: string): Promise<ManifestEntry | null> {
    const found = await this.load(ns, id);
    return found ? entryOf(found.session, found.bytes) : null;
  }

  /**
   * The write loop: read (or use the cached copy), build the next state, run the save pipeline, then
   * PUT with If-Match on the etag read. On a precondition failure, re-read and try again until the
   * contention deadline. `build` returning null means there is nothing to write.
   */
  private async mutate(
    op: AuditRecord['op'],
    ns: string,
    id: string,
    ifMatch: number | undefined,
    ctx: WriteContext,
    fingerprint: string | undefined,
    build: (cur: StoredSession, nowIso: string) => { next: StoredSession } | null,
  ): Promise<WriteResult> {
    assertSessionId(id);
    const key = keys.session(ns, id);
    // Writers in this process take turns per session: each then writes on the cached copy instead of
    // losing a compare-and-swap race to its neighbour and reading the session again. Other processes
    // still race through If-Match, as before.
    return this.inTurn(key, () => this.mutateNow(op, ns, id, key, ifMatch, ctx, fingerprint, build));
  }

  private async mutateNow(
    op: AuditRecord['op'],
    ns: string,
    id: string,
    key: string,
    ifMatch: number | undefined,
    ctx: WriteContext,
    fingerprint: string | undefined,
    build: (cur: StoredSession, nowIso: string) => { next: StoredSession } | null,
  ): Promise<WriteResult> {
    const writeId = randomHex(12);
    const idemHash = ctx.idempotencyKey ? 'k:' + (await sha256Hex(ctx.idempotencyKey)) : undefined;
    const ownHash = 'w:' + writeId;
    let cached = this.cache.get(key) ?? null;
    // The pending marker must be stored before the session PUT; the first read runs alongside it.
    const pending = this.manifest.markPending(ns, id, writeId);
    pending.catch(() => undefined);
    let written = false;
    try {
      const fresh = cached ? null : await this.load(ns, id);
      if (!cached) cached = fresh;
      await pending;
      const deadline = this.now() + this.maxContentionMs;
      let fromCache = fresh === null;
      for (let attempt = 0; ; attempt++) {
        if (!cached) throw notFound(`session ${id} does not exist`);
        const cur = cached.session;
        // A retried request (same key) or our own write that landed before its answer was lost.
        const previous = cur.satchel?.writes.find((w) => w.k === ownHash || (idemHash !== undefined && w.k === idemHash));
        if (previous) {
          if (fromCache) {
            // Trust only a fresh read for replays.
            cached = await this.load(ns, id);
            fromCache = false;
            continue;
          }
          if (previous.k === idemHash && previous.f !== undefined && fingerprint !== undefined && previous.f !== fingerprint) {
            throw unprocessable('this Idempotency-Key was used for a different request');
          }
          return { session: cur, receipt: previous.r as unknown as WriteReceipt, replayed: true };
        }
        if (ifMatch !== undefined && ifMatch !== ANY_REVISION && cur.revision !== ifMatch) {
          if (fromCache) {
            cached = await this.load(ns, id);
            fromCache = false;
            continue;
          }
          throw preconditionFailed(`the session is at revision ${cur.revision}, not ${ifMatch}`);
        }
        const nowMs = Math.max(this.now(), (Date.parse(cur.updated_at) || 0) + 1);
        const nowIso = new Date(nowMs).toISOString();
        const built = build(cur, nowIso);
        if (!built) return { session: cur, receipt: makeReceipt(cur, cached.bytes, 0, 0), replayed: false };
        const record: WriteRecord = { k: idemHash ?? ownHash, ...(idemHash && fingerprint ? { f: fingerprint } : {}), at: nowMs, r: {} };
        const draft: StoredSession = {
          ...built.next,
          updated_at: nowIso,
          revision: cur.revision + 1,
          satchel: { ...cur.satchel, writes: this.pruneWrites(cur.satchel?.writes ?? [], record) },
        };
        const saved = this.pipeline.apply({
          next: draft,
          previous: cur,
          previousBytes: cached.bytes,
          ...(ctx.knownValues ? { knownValues: ctx.knownValues } : {}),
        });
        const session = saved.session;
        const receipt = makeReceipt(session, 0, saved.redactions, saved.dropped_groups);
        const sealed = seal(session, receipt, record, cached.encoded, ctx.remember?.(session));
        const body = sealed.body;
        try {
          const { etag } = await this.objects.put(key, body, { ifMatch: cached.etag });
          written = true;
          this.remember(key, { etag, session, bytes: body.byteLength, encoded: sealed.messages });
          const added = Math.max(0, session.messages.length - cur.messages.length);
          await this.afterWrite(ns, session, receipt, ctx, writeId, { op: ctx.op ?? op, added, sources: saved.sources });
          return { session, receipt, replayed: false };
        } catch (err) {
          if (!PreconditionFailedError.is(err)) throw err;
          if (this.now() > deadline) throw unavailable('too many concurrent writers on this session; try again', 1);
          await sleep(Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6)));
          cached = await this.load(ns, id);
          fromCache = false;
        }
      }
    } finally {
      if (!written) await pending.then((k) => this.manifest.clearPending(k), () => undefined);
    }
  }

  /** Runs `fn` after every earlier call for the same key has settled. */
  private async inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(key) ?? Promise.resolve();
    const mine = previous.then(fn, fn);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(key, settled);
    try {
      return await mine;
    } finally {
      if (this.turns.get(key) === settled) this.turns.delete(key);
    }
  }

  private pruneWrites(writes: WriteRecord[], added: WriteRecord): WriteRecord[] {
    const cutoff = this.now() - KEYED_WRITES_KEPT_MS;
    const keyed = writes.filter((w) => w.k.startsWith('k:') && w.at > cutoff);
    const unkeyed = writes.filter((w) => w.k.startsWith('w:'));
    const all = [...keyed.slice(-(KEYED_WRITES_MAX - 1)), ...unkeyed.slice(-(UNKEYED_WRITES_MAX - 1)), added];
    return all.sort((a, b) => a.at - b.at);
  }

  /** After a session write landed: its manifest log record, its audit record, then the listeners. */
  private async afterWrite(
    ns: string,
    session: StoredSession,
    receipt: WriteReceipt,
    ctx: WriteContext,
    writeId: string,
    info: { op: AuditRecord['op']; added: number; sources: string[] },
  ) {
    const audit = this.audit
      ?.record(ns, session.id, {
        at: session.updated_at,
        op: info.op,
        device: ctx.device ?? 'unknown',
        revision: session.revision,
        messages: session.messages.length,
        messages_added: info.added,
        bytes: receipt.bytes,
        redactions: receipt.redactions,
        dropped_groups: receipt.dropped_groups,
        ingest_sources: info.sources,
        untrusted_ingested: session.untrusted_ingested,
        episode_untrusted: session.episode_untrusted,
      })
      .catch((err) => this.onError('audit record not stored', err));
    await Promise.all([this.manifest.recordPut(ns, entryOf(session, receipt.bytes), writeId), audit]);
    for (const l of this.listeners) await l.afterWrite?.(ns, session, receipt, ctx, { op: info.op, added: info.added });
  }

  /** The session's audit records; 404 when the session does not exist. */
  async auditRecords(ns: string, id: string): Promise<AuditRecord[]> {
    assertSessionId(id);
    if (!(await this.objects.get(keys.session(ns, id)))) throw notFound(`session ${id} does not exist`);
    return this.audit ? this.audit.list(ns, id) : [];
  }

  private remember(key: string, entry: Cached): void {
    this.forget(key);
    if (weight(entry) > this.cacheBytes / 2) return;
    this.cache.set(key, entry);
    this.cachedBytes += weight(entry);
    for (const [k, v] of this.cache) {
      if (this.cachedBytes <= this.cacheBytes) break;
      this.cache.delete(k);
      this.cachedBytes -= weight(v);
    }
  }

  private forget(key: string): void {
    const old = this.cache.get(key);
    if (old) {
      this.cache.delete(key);
      this.cachedBytes -= weight(old);
    }
  }
}

/** Memory a cached session holds: the parsed object (about its stored size) and the reusable bytes. */
function weight(entry: Cached): number {
  return entry.bytes + (entry.encoded?.json.byteLength ?? 0);
}

/** odek's trim: keep the system message plus the newest messages, `keep` in all; drop orphaned tool results. */
export function trimMessages(messages: Message[], keep: number): Message[] {
  if (messages.length <= keep) return messages;
  const head = messages[0]?.role === 'system' ? 1 : 0;
  let start = Math.max(head, messages.length - (keep - head));
  while (start < messages.length && messages[start]!.role === 'tool') start++;
  return [...messages.slice(0, head), ...messages.slice(start)];
}

/**
 * Stores the receipt in its write record and encodes the session. The receipt's byte count includes the
 * receipt itself, so encode until the size settles (the digit count changes at most once or twice).
 */
function seal(
  session: StoredSession,
  receipt: WriteReceipt,
  record: WriteRecord,
  prior?: EncodedMessages,
  extra?: Record<string, unknown>,
): { body: Uint8Array; messages: EncodedMessages } {
  const { core, messages } = encodeCoreParts(session, prior);
  let tail = encodeTail(session);
  for (let i = 0; i < 4; i++) {
    receipt.bytes = core.byteLength + tail.byteLength;
    record.r = { ...receipt, ...extra };
    const again = encodeTail(session);
    if (again.byteLength === tail.byteLength) return { body: concat(core, again), messages };
    tail = again;
  }
  return { body: concat(core, tail), messages };
}

/** The write record that a request with this Idempotency-Key left in `session`, while it is kept (24 h). */
export async function keyedWrite(session: StoredSession, idempotencyKey: string): Promise<WriteRecord | undefined> {
  const k = 'k:' + (await sha256Hex(idempotencyKey));
  return session.satchel?.writes.find((w) => w.k === k);
}

function makeReceipt(s: StoredSession, bytes: number, redactions: number, dropped: number): WriteReceipt {
  return {
    id: s.id,
    revision: s.revision,
    turns: s.turns,
    updated_at: s.updated_at,
    bytes,
    redactions,
    dropped_groups: dropped,
    untrusted_ingested: s.untrusted_ingested,
    episode_untrusted: s.episode_untrusted,
  };
}

function entryOf(s: StoredSession, bytes: number): ManifestEntry {
  return {
    id: s.id,
    task: s.task,
    turns: s.turns,
    model: s.model,
    provider: s.provider,
    created_at: s.created_at,
    updated_at: s.updated_at,
    bytes,
    revision: s.revision,
    at: Date.parse(s.updated_at) || 0,
  };
}

function toSummary(e: ManifestEntry): SessionSummary {
  return {
    id: e.id,
    task: e.task,
    turns: e.turns,
    model: e.model,
    provider: e.provider,
    created_at: e.created_at,
    updated_at: e.updated_at,
    bytes: e.bytes,
  };
}

function encodeCursor(e: ManifestEntry): string {
  return btoa(JSON.stringify([e.at, e.id])).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function decodeCursor(cursor: string): { at: number; id: string } {
  try {
    const [at, id] = JSON.parse(atob(cursor.replaceAll('-', '+').replaceAll('_', '/'))) as [unknown, unknown];
    if (typeof at === 'number' && typeof id === 'string') return { at, id };
  } catch {
    // fall through
  }
  throw badRequest('cursor is not one this server issued', [{ path: 'cursor', message: 'invalid cursor' }]);
}


function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
