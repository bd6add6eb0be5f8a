import { describe, expect, it } from 'vitest';
import { decodeSession } from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { encodeLease } from '../../lib/model/lease.js';
import { listAll } from '../../lib/storage/prefix.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { receiptOf, SessionStore, trimMessages } from '../../lib/sessions/store.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import type { Message } from '../../lib/model/session.js';
import { CountingStore } from '../../lib/storage/counting.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { StorageUnavailableError, text } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { LoseCommit } from '../support/lose-commit.js';

const ns = 'alice';
const user = (content: string): Message => ({ role: 'user', content });
const sys: Message = { role: 'system', content: 'You are helpful.' };

function setup(now = () => Date.now()) {
  const objects = new MemoryStore();
  return { objects, sessions: new SessionStore(objects, { now }) };
}

describe('session operations', () => {
  it('creates with a new id of the contract format, and gets it back', async () => {
    const { sessions } = setup();
    const { session, receipt } = await sessions.create(ns, {
      task: 'fix the build',
      messages: [sys, user('hi')],
    });
    expect(session.id).toMatch(/^\d{8}-[0-9a-f]{32}$/);
    expect(session.revision).toBe(1);
    expect(session.turns).toBe(1);
    expect(receipt).toMatchObject({
      id: session.id,
      revision: 1,
      turns: 1,
      redactions: 0,
      dropped_groups: 0,
    });
    expect(receipt.bytes).toBeGreaterThan(0);
    const got = await sessions.get(ns, session.id);
    expect(got.messages).toEqual([sys, user('hi')]);
  });

  it('the receipt bytes are the stored object size', async () => {
    const { sessions, objects } = setup();
    const { receipt } = await sessions.create(ns, { task: 't', id: 'sized' });
    expect((await objects.get(keys.session(ns, 'sized')))!.body.byteLength).toBe(receipt.bytes);
    const r2 = await sessions.append(
      ns,
      'sized',
      { messages: [user('x'.repeat(5000))] },
      undefined,
    );
    expect((await objects.get(keys.session(ns, 'sized')))!.body.byteLength).toBe(r2.receipt.bytes);
  });

  it('imported ids are validated; reserved names refused; 409 on an existing id', async () => {
    const { sessions } = setup();
    await sessions.create(ns, { task: 't', id: 'my.session_1-a' });
    await expect(sessions.create(ns, { task: 't', id: 'my.session_1-a' })).rejects.toMatchObject({
      kind: 'conflict',
    });
    for (const bad of ['.hidden', 'latest', 'index', 'a/b', '', 'x'.repeat(129), 'a b', '..']) {
      await expect(sessions.create(ns, { task: 't', id: bad })).rejects.toMatchObject({
        kind: 'invalid',
      });
    }
  });

  it('an id in one namespace does not exist in another', async () => {
    const { sessions } = setup();
    await sessions.create('a', { task: 't', id: 'shared' });
    await expect(sessions.get('b', 'shared')).rejects.toMatchObject({ kind: 'not_found' });
    await sessions.create('b', { task: 'other', id: 'shared' });
    expect((await sessions.get('a', 'shared')).task).toBe('t');
  });

  it('appends with and without If-Match; a stale If-Match is 412', async () => {
    const { sessions } = setup();
    const { session } = await sessions.create(ns, { task: 't', messages: [sys] });
    const a = await sessions.append(ns, session.id, { messages: [user('one')] }, 1);
    expect(a.receipt.revision).toBe(2);
    const b = await sessions.append(ns, session.id, { messages: [user('two')] }, undefined);
    expect(b.receipt).toMatchObject({ revision: 3, turns: 2 });
    await expect(
      sessions.append(ns, session.id, { messages: [user('three')] }, 2),
    ).rejects.toMatchObject({ kind: 'stale' });
    expect((await sessions.get(ns, session.id)).messages.map((m) => m.content)).toEqual([
      sys.content,
      'one',
      'two',
    ]);
  });

  it('If-Match sees past a stale cache: another writer moved the session on', async () => {
    const objects = new MemoryStore();
    const deviceA = new SessionStore(objects);
    const deviceB = new SessionStore(objects);
    const { session } = await deviceA.create(ns, { task: 't' });
    await deviceB.append(ns, session.id, { messages: [user('from B')] }, 1); // rev 2, A's cache says 1
    const out = await deviceA.append(ns, session.id, { messages: [user('from A')] }, 2);
    expect(out.receipt.revision).toBe(3);
    await expect(
      deviceA.append(ns, session.id, { messages: [user('stale')] }, 1),
    ).rejects.toMatchObject({ kind: 'stale' });
  });

  it('an Idempotency-Key makes a retry a no-op, and its reuse for another body is refused', async () => {
    const { sessions } = setup();
    const { session } = await sessions.create(ns, { task: 't' });
    const first = await sessions.append(ns, session.id, { messages: [user('once')] }, undefined, {
      idempotencyKey: 'k-1',
    });
    const again = await sessions.append(ns, session.id, { messages: [user('once')] }, undefined, {
      idempotencyKey: 'k-1',
    });
    expect(again.replayed).toBe(true);
    expect(again.receipt).toEqual(first.receipt);
    // Even with the If-Match the first request used, the retry returns the first result.
    const withTag = await sessions.append(ns, session.id, { messages: [user('once')] }, 1, {
      idempotencyKey: 'k-1',
    });
    expect(withTag.receipt).toEqual(first.receipt);
    await expect(
      sessions.append(ns, session.id, { messages: [user('different')] }, undefined, {
        idempotencyKey: 'k-1',
      }),
    ).rejects.toMatchObject({ kind: 'key_reused' });
    expect((await sessions.get(ns, session.id)).messages).toHaveLength(1);
  });

  it('a write record keeps its receipt compactly, and a replay from another process answers it whole', async () => {
    const objects = new MemoryStore();
    const open = () =>
      new SessionStore(objects, { pipeline: defaultPipeline({ maxSessionBytes: 1 << 20 }) });
    const { session } = await open().create(ns, { task: 't' });
    const secret = 'AKIA' + 'ABCDEFGHIJKLMNOP';
    // Each call from a new process: the replay reads the record from storage.
    const send = () =>
      open().append(ns, session.id, { messages: [user(`key ${secret}`)] }, undefined, {
        idempotencyKey: 'k-compact',
      });
    const first = await send();
    expect(first.receipt.redactions).toBe(1);
    const again = await send();
    expect(again.replayed).toBe(true);
    expect(again.receipt).toEqual(first.receipt);
    // Stored: what the receipt holds beyond the session's id, the record's own time and default counts.
    const stored = decodeSession((await objects.get(keys.session(ns, session.id)))!.body, 'x');
    const record = stored.satchel!.writes.find((w) => w.k.startsWith('k:'))!;
    expect(Object.keys(record.r).sort()).toEqual(['bytes', 'redactions', 'revision', 'turns']);
    // An unkeyed record, with its audit fields, is under 200 bytes (every write rewrites up to 16).
    await open().append(ns, session.id, { messages: [user('plain')] }, undefined);
    const after = decodeSession((await objects.get(keys.session(ns, session.id)))!.body, 'x');
    const plain = after.satchel!.writes.filter((w) => w.k.startsWith('w:')).at(-1)!;
    expect(JSON.stringify(plain).length).toBeLessThan(200);
    expect(receiptOf(record, session.id)).toEqual(first.receipt);
  });

  it('the idempotency key is stored hashed, never as sent', async () => {
    const { sessions, objects } = setup();
    const { session } = await sessions.create(ns, { task: 't' });
    await sessions.append(ns, session.id, { messages: [user('x')] }, undefined, {
      idempotencyKey: 'secret-looking-key-123',
    });
    const raw = text((await objects.get(keys.session(ns, session.id)))!.body);
    expect(raw).not.toContain('secret-looking-key-123');
  });

  it('replace needs the current revision and keeps sticky flags and refs', async () => {
    const { sessions } = setup();
    const { session } = await sessions.create(ns, {
      task: 't',
      sandbox: true,
      untrusted_ingested: true,
      external_refs: [{ kind: 'issue', uri: 'https://example.com/1' }],
    });
    const out = await sessions.replace(
      ns,
      session.id,
      {
        task: 'new task',
        messages: [user('only')],
        sandbox: false,
        untrusted_ingested: false,
        external_refs: [],
      },
      1,
    );
    expect(out.session).toMatchObject({
      task: 'new task',
      sandbox: true,
      untrusted_ingested: true,
      revision: 2,
      turns: 1,
    });
    expect(out.session.external_refs).toHaveLength(1);
    await expect(
      sessions.replace(ns, session.id, { task: 'x', messages: [] }, 1),
    ).rejects.toMatchObject({ kind: 'stale' });
    await expect(
      sessions.replace(ns, session.id, { id: 'other', task: 'x', messages: [] }, 2),
    ).rejects.toMatchObject({ kind: 'invalid' });
    const any = await sessions.replace(ns, session.id, { task: 'any', messages: [] }, 'any');
    expect(any.session.revision).toBe(3);
  });

  it('external refs are deduplicated on (kind, uri, created_by) and stamped', async () => {
    const { sessions } = setup();
    const ref = { kind: 'pr', uri: 'https://git.example/pr/1' };
    const { session } = await sessions.create(
      ns,
      { task: 't', external_refs: [ref, ref] },
      { device: 'laptop' },
    );
    expect(session.external_refs).toHaveLength(1);
    expect(session.external_refs[0]).toMatchObject({ created_by: 'laptop', read_only: false });
    expect(session.external_refs[0]!.created_at).toMatch(/^\d{4}-/);
    const out = await sessions.append(
      ns,
      session.id,
      { messages: [user('x')], external_refs: [ref, { ...ref, created_by: 'ci' }] },
      undefined,
      { device: 'laptop' },
    );
    expect(out.session.external_refs.map((r) => r.created_by)).toEqual(['laptop', 'ci']);
  });

  it('delete is 404 for an unknown id, and a deleted session is never recreated by a stale write', async () => {
    const objects = new MemoryStore();
    const deviceA = new SessionStore(objects);
    const deviceB = new SessionStore(objects);
    const { session } = await deviceA.create(ns, { task: 't' });
    await deviceB.append(ns, session.id, { messages: [user('warm B cache')] }, undefined);
    await deviceA.delete(ns, session.id);
    await expect(deviceA.delete(ns, session.id)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(
      deviceB.append(ns, session.id, { messages: [user('stale')] }, undefined),
    ).rejects.toMatchObject({ kind: 'not_found' });
    await expect(
      deviceB.append(ns, session.id, { messages: [user('stale')] }, 2),
    ).rejects.toMatchObject({ kind: 'not_found' });
    expect(await objects.get(keys.session(ns, session.id))).toBeNull();
    expect((await deviceB.list(ns, { limit: 20 })).sessions).toEqual([]);
  });

  it('cleanup deletes by updated_at; 0 wipes everything', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const { sessions } = setup(() => clock);
    await sessions.create(ns, { task: 'old', id: 'old' });
    clock += 10 * 86_400_000;
    await sessions.create(ns, { task: 'new', id: 'new' });
    clock += 86_400_000;
    expect(await sessions.cleanup(ns, 5)).toEqual({ deleted: 1 });
    expect((await sessions.list(ns, { limit: 20 })).sessions.map((s) => s.id)).toEqual(['new']);
    expect(await sessions.cleanup(ns, 0)).toEqual({ deleted: 1 });
    expect((await sessions.list(ns, { limit: 20 })).sessions).toEqual([]);
  });

  it('a delete whose answer was lost, although it landed, answers done (found by review)', async () => {
    // Before: 503, and the retry 404, for a delete that happened.
    let lose = false;
    class LoseDelete extends PassThrough {
      override async delete(k: string | string[]) {
        await this.inner.delete(k);
        if (lose && !Array.isArray(k) && k.includes('/sessions/')) {
          lose = false;
          throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
        }
      }
    }
    const objects = new MemoryStore();
    const sessions = new SessionStore(new LoseDelete(objects));
    await sessions.create(ns, { task: 'lost answer', id: 'gone' });
    lose = true;
    await sessions.delete(ns, 'gone');
    expect(lose).toBe(false);
    expect(await objects.get(keys.session(ns, 'gone'))).toBeNull();
    // One that did not land still fails, and the session stays.
    await sessions.create(ns, { task: 'kept', id: 'kept' });
    class Refuse extends PassThrough {
      override async delete(k: string | string[]) {
        if (!Array.isArray(k) && k.includes('/sessions/'))
          throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
        return this.inner.delete(k);
      }
    }
    await expect(new SessionStore(new Refuse(objects)).delete(ns, 'kept')).rejects.toSatisfy(
      (err: unknown) => StorageUnavailableError.is(err),
    );
    expect(await objects.get(keys.session(ns, 'kept'))).not.toBeNull();
  });

  it('an append whose answer was lost is not stored twice when the writes since have hidden its record', async () => {
    // Before: the re-read did not find its record (16 unkeyed writes since push it out; 15 when a keyed
    // one came last), so the append was sent again and stored twice. Now it says it may have been stored;
    // with fewer writes since, the re-read still finds it and answers its receipt.
    type Meanwhile = (other: SessionStore, objects: MemoryStore) => Promise<void>;
    const lost = async (meanwhile: Meanwhile, expected?: number) => {
      const objects = new MemoryStore();
      const other = new SessionStore(objects);
      const losing = new LoseCommit(objects);
      const lossy = new SessionStore(losing);
      await other.create(ns, { task: 'hidden record', id: 's' });
      await lossy.get(ns, 's');
      losing.then = () => meanwhile(other, objects);
      const answer = await lossy.append(ns, 's', { messages: [user('once')] }, expected).then(
        (r) => ({ revision: r.receipt.revision }),
        (e: { kind?: string; message?: string }) => ({ kind: e.kind, message: e.message }),
      );
      expect(losing.then).toBeUndefined();
      const stored = (await other.get(ns, 's')).messages.map((m) => m.content);
      expect(stored.filter((c) => c === 'once')).toEqual(['once']);
      return answer;
    };
    // Each append from a process of its own: a process drops its own records once they settle.
    const appends =
      (count: number, key?: string) => async (other: SessionStore, objects: MemoryStore) => {
        for (let i = 0; i < count; i++)
          await new SessionStore(objects).append(
            ns,
            's',
            { messages: [user(`other ${i}`)] },
            undefined,
          );
        if (key)
          await other.append(ns, 's', { messages: [user('keyed')] }, undefined, {
            idempotencyKey: key,
          });
      };
    const mayHave = {
      kind: 'unavailable',
      message: expect.stringMatching(/lost the answer.*may have been stored/),
    };
    expect(await lost(appends(3))).toEqual({ revision: 2 });
    expect(await lost(appends(16))).toMatchObject(mayHave);
    expect(await lost(appends(15, 'k-1'))).toMatchObject(mayHave);
    // With If-Match: not a 412 (the revision moved on, perhaps by this very write).
    expect(await lost(appends(16), 1)).toMatchObject(mayHave);
    // One process that keeps the session drops its own records once their log and audit records are
    // stored, so 20 appends from it leave the lost write's record in place: its receipt answers.
    const warm = (count: number) => async (other: SessionStore) => {
      for (let i = 0; i < count; i++) {
        await other.append(ns, 's', { messages: [user(`warm ${i}`)] }, undefined);
        await other.settled();
      }
    };
    expect(await lost(warm(20))).toEqual({ revision: 2 });
    // 20 appends of one process at once (a group commit) prune it, and once their records settle the
    // next write drops them, leaving 1 where 16 told of pruning: the mark (`wp`) still says that records
    // of revision 2 may be gone, so the answer stays honest.
    const both: Meanwhile = async (other, objects) => {
      const burst = Array.from({ length: 20 }, (_, i) =>
        other.append(ns, 's', { messages: [user(`burst ${i}`)] }, undefined),
      );
      await Promise.all(burst);
      await warm(1)(other);
      await warm(1)(other);
      const stored = JSON.parse(text((await objects.get(keys.session(ns, 's')))!.body));
      expect(stored.satchel.writes.length).toBeLessThan(4);
    };
    expect(await lost(both)).toMatchObject(mayHave);
  });

  it('an append whose lost answer a read has ruled out, or whose revision another holds, is sent again', async () => {
    // Found by review: both answered "may have been stored" for a write that surely had not landed.
    const run = async (plan: (n: number, other: SessionStore) => Promise<'lose' | 'pass'>) => {
      const objects = new MemoryStore();
      const other = new SessionStore(objects);
      let n = 0;
      class Lossy extends PassThrough {
        override async put(
          k: string,
          body: Uint8Array,
          options?: Parameters<MemoryStore['put']>[2],
        ) {
          if (!(k.endsWith('/sessions/s.json') && options?.ifMatch))
            return this.inner.put(k, body, options);
          if ((await plan(++n, other)) === 'pass') return this.inner.put(k, body, options);
          throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
        }
      }
      await other.create(ns, { task: 't', id: 's' });
      const lossy = new SessionStore(new Lossy(objects));
      await lossy.get(ns, 's');
      await lossy.append(ns, 's', { messages: [user('once')] }, undefined);
      const stored = (await other.get(ns, 's')).messages.map((m) => m.content);
      expect(stored.filter((c) => c === 'once')).toEqual(['once']);
    };
    const others = async (other: SessionStore, count: number) => {
      for (let i = 0; i < count; i++)
        await other.append(ns, 's', { messages: [user(`o${i}`)] }, undefined);
    };
    // The first attempt never reaches storage while another write takes its revision: the re-read rules
    // it out. The second loses its If-Match to 16 writes; the third lands.
    await run(async (n, other) => {
      if (n === 1) await others(other, 1);
      if (n === 2) await others(other, 16);
      return n === 1 ? 'lose' : 'pass';
    });
    // The attempt never reaches storage and 16 writes follow, the first of them at its revision.
    await run(async (n, other) => {
      if (n === 1) await others(other, 16);
      return n === 1 ? 'lose' : 'pass';
    });
  });

  it('a delete whose erasing fails after the object went says so, and its retry erases what it left', async () => {
    // Before: a plain 503, and the retry a 404 that left the audit records and swallowed its own failures.
    const { objects, store, sessions, refuse } = erasing();
    await bigSession(sessions, 'big');
    expect(await leftOf(objects, 'big')).toMatchObject({
      parts: expect.any(Number),
      audit: expect.any(Number),
    });
    expect((await leftOf(objects, 'big')).parts).toBeGreaterThan(0);
    refuse.on = true;
    await expect(sessions.delete(ns, 'big')).rejects.toMatchObject({
      kind: 'unavailable',
      message: expect.stringMatching(
        /^session big is gone, but erasing what may be left of it failed/,
      ),
    });
    expect(await objects.get(keys.session(ns, 'big'))).toBeNull();
    expect((await leftOf(objects, 'big')).audit).toBeGreaterThan(0);
    // While erasing still fails, the retry says so instead of a 404, without saying this call deleted it.
    await expect(sessions.delete(ns, 'big')).rejects.toMatchObject({
      kind: 'unavailable',
      message: expect.stringMatching(
        /^session big does not exist, but erasing what an earlier delete may have left of it failed/,
      ),
      extra: { retryAfter: 1 },
    });
    refuse.on = false;
    await expect(new SessionStore(store).delete(ns, 'big')).rejects.toMatchObject({
      kind: 'not_found',
      message: 'session big does not exist',
    });
    expect(await leftOf(objects, 'big')).toEqual({ parts: 0, keyed: 0, audit: 0 });
    await expect(sessions.delete(ns, 'big')).rejects.toMatchObject({
      kind: 'not_found',
      message: 'session big does not exist',
    });
  });

  it('the retry erases what is left of a session whose id looks like a secret (found by review)', async () => {
    // Such an id gets no marker before its object is found; a DELETE that finds none still erases.
    const { objects, sessions, refuse } = erasing('', () => Date.now(), true);
    const id = 'proj-hunter22-run';
    await bigSession(sessions, id);
    const ctx = { knownValues: ['hunter22'] }; // the id holds a value the request names as a secret
    refuse.on = true;
    await expect(sessions.delete(ns, id, ctx)).rejects.toMatchObject({ kind: 'unavailable' });
    expect((await leftOf(objects, id)).audit).toBeGreaterThan(0);
    refuse.on = false;
    await expect(sessions.delete(ns, id, ctx)).rejects.toMatchObject({ kind: 'not_found' });
    expect(await leftOf(objects, id)).toEqual({ parts: 0, keyed: 0, audit: 0 });
  });

  it('a cleanup names the deleted sessions whose records it could not all erase', async () => {
    const { objects, sessions, refuse } = erasing('/s1/');
    for (const id of ['s0', 's1', 's2']) await sessions.create(ns, { task: id, id });
    refuse.on = true;
    await expect(sessions.cleanup(ns, 0)).rejects.toMatchObject({
      kind: 'unavailable',
      message: expect.stringMatching(
        /^cleanup deleted 3 of 3 sessions; 1 deleted keep records: delete each again: s1$/,
      ),
    });
    expect((await sessions.list(ns, { limit: 20 })).sessions).toEqual([]);
    refuse.on = false;
    await expect(sessions.delete(ns, 's1')).rejects.toMatchObject({ kind: 'not_found' });
    expect(await leftOf(objects, 's1')).toEqual({ parts: 0, keyed: 0, audit: 0 });
  });

  it('erasing what a delete left spares a session created again under the id meanwhile', async () => {
    // The deleted session was written two minutes before (its clock), so its parts are older than the
    // new session, beyond what clocks disagree by.
    const { objects, store, sessions, refuse } = erasing('', () => Date.now() - 120_000);
    await bigSession(sessions, 'again');
    refuse.on = true;
    await expect(sessions.delete(ns, 'again')).rejects.toMatchObject({ kind: 'unavailable' });
    refuse.on = false;
    const old = await leftOf(objects, 'again');
    // Another device creates the id again between this DELETE's read (no object) and its listing.
    const other = new SessionStore(objects, { audit: new AuditLog(objects, (s) => s) });
    let created: Promise<void> | undefined;
    const create = async () => {
      await other.create(ns, { task: 'again, new', id: 'again' });
      await other.auditRecords(ns, 'again');
    };
    class CreateWhileListing extends PassThrough {
      override async list(prefix: string, options?: Parameters<MemoryStore['list']>[1]) {
        await (created ??= create());
        return this.inner.list(prefix, options);
      }
    }
    const deleting = new SessionStore(new CreateWhileListing(store));
    await expect(deleting.delete(ns, 'again')).rejects.toMatchObject({ kind: 'not_found' });
    expect(created).toBeDefined();
    // Its audit record stays, and only its own (review s63a: the deleted one's records and packs stayed,
    // labels and all); the old parts, older than the session, go.
    const made = (await other.get(ns, 'again')).revision;
    expect((await other.auditRecords(ns, 'again')).map((r) => [r.op, r.revision])).toEqual([
      ['create', made],
    ]);
    expect(old.parts).toBeGreaterThan(0);
    expect(old.audit).toBeGreaterThan(0);
    expect(await leftOf(objects, 'again')).toEqual({ parts: 0, keyed: 0, audit: 1 });
    expect((await other.get(ns, 'again')).task).toBe('again, new');
  });

  it('a delete spares the audit records of a session created again under the id while it erases', async () => {
    // Before: the delete erased every audit record it listed, the new session's first one included.
    const objects = new MemoryStore();
    const audit = () => new AuditLog(objects, (s) => s);
    const other = new SessionStore(objects, { audit: audit() });
    let created: Promise<void> | undefined;
    const create = async () => {
      await other.create(ns, { task: 'again, new', id: 'again' });
      await other.auditRecords(ns, 'again'); // its record has landed
    };
    class CreateWhileListing extends PassThrough {
      override async list(prefix: string, options?: Parameters<MemoryStore['list']>[1]) {
        if (prefix.includes('/audit/')) await (created ??= create());
        return this.inner.list(prefix, options);
      }
    }
    const store = new CreateWhileListing(objects);
    const sessions = new SessionStore(store, { audit: new AuditLog(store, (s) => s) });
    await sessions.create(ns, { task: 'old', id: 'again' });
    await sessions.delete(ns, 'again');
    expect(created).toBeDefined();
    expect((await other.get(ns, 'again')).task).toBe('again, new');
    const made = (await other.get(ns, 'again')).revision;
    expect((await other.auditRecords(ns, 'again')).map((r) => [r.op, r.revision])).toEqual([
      ['create', made],
    ]);
  });

  it("a delete erases the session's expired continue lease, and spares a live one and a new session's", async () => {
    // Before: a lease (its owner and expiry, under the session's id) outlived its session.
    const objects = new MemoryStore();
    const lease = (owner: string, ms = 60_000) =>
      encodeLease({ owner, expiresAt: Date.now() + ms });
    const sessions = new SessionStore(objects);
    await sessions.create(ns, { task: 'gone', id: 'leased' });
    await objects.put(keys.lease(ns, 'leased'), lease('a-crashed-turn', -1000));
    await sessions.delete(ns, 'leased');
    expect(await objects.get(keys.lease(ns, 'leased'))).toBeNull();
    // A live one is its running turn's to release (test/continue/lease-delete.test.ts).
    await sessions.create(ns, { task: 'gone', id: 'leased' });
    await objects.put(keys.lease(ns, 'leased'), lease('a-running-turn'));
    await sessions.delete(ns, 'leased');
    expect(text((await objects.get(keys.lease(ns, 'leased')))!.body)).toContain('a-running-turn');
    await objects.delete(keys.lease(ns, 'leased'));

    // A session created again (and a turn of it leased) while the delete erases keeps its lease.
    const other = new SessionStore(objects);
    let created: Promise<void> | undefined;
    const create = async () => {
      await other.create(ns, { task: 'again, new', id: 'leased' });
      await objects.put(keys.lease(ns, 'leased'), lease('new-turn'));
    };
    class CreateWhileListing extends PassThrough {
      override async list(prefix: string, options?: Parameters<MemoryStore['list']>[1]) {
        if (prefix.includes('/audit/')) await (created ??= create());
        return this.inner.list(prefix, options);
      }
    }
    const deleting = new SessionStore(new CreateWhileListing(objects));
    await deleting.create(ns, { task: 'old', id: 'leased' }).catch(() => undefined);
    await objects.put(keys.lease(ns, 'leased'), lease('old-turn'));
    await deleting.delete(ns, 'leased');
    expect(created).toBeDefined();
    expect(text((await objects.get(keys.lease(ns, 'leased')))!.body)).toContain('new-turn');
  });

  it('a DELETE that finds no object spares the base of an append in flight on a session created again', async () => {
    // Found by review: the base was deleted before the commit that names it, which then landed, and every
    // read of the session failed.
    const objects = new MemoryStore();
    const opts = { splitBytes: 16 * 1024, segmentBytes: 2048 };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let committing!: () => void;
    const atCommit = new Promise<void>((r) => (committing = r));
    class HoldCommit extends PassThrough {
      override async put(k: string, body: Uint8Array, options?: Parameters<MemoryStore['put']>[2]) {
        if (k === keys.session(ns, 'x') && options?.ifMatch) {
          committing();
          await gate;
        }
        return this.inner.put(k, body, options);
      }
    }
    const writer = new SessionStore(new HoldCommit(objects), opts);
    let appending: Promise<unknown> | undefined;
    let raced: Promise<void> | undefined;
    const race = async () => {
      await writer.create(ns, { task: 'new', id: 'x' });
      appending = writer.append(ns, 'x', { messages: [user('y'.repeat(40_000))] }, undefined);
      await atCommit; // its base is stored, its commit on its way
    };
    class CreateWhileListing extends PassThrough {
      override async list(prefix: string, options?: Parameters<MemoryStore['list']>[1]) {
        await (raced ??= race());
        return this.inner.list(prefix, options);
      }
    }
    const deleting = new SessionStore(new CreateWhileListing(objects), opts);
    await expect(deleting.delete(ns, 'x')).rejects.toMatchObject({ kind: 'not_found' });
    release();
    await appending;
    const got = await new SessionStore(objects, opts).get(ns, 'x');
    expect(got.messages.map((m) => m.content.length)).toEqual([40_000]);
  });

  it('a cleanup whose deletes partly fail deletes the rest and says how many went (found by review)', async () => {
    class RefuseOne extends PassThrough {
      override async delete(k: string | string[]) {
        if (!Array.isArray(k) && k.endsWith('/sessions/s1.json'))
          throw new StorageUnavailableError('refused');
        return this.inner.delete(k);
      }
    }
    const objects = new MemoryStore();
    const sessions = new SessionStore(new RefuseOne(objects));
    for (let i = 0; i < 4; i++) await sessions.create(ns, { task: `t${i}`, id: `s${i}` });
    await expect(sessions.cleanup(ns, 0)).rejects.toMatchObject({
      kind: 'unavailable',
      message: expect.stringMatching(/^cleanup deleted 3 of 4 sessions; 1 could not be deleted/),
    });
    expect((await sessions.list(ns, { limit: 20 })).sessions.map((s) => s.id)).toEqual(['s1']);
  });

  it('lists newest first, pages with a cursor, and filters by updated_after (exclusive)', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const { sessions } = setup(() => (clock += 1000));
    for (let i = 0; i < 7; i++) await sessions.create(ns, { task: `t${i}`, id: `s${i}` });
    await sessions.append(ns, 's2', { messages: [user('bump')] }, undefined);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await sessions.list(ns, { limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(['s2', 's6', 's5', 's4', 's3', 's1', 's0']);
    const s4 = (await sessions.get(ns, 's4')).updated_at;
    const after = await sessions.list(ns, { limit: 20, updatedAfter: Date.parse(s4) });
    expect(after.sessions.map((s) => s.id)).toEqual(['s2', 's6', 's5']);
    expect((await sessions.latest(ns)).id).toBe('s2');
    await expect(sessions.list(ns, { limit: 3, cursor: 'garbage!' })).rejects.toMatchObject({
      kind: 'invalid',
    });
  });

  it('stored objects follow the contract: compact JSON, odek field order, revision inside', async () => {
    const { sessions, objects } = setup();
    const { session } = await sessions.create(ns, {
      task: 't',
      messages: [{ role: 'user', content: 'x', custom_field: { a: 1 } } as Message],
    });
    const raw = text((await objects.get(keys.session(ns, session.id)))!.body);
    expect(raw).not.toContain('\n');
    expect(Object.keys(JSON.parse(raw))).toEqual([
      'id',
      'created_at',
      'updated_at',
      'model',
      'provider',
      'turns',
      'task',
      'sandbox',
      'messages',
      'external_refs',
      'untrusted_ingested',
      'episode_untrusted',
      'episode_taint_tracked',
      'revision',
      'satchel',
    ]);
    expect(JSON.parse(raw).messages[0].custom_field).toEqual({ a: 1 });
  });

  it('an append that reuses the encoded messages stores exactly the canonical encoding', async () => {
    const { sessions, objects } = setup();
    const { encodeSession } = await import('../../lib/model/codec.js');
    const { session } = await sessions.create(ns, { task: 'enc', id: 'enc' });
    const texts = ['plain', 'üñíçødé 中文 😀', 'quote " and \\ backslash', '', 'line\nbreak'];
    for (let i = 0; i < 12; i++) {
      const messages: Message[] = [
        user(texts[i % texts.length]!),
        { role: 'assistant', content: `r${i}`, extra: { n: i } } as Message,
      ];
      await sessions.append(
        ns,
        session.id,
        { messages: i % 3 === 0 ? messages.slice(0, 1) : messages },
        undefined,
      );
      const body = (await objects.get(keys.session(ns, session.id)))!.body;
      expect(Buffer.from(body).equals(Buffer.from(encodeSession(decodeSession(body, 'k'))))).toBe(
        true,
      );
    }
    const stored = await sessions.get(ns, session.id);
    expect(stored.messages).toHaveLength(20);
    expect(stored.messages[1]!.content).toBe(texts[1]);
  });

  it('listeners (where search indexing plugs in) see each stored session and each delete', async () => {
    const seen: string[] = [];
    const objects = new MemoryStore();
    const sessions = new SessionStore(objects, {
      listeners: [
        {
          afterWrite: (n, s, r) =>
            void seen.push(`write ${n}/${s.id} rev ${r.revision} turns ${s.turns}`),
          afterDelete: (n, id) => void seen.push(`delete ${n}/${id}`),
        },
      ],
    });
    await sessions.create(ns, { task: 't', id: 'heard' });
    await sessions.append(ns, 'heard', { messages: [user('x')] }, undefined);
    await sessions.delete(ns, 'heard');
    expect(seen).toEqual([
      `write ${ns}/heard rev 1 turns 0`,
      `write ${ns}/heard rev 2 turns 1`,
      `delete ${ns}/heard`,
    ]);
  });

  it('an old odek file without the newer fields loads with defaults', () => {
    const odek = JSON.stringify({
      id: '20250101-old',
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:00:00Z',
      model: 'gpt',
      turns: 1,
      task: 'legacy',
      messages: [{ role: 'user', content: 'hi', extra: true }],
    });
    const s = decodeSession(new TextEncoder().encode(odek), 'k');
    expect(s).toMatchObject({
      provider: '',
      external_refs: [],
      untrusted_ingested: false,
      sandbox: false,
      revision: 0,
    });
    expect(s.messages[0]).toEqual({ role: 'user', content: 'hi', extra: true });
  });
});

describe('trim', () => {
  const asst = (calls: string[]): Message => ({
    role: 'assistant',
    content: '',
    tool_calls: calls.map((id) => ({
      id,
      type: 'function',
      function: { name: 'f', arguments: '{}' },
    })),
  });
  const tool = (id: string): Message => ({ role: 'tool', content: 'r', tool_call_id: id });

  it('keeps the system message and the newest messages', () => {
    const msgs = [sys, user('1'), user('2'), user('3'), user('4')];
    expect(trimMessages(msgs, 3).map((m) => m.content)).toEqual([sys.content, '3', '4']);
    expect(trimMessages(msgs, 10)).toBe(msgs);
  });

  it('never splits an assistant tool call from its results', () => {
    const msgs = [sys, user('q'), asst(['a', 'b']), tool('a'), tool('b'), user('after')];
    const out = trimMessages(msgs, 3); // the cut would land on tool('b'): drop the orphan too
    expect(out.map((m) => m.role)).toEqual(['system', 'user']);
    for (let keep = 2; keep <= msgs.length; keep++) {
      const kept = trimMessages(msgs, keep);
      expect(kept.length).toBeLessThanOrEqual(keep);
      const callIds = new Set(kept.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []));
      for (const m of kept) if (m.role === 'tool') expect(callIds.has(m.tool_call_id!)).toBe(true);
    }
  });

  it('through the store: reports before, after, dropped', async () => {
    const { sessions } = setup();
    const { session } = await sessions.create(ns, {
      task: 't',
      messages: [sys, user('1'), user('2'), user('3')],
    });
    const out = await sessions.trim(ns, session.id, 2);
    expect(out).toMatchObject({ id: session.id, before: 4, after: 2, dropped: 2 });
    expect((await sessions.get(ns, session.id)).turns).toBe(1);
  });
});

