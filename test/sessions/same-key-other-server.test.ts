// Review s57b (fixed 2026-12-06; the tests failed on the code before the fix). A writer that lost its
// conditional PUT re-reads and asks whether its own attempt landed after all (write-loop.ts `check`): it
// matched an attempt on one write record's key, time and revision. Another server's write with the same
// Idempotency-Key, built on the same revision in the same millisecond (every writer stamps previous + 1 ms
// while the session's updated_at is ahead of its clock), matched too: the requests grouped with the
// keyed one were answered 200 and never stored, and a different body under the key was answered 200, not
// 422. An attempt is now this writer's only when the object holds all its records as it made them.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempLocalStore } from '../support/temp-store.js';
import { makeApp, settleAll, TOKENS } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';
import { openTestS3 } from '../support/s3.js';
import type { PutOptions } from '../../lib/storage/port.js';

/** A server's view of the folder: a conditional PUT of session `g` whose body `when` matches waits for `then`. */
class Gate extends PassThrough {
  rules: { when: (text: string) => boolean; then: () => Promise<void> }[] = [];
  override async put(k: string, body: Uint8Array, options?: PutOptions) {
    if (k.endsWith('/sessions/g.json') && options?.ifMatch) {
      const text = new TextDecoder().decode(body);
      const i = this.rules.findIndex((r) => r.when(text));
      if (i >= 0) await this.rules.splice(i, 1)[0]!.then();
    }
    return this.inner.put(k, body, options);
  }
}

/**
 * Two servers (A through `gateA`, B through `gateB`) on one folder, session `g` made and written from
 * both; `skew` sets both clocks (a minute behind: every write then stamps previous + 1 ms, as while the
 * session's updated_at is ahead of their clocks).
 */
async function twoServers(label: string) {
  const real = Date.now.bind(Date);
  const clock = { skew: 0 };
  vi.spyOn(Date, 'now').mockImplementation(() => real() + clock.skew);
  const shared = tempLocalStore(label);
  const gateA = new Gate(shared);
  const gateB = new Gate(shared);
  const a = await makeApp({ objects: gateA });
  const b = await makeApp({ objects: gateB });
  await a.call('POST', '/v1/sessions', { body: { id: 'g', task: 'group' } });
  const send = (app: typeof a, content: string, key?: string) =>
    app.call('POST', '/v1/sessions/g/messages', {
      body: { messages: [{ role: 'user', content }] },
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });
  await send(a, 'warm a');
  await send(b, 'warm b');
  return { a, b, gateA, gateB, send, clock };
}

// A client's keyed append is queued on server A behind a running write, in one group commit with another
// client's unkeyed append; the client gives up waiting and sends the same request (same key, same body)
// to server B, which stores it at the revision and millisecond A's group was built for (both stamp
// previous + 1 ms, as every writer does while the session's updated_at is ahead of its clock). A's group loses
// the conditional PUT, re-reads, finds the key's record with its own k, at and revision (write-loop.ts
// `check`, `mine`) and takes its whole attempt for landed: the unkeyed append is answered 200 and was
// never stored.
describe('a keyed retry through another server, grouped with an unkeyed append on the first', () => {
  afterEach(() => vi.restoreAllMocks());

  it('every 200 unkeyed append is stored', async () => {
    const { a, b, gateA: gate, send, clock } = await twoServers('group-mine');
    clock.skew = -60_000;
    let retry: ReturnType<typeof send> | undefined;
    // x's commit waits until k and u have queued behind it (one group), and that group's commit waits until
    // the client's retry of k has been stored through B.
    gate.rules.push(
      {
        when: (t) => t.includes('"x"'),
        then: () => new Promise((r) => setTimeout(r, 50)),
      },
      {
        when: (t) => t.includes('"k"') && t.includes('"u"'),
        then: async () => {
          retry = send(b, 'k', 'the-key');
          await retry;
        },
      },
    );
    const [rx, rk, ru] = await Promise.all([send(a, 'x'), send(a, 'k', 'the-key'), send(a, 'u')]);
    clock.skew = 0;
    const rr = await retry;
    await settleAll(a);
    await settleAll(b);
    const contents = (await b.call('GET', '/v1/sessions/g')).json.messages.map(
      (m: { content: string }) => m.content,
    );
    expect({
      statuses: [rx.status, rk.status, ru.status, rr?.status],
      k: contents.filter((c: string) => c === 'k').length,
      u: contents.includes('u')
        ? 'stored'
        : `answered ${ru.status} rev ${ru.json?.revision} but not stored`,
    }).toEqual({ statuses: [200, 200, 200, 200], k: 1, u: 'stored' });
  }, 60_000);
});

