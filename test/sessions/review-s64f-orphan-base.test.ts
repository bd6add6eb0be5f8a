// Review s64f: a writer that stopped between a fold's base PUT and its commit left a base nothing names,
// holding the whole session. Only the sweep of a later fold deleted it, once 15 min old. A session trimmed
// under the split is stored whole and never folds again; a fold within 15 min of the stop spares the young
// base, and appends do not fold. Either way text a trim removed stayed in that base until the session's
// delete. Now the compactor's healing of the stopped writer's stale marker sweeps the session's parts that
// nothing names, and keeps the marker (for a later heal) while such a part is younger than the grace.
import { describe, expect, it } from 'vitest';
import { decodeStored } from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { partsOf } from '../../lib/sessions/cache.js';
import { SessionStore } from '../../lib/sessions/store.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { Stoppable } from '../support/stoppable-store.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'ob';
const id = 'o';
const SECRET = 'PASSWORD-TOLD-BY-MISTAKE-7f3a';
const MIN = 60_000;

/** A session store splitting sessions at 16 KiB (1 KiB segments), on the test's clock. */
function open(objects: ObjectStore, clock: { t: number }, markerIdleMs = 0) {
  const pipeline = defaultPipeline({ maxSessionBytes: 4 * 1024 * 1024 });
  return new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    splitBytes: 16 * 1024,
    segmentBytes: 1024,
    now: () => clock.t,
    markerIdleMs,
  });
}

const msg = (tag: string) => ({
  role: 'user' as const,
  content: `${tag} ${'lorem ipsum dolor sit amet '.repeat(15)}`.slice(0, 400),
});

/**
 * Session `o` of 48 messages of about 400 B (split), its third holding SECRET; then process C trims it to
 * 47 (a new base) and stops before its commit: one base nothing names, holding the secret. With `warmUp`,
 * C appended `warmUp` ms before its trim, which then runs under that append's standing pending marker.
 */
async function crashedTrim(warmUp = 0) {
  const clock = { t: Date.parse('2026-12-07T10:00:00Z') };
  const objects = tempLocalStore(ns);
  const a = open(objects, clock);
  const messages = [msg('first'), { role: 'user' as const, content: `note: ${SECRET}` }];
  for (let i = 0; i < 46; i++) messages.push(msg('m' + i));
  await a.create(ns, { id, task: 't', messages } as never);
  await a.settled();
  const stoppable = new Stoppable(objects, (k) => k === keys.session(ns, id));
  // C's marker stands between its writes (30 s idle), as a server's does.
  const c = open(stoppable, clock, 30_000);
  if (warmUp) {
    await c.append(ns, id, { messages: [msg('warm')] }, undefined, {});
    clock.t += warmUp;
  }
  stoppable.stopped = true;
  void c.trim(ns, id, 47).catch(() => undefined);
  const orphan = await until(async () => (await unnamed(objects))[0]);
  return { clock, objects, orphan };
}

/** Polls `f` (real time) until it answers something. */
async function until<T>(f: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const got = await f();
    if (got !== undefined) return got;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('never came');
}

/** The session's parts its object does not name. */
async function unnamed(objects: ObjectStore): Promise<string[]> {
  const found = await objects.get(keys.session(ns, id));
  const named = partsOf(decodeStored(found!.body, keys.session(ns, id)));
  return (await listAll(objects, keys.parts(ns, id))).filter((k) => !named.has(k));
}

/** Every object of the bucket holding SECRET. */
async function holders(objects: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(objects, '')) {
    const got = await objects.get(k);
    if (got && new TextDecoder().decode(got.body).includes(SECRET)) out.push(k);
  }
  return out;
}

/** A listing, and its background work (a compaction, which heals stale markers) drained. */
async function listed(b: SessionStore) {
  const work: Promise<unknown>[] = [];
  await b.list(ns, { limit: 10 }, { schedule: (w) => work.push(w) });
  await Promise.all(work);
  await b.settled();
}

/** On each of three later days: an append, a listing (its compaction heals stale markers), drained. */
async function laterDays(b: SessionStore, clock: { t: number }) {
  for (let day = 1; day <= 3; day++) {
    clock.t += 24 * 60 * MIN;
    await b.append(ns, id, { messages: [msg('later' + day)] }, undefined, {});
    await listed(b);
  }
}

describe('a base left by a writer that stopped before its commit', () => {
  it('goes once a trim stored the session whole again (it never folds again)', async () => {
    const { clock, objects, orphan } = await crashedTrim();
    expect(await holders(objects)).toContain(orphan);
    const b = open(objects, clock);
    clock.t += MIN;
    expect(await b.trim(ns, id, 4)).toMatchObject({ before: 48, after: 4 });
    await b.settled();
    await laterDays(b, clock);
    expect(JSON.stringify(await b.get(ns, id))).not.toContain(SECRET);
    expect(await holders(objects)).toEqual([]);
    expect(await listAll(objects, keys.parts(ns, id))).toEqual([]);
  });

  it('goes when the trim that removed its text folded within 15 min of the stop', async () => {
    const { clock, objects, orphan } = await crashedTrim();
    const b = open(objects, clock);
    clock.t += MIN;
    expect(await b.trim(ns, id, 45)).toMatchObject({ before: 48, after: 45 });
    await b.settled();
    // The trim's fold swept, but spared the orphan: 1 min old (a writer in flight may commit on it).
    expect(await holders(objects)).toEqual([orphan]);
    await laterDays(b, clock);
    expect(await holders(objects)).toEqual([]);
    expect(await unnamed(objects)).toEqual([]);
  });

  it('keeps the stale marker while the orphan is younger than 15 min, and goes at a later heal', async () => {
    // C's trim ran 4 min after the append that stored its standing marker: the orphan is 4 min younger.
    const { clock, objects, orphan } = await crashedTrim(4 * MIN);
    const markers = () => listAll(objects, `${keys.manifest(ns)}p/`);
    expect(await markers()).toHaveLength(1);
    const b = open(objects, clock);
    clock.t += 11 * MIN + 30_000; // the marker is 15.5 min old, the orphan 11.5
    await listed(b);
    expect(await unnamed(objects)).toEqual([orphan]); // young: a writer in flight may still commit on it
    expect(await markers()).toHaveLength(1);
    clock.t += 5 * MIN; // the orphan is 16.5 min old
    await listed(b);
    expect(await unnamed(objects)).toEqual([]);
    expect(await markers()).toEqual([]);
    // What the object names stays: the session reads whole (the create's 48 messages and C's append).
    expect((await open(objects, clock).get(ns, id)).messages).toHaveLength(49);
  });

  it('an object under the parts folder with no time in its name keeps no stale marker for good', async () => {
    const { clock, objects } = await crashedTrim();
    const junk = `${keys.parts(ns, id)}notes.txt`; // put there behind Satchel's back
    await objects.put(junk, new TextEncoder().encode('x'));
    const b = open(objects, clock);
    clock.t += 16 * MIN;
    await listed(b);
    expect(await unnamed(objects)).toEqual([]);
    expect(await listAll(objects, `${keys.manifest(ns)}p/`)).toEqual([]);
  });
});