describe('manifest', () => {
  it('heals a crash between the session write and its log record', async () => {
    const { sessions, objects } = setup();
    await sessions.create(ns, { task: 'visible', id: 'a' });
    // Simulate a writer that wrote its pending marker and the session object, then died.
    const crashed = new SessionStore(objects);
    await crashed.manifest.markPending(ns, 'ghost', 'deadbeef00');
    const { session } = await new SessionStore(new MemoryStore()).create(ns, {
      task: 'ghost task',
      id: 'ghost',
    });
    const { encodeSession } = await import('../../lib/model/codec.js');
    await objects.put(keys.session(ns, 'ghost'), encodeSession(session), { ifNoneMatch: '*' });
    const listed = (await sessions.list(ns, { limit: 20 })).sessions.map((s) => s.id).sort();
    expect(listed).toEqual(['a', 'ghost']);
  });

  it('a delete that crashed before its log record does not show a deleted session', async () => {
    const { sessions, objects } = setup();
    await sessions.create(ns, { task: 't', id: 'gone' });
    await sessions.list(ns, { limit: 20 });
    await sessions.manifest.markPending(ns, 'gone', 'cafebabe00');
    await objects.delete(keys.session(ns, 'gone'));
    expect((await sessions.list(ns, { limit: 20 })).sessions).toEqual([]);
  });

  it('a log record that lands after a compaction listed the manifest is applied without extra reads', async () => {
    let clock = 1_000_000;
    const counting = new CountingStore(new MemoryStore());
    const sessions = new SessionStore(counting, { now: () => clock });
    const { session } = await sessions.create(ns, { task: 'a', id: 'a' });
    // The create's log record is stored after its answer; its standing marker goes once idle.
    await sessions.settled();
    await sessions.retireMarkers();
    clock += 1000;
    await sessions.manifest.compact(ns, true);
    // A write that was in flight during that compaction: its record is older than the base, yet not covered.
    const late = {
      id: 'a',
      task: 'updated',
      turns: 1,
      model: '',
      provider: '',
      created_at: session.created_at,
      updated_at: new Date(clock - 500).toISOString(),
      bytes: 1,
      revision: 2,
      at: clock - 500,
    };
    await sessions.manifest.recordPut(ns, late, 'inflight01');
    clock += 10;
    const fresh = new SessionStore(counting, { now: () => clock });
    counting.reset();
    const listed = await fresh.list(ns, { limit: 20 });
    expect(listed.sessions.map((s) => s.task)).toEqual(['updated']);
    expect(counting.counts.get).toBe(3); // the root, its one page and the log record; no session object
  });

  it('is rebuilt when missing or corrupt, and compaction keeps it small', async () => {
    const objects = new MemoryStore();
    const sessions = new SessionStore(objects, { manifest: { compactAfter: 5 } });
    for (let i = 0; i < 12; i++)
      await sessions.create(ns, { task: `t${i}`, id: `s${String(i).padStart(2, '0')}` });
    await sessions.settled();
    await sessions.retireMarkers();
    await sessions.manifest.compact(ns);
    const after = await listAll(objects, keys.manifest(ns));
    expect(after.filter((k) => k.includes('/m/l/'))).toEqual([]);
    expect(after.filter((k) => k.includes('/m/p/'))).toEqual([]);
    const all = async (s: SessionStore) =>
      (await s.list(ns, { limit: 100 })).sessions.map((x) => x.id).sort();
    const expected = Array.from({ length: 12 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    expect(await all(sessions)).toEqual(expected);
    // Garbage over the base: a fresh process rebuilds from the session objects.
    for (const k of after.filter((k) => k.includes('/m/b/')))
      await objects.put(k, new TextEncoder().encode('{not json'));
    expect(await all(new SessionStore(objects))).toEqual(expected);
    // Everything gone.
    await objects.delete(await listAll(objects, keys.manifest(ns)));
    expect(await all(new SessionStore(objects))).toEqual(expected);
  });
});

/** A store whose deletes of audit records and parts (of keys holding `only`) fail while `refuse.on`. */
function erasing(only = '', now = () => Date.now(), redacting = false) {
  const refuse = { on: false };
  class RefuseErasing extends PassThrough {
    override async delete(k: string | string[]) {
      const erasing = [k].flat().some((x) => /\/(audit|b)\//.test(x) && x.includes(only));
      if (refuse.on && erasing) throw new StorageUnavailableError('refused');
      return this.inner.delete(k);
    }
  }
  const objects = new MemoryStore();
  const store = new RefuseErasing(objects);
  const sessions = new SessionStore(store, {
    audit: new AuditLog(store, (s) => s),
    splitBytes: 16 * 1024,
    segmentBytes: 2048,
    now,
    ...(redacting ? { pipeline: defaultPipeline({ maxSessionBytes: 8 << 20 }) } : {}),
  });
  return { objects, store, sessions, refuse };
}

/** A session stored as base, segments and delta, with audit records. */
async function bigSession(sessions: SessionStore, id: string): Promise<void> {
  await sessions.create(ns, { task: 'big', id });
  for (let i = 0; i < 12; i++)
    await sessions.append(ns, id, { messages: [user('x'.repeat(2000) + i)] }, undefined);
}

/** How many objects are under the session's parts, keyed records and audit prefixes. */
async function leftOf(objects: MemoryStore, id: string) {
  const [parts, keyed, audit] = await Promise.all(
    [keys.parts, keys.keyRecords, keys.audit].map((p) => listAll(objects, p(ns, id))),
  );
  return { parts: parts!.length, keyed: keyed!.length, audit: audit!.length };
}