// The loser's answer was 200 for a body never stored, and its audit record of that write took the winner's
// audit object name (same key, same ms): the audit then credited the stored write to the wrong device.
describe('one Idempotency-Key, two bodies, two servers at once', () => {
  it.each(['local', 's3'])(
    '%s: 40 rounds: every 200 names a stored body; the audit names the device that stored it',
    async (kind) => {
      const shared = kind === 'local' ? tempLocalStore('same-key-live') : openTestS3('same-key');
      const a = await makeApp({ objects: shared });
      const b = await makeApp({ objects: shared });
      const { json } = await a.call('POST', '/v1/sessions', { body: { task: 'same key' } });
      const id = json.id as string;
      const wrong: string[] = [];
      const winners = new Map<number, string>();
      for (let i = 0; i < 40; i++) {
        const rs = await Promise.all(
          [a, b].map((app, j) =>
            app.call('POST', `/v1/sessions/${id}/messages`, {
              body: { messages: [{ role: 'user', content: `r${i} device ${j}` }] },
              headers: { 'idempotency-key': `key-${i}` },
              token: j ? TOKENS.phone : TOKENS.laptop,
            }),
          ),
        );
        const stored = (await a.call('GET', `/v1/sessions/${id}`)).json;
        const contents = stored.messages.map((m: { content: string }) => m.content);
        rs.forEach((r, j) => {
          if (contents.includes(`r${i} device ${j}`))
            winners.set(stored.revision, j ? 'phone' : 'laptop');
          if (r.status === 200 && !contents.includes(`r${i} device ${j}`))
            wrong.push(
              `round ${i}: device ${j} answered 200 rev ${r.json.revision}, body not stored`,
            );
          else if (r.status !== 200) expect(r.status).toBe(422);
        });
      }
      await settleAll(a);
      await settleAll(b);
      const audit = (await a.call('GET', `/v1/sessions/${id}/audit`)).json.records as {
        revision: number;
        device: string;
      }[];
      const mislabelled = audit
        .filter((r) => winners.has(r.revision) && winners.get(r.revision) !== r.device)
        .map(
          (r) => `rev ${r.revision} stored by ${winners.get(r.revision)}, audit says ${r.device}`,
        );
      const perRevision = new Map<number, number>();
      for (const r of audit) perRevision.set(r.revision, (perRevision.get(r.revision) ?? 0) + 1);
      const doubled = [...perRevision].filter(([, n]) => n > 1).map(([r]) => r);
      expect({ wrong, doubled, mislabelled }).toEqual({ wrong: [], doubled: [], mislabelled: [] });
    },
    60_000,
  );
});

// Review s57e (fixed 2026-12-06; failed on the code before the fix): the mirror case. A lone keyed append
// on A lost its PUT to B's group commit of the same request with another client's unkeyed append, on the
// same revision in the same millisecond. A's re-read found every record of its own attempt (the key's) and
// took B's commit for its own: it answered its own receipt (turns, bytes of a version without B's other
// message) and ran its after-commit work for a version never stored. A commit's records share its time and
// revision: one there that A did not make now says the commit is another's, and A answers it as a replay.
describe('a lone keyed append on A, the same request grouped with another on B', () => {
  afterEach(() => vi.restoreAllMocks());

  it('A answers what is stored at its revision (not its own never-stored version)', async () => {
    const { a, b, gateA, gateB, send, clock } = await twoServers('group-theirs');
    await send(a, 'warm a2'); // A's cache at the same revision as B's
    await send(b, 'warm b2');
    clock.skew = -60_000; // every writer now stamps previous + 1 ms

    let aReached!: () => void;
    const aAtPut = new Promise<void>((r) => (aReached = r));
    let releaseA!: () => void;
    const aMayPut = new Promise<void>((r) => (releaseA = r));
    let fromA: ReturnType<typeof send> | undefined;

    // A's lone k: its PUT (built on x's revision) waits until B's group has landed.
    gateA.rules.push({
      when: (t) => t.includes('"zebra-k"') && t.includes('"x"'),
      then: async () => {
        aReached();
        await aMayPut;
      },
    });
    // B: x commits after k and u queued behind it (one group on B); that group's PUT waits for A to have
    // built its own k on x's revision, then lands, then A's PUT goes (412: re-read).
    gateB.rules.push(
      { when: (t) => t.includes('"x"'), then: () => new Promise((r) => setTimeout(r, 80)) },
      {
        when: (t) => t.includes('"zebra-k"') && t.includes('"quokka-u"'),
        then: async () => {
          fromA = send(a, 'zebra-k', 'the-key');
          await aAtPut;
        },
      },
    );
    const bx = send(b, 'x');
    await new Promise((r) => setTimeout(r, 20));
    const [rx, rk, ru] = await Promise.all([
      bx,
      send(b, 'zebra-k', 'the-key'),
      send(b, 'quokka-u'),
    ]);
    releaseA();
    const ra = await fromA!;
    clock.skew = 0;
    await settleAll(a);
    await settleAll(b);
    const stored = (await b.call('GET', '/v1/sessions/g')).json;
    const contents = stored.messages.map((m: { content: string }) => m.content);
    // The precondition of the scenario: B's group stored k and u together, once each.
    expect([rx.status, rk.status, ru.status, ra.status]).toEqual([200, 200, 200, 200]);
    expect(contents.filter((c: string) => c === 'zebra-k').length).toBe(1);
    expect(rk.json.revision).toBe(ru.json.revision);
    // A's answer for k: the revision B's group stored. It must tell that revision's truth.
    expect(ra.json.revision).toBe(rk.json.revision);
    const atRevision = stored.revision === rk.json.revision ? stored : null;
    expect(atRevision).not.toBeNull();
    expect({ turns: ra.json.turns, bytes: ra.json.bytes }).toEqual({
      turns: rk.json.turns,
      bytes: rk.json.bytes,
    });
  }, 60_000);
});
