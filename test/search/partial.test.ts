import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message, StoredSession } from '../../lib/model/session.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { docKeyOf, lexDocOf, type LexDoc } from '../../lib/search/docs.js';
import { LocalEmbedder, type Embedder } from '../../lib/search/embed.js';
import { SearchEngine, type SearchOptions } from '../../lib/search/engine.js';
import { SessionStore, type WriteChange, type WriteContext } from '../../lib/sessions/store.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';

/**
 * A process that holds only the newest messages of a large session appends with a partial copy: the
 * messages before `held` are undefined. The search listener must never read them, and never store a
 * document that lacks them: it extends the previous version's document, or leaves the version lagging.
 */

const NS = 'ns1';

function localStore(): LocalStore {
  return new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-partial-')));
}

/** One "process": a session store and a search engine over shared storage, with its own background. */
function proc(
  objects: ObjectStore,
  listen: boolean,
  options: SearchOptions = {},
  embedder: Embedder | null = null,
) {
  const sessions = new SessionStore(objects, {
    pipeline: defaultPipeline({ maxSessionBytes: 1 << 20 }),
  });
  const errors: { what: string; err: unknown }[] = [];
  const engine = new SearchEngine(sessions, embedder, {
    freshnessMs: 0,
    ...options,
    onError: (what, err) => errors.push({ what, err }),
  });
  if (listen) sessions.addListener(engine);
  const running = new Set<Promise<unknown>>();
  const schedule = (w: Promise<unknown>) => {
    const p = w.catch((err) => errors.push({ what: 'scheduled work failed', err }));
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const ctx: WriteContext = { schedule };
  /** Stores lingering records and waits for every background task. */
  const settle = async () => {
    await engine.flushRecords();
    while (running.size) await Promise.all([...running]);
  };
  return { objects, sessions, engine, errors, schedule, ctx, settle };
}

type Proc = ReturnType<typeof proc>;

/** Early messages hold words no later message has: a document without them is detectably wrong. */
const early: Message[] = [
  { role: 'user', content: 'the zeppelin hangar needs a marmalade inventory' },
  { role: 'assistant', content: 'counted the marmalade jars beside the zeppelin' },
  { role: 'user', content: 'also check the periscope' },
];

async function created(p: Proc): Promise<StoredSession> {
  return (await p.sessions.create(NS, { task: 'warehouse audit', messages: early }, p.ctx)).session;
}

async function appended(p: Proc, id: string, content: string) {
  return p.sessions.append(
    NS,
    id,
    { messages: [{ role: 'assistant', content }] },
    undefined,
    p.ctx,
  );
}

/** The copy a process holding only the messages from `held` on would have. */
function partial(session: StoredSession, held: number): StoredSession {
  const messages = session.messages.map((m, i) => (i < held ? undefined : m)) as Message[];
  return { ...session, messages };
}

/** The last message only: what an append of one message holds of the session. */
function heldChange(session: StoredSession): WriteChange {
  return { op: 'append', added: 1, held: session.messages.length - 1 };
}

async function recordOf(p: Proc, session: StoredSession): Promise<LexDoc | null> {
  return p.engine.lexical.recordAt(NS, docKeyOf(session));
}

function plain(doc: LexDoc | null) {
  return doc && { len: doc.len, tf: Object.fromEntries([...doc.tf].sort()) };
}

describe('afterWrite with a partial session copy', () => {
  it('extends the previous version’s record from the bucket into the whole document', async () => {
    const objects = localStore();
    // Process A writes revisions 1 and 2 with full copies: their records land normally.
    const a = proc(objects, true);
    const s1 = await created(a);
    await appended(a, s1.id, 'the forklift battery is charged');
    await a.settle();
    // Process B (no cached documents) writes revision 3, then indexes it from a partial copy.
    const b = proc(objects, false);
    const { session: s3, receipt } = await appended(
      b,
      s1.id,
      'inventory finished with a gondola report',
    );
    expect(s3.revision).toBe(3);
    expect(await recordOf(b, { ...s3, revision: 2 })).not.toBeNull();
    b.engine.afterWrite(NS, partial(s3, s3.messages.length - 1), receipt, b.ctx, heldChange(s3));
    await b.settle();
    expect(b.errors).toEqual([]);
    const doc = await recordOf(b, s3);
    expect(plain(doc)).toEqual(plain(lexDocOf(s3)));
    // The tokens of the absent messages are in it (a document of the held messages alone would lack them).
    expect(doc!.tf.has('zeppelin')).toBe(true);
    expect(doc!.tf.has('gondola')).toBe(true);
  });

  it('chains a burst of partial appends in process: only the newest record is stored, and it is whole', async () => {
    const objects = localStore();
    const a = proc(objects, true);
    const s1 = await created(a);
    await a.settle();
    const b = proc(objects, false, { recordLingerMs: 60_000 });
    const r2 = await appended(b, s1.id, 'first gondola note');
    const r3 = await appended(b, s1.id, 'second dirigible note');
    // Revision 2's record lingers (never stored): revision 3 must extend the document held in process.
    b.engine.afterWrite(NS, partial(r2.session, 3), r2.receipt, b.ctx, heldChange(r2.session));
    b.engine.afterWrite(NS, partial(r3.session, 4), r3.receipt, b.ctx, heldChange(r3.session));
    await b.settle();
    expect(b.errors).toEqual([]);
    expect(await recordOf(b, r2.session)).toBeNull();
    expect(plain(await recordOf(b, r3.session))).toEqual(plain(lexDocOf(r3.session)));
  });

  it('without a previous record reads that version whole once, and stores its whole document', async () => {
    const objects = localStore();
    // The session is written through a store with no listener: no record of any revision exists.
    const w = proc(objects, false);
    const s1 = await created(w);
    const { session: s2, receipt } = await appended(w, s1.id, 'the gondola report is filed');
    // Another process indexes revision 2 from a partial copy.
    const b = proc(objects, false);
    expect(() =>
      b.engine.afterWrite(NS, partial(s2, 3), receipt, b.ctx, heldChange(s2)),
    ).not.toThrow();
    await b.settle();
    expect(b.errors).toEqual([]);
    // The record is the whole session's document, early (absent) messages included.
    expect(plain(await recordOf(b, s2))).toEqual(plain(lexDocOf(s2)));
    expect((await listAll(objects, `ns/${NS}/x/d/`)).length).toBe(1);
    // A word only the absent messages hold is found.
    const hits = await b.engine.search(NS, 'zeppelin marmalade', 10, { schedule: b.schedule });
    expect(hits.map((h) => h.id)).toEqual([s1.id]);
    await b.settle();
    // The next append extends that whole document.
    const { session: s3, receipt: r3 } = await appended(w, s1.id, 'closing the dirigible ticket');
    b.engine.afterWrite(NS, s3, r3, b.ctx, { op: 'append', added: 1 });
    await b.settle();
    expect(b.errors).toEqual([]);
    expect(plain(await recordOf(b, s3))).toEqual(plain(lexDocOf(s3)));
  });

  it('stores no record when the request had known values (old text may be redacted again)', async () => {
    const objects = localStore();
    const a = proc(objects, true);
    const s1 = await created(a);
    await a.settle();
    const b = proc(objects, false);
    const { session: s2, receipt } = await appended(b, s1.id, 'the gondola report is filed');
    // The previous record is there: only knownValues stands in the way of extending it.
    expect(await recordOf(b, s1)).not.toBeNull();
    const ctx: WriteContext = { ...b.ctx, knownValues: ['hunter2-secret-value'] };
    b.engine.afterWrite(NS, partial(s2, 3), receipt, ctx, heldChange(s2));
    await b.settle();
    expect(b.errors).toEqual([]);
    expect(await recordOf(b, s2)).toBeNull();
  });

  it('stores no vector from a partial copy (it would embed absent text); a full copy still gets one', async () => {
    const objects = localStore();
    const w = proc(objects, false);
    const s1 = await created(w);
    const { session: s2, receipt } = await appended(w, s1.id, 'the gondola report is filed');
    const b = proc(objects, false, { localVectorWeight: 1 }, new LocalEmbedder());
    b.engine.afterWrite(NS, partial(s2, 3), receipt, b.ctx, heldChange(s2));
    await b.settle();
    expect(b.errors).toEqual([]);
    const vectorRecords = async () =>
      (await listAll(objects, `ns/${NS}/x/v/`)).filter((k) => k.includes('/d/'));
    expect(await vectorRecords()).toEqual([]);
    // The same call with the whole session stores the vector: the check above is not vacuous.
    b.engine.afterWrite(NS, s2, receipt, b.ctx, { op: 'append', added: 1 });
    await b.settle();
    expect(b.errors).toEqual([]);
    expect((await vectorRecords()).length).toBe(1);
  });
});
