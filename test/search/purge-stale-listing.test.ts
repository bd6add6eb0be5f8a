// Review s57c, finding 2 (fixed 2026-12-06; both tests failed on the code before the fix). LsmIndex.tryPurge
// (lib/search/lsm.ts) listed the index, then loaded the newest root. A root (and its segment) that another
// process's compactor wrote between the two was loaded, its segment rewritten without the erased documents
// and a newer root written; but the purge deleted only what its listing held, so that root and its segment
// stayed, with the erased text, until a later compaction of the namespace (a quiet one may never run it).
// A purge that loads a root its listing does not hold now lists again. Found by a random two-process run;
// here the interleaving is forced with two gates.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import type { ObjectStore } from '../../lib/storage/port.js';

const NS = 'alice';

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** `inner` with hooks on list and put. */
function hooked(
  inner: ObjectStore,
  hooks: {
    list?: (
      prefix: string,
      run: () => ReturnType<ObjectStore['list']>,
    ) => ReturnType<ObjectStore['list']>;
    put?: (
      key: string,
      run: () => ReturnType<ObjectStore['put']>,
    ) => ReturnType<ObjectStore['put']>;
  },
): ObjectStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'list' && hooks.list)
        return (prefix: string, o?: object) =>
          hooks.list!(prefix, () => target.list(prefix, o as never));
      if (prop === 'put' && hooks.put)
        return (key: string, body: Uint8Array, o?: object) =>
          hooks.put!(key, () => target.put(key, body, o as never));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

async function run(op: 'trim' | 'delete') {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-purge-stale-'));
  const removed = `zqremoved${op}wordx`;
  // B: a compactor whose segment and root PUTs wait until A's purge has listed the index.
  const bAtRoot = deferred();
  const aListed = deferred();
  const bRootDone = deferred();
  let gateB = false;
  const b = await makeApp({
    objects: hooked(new LocalStore(dir), {
      put: async (key, put) => {
        if (gateB && key.startsWith(`ns/${NS}/x/g/`)) {
          // B's segment and root are written after A's purge has listed.
          gateB = false;
          bAtRoot.resolve();
          await aListed.promise;
          return put();
        }
        if (key.startsWith(`ns/${NS}/x/r/`) && !gateB) {
          try {
            return await put();
          } finally {
            bRootDone.resolve();
          }
        }
        return put();
      },
    }),
  });
  // A: its purge's listing of the index returns only once B's root has landed.
  let gateA = false;
  const a = await makeApp({
    objects: hooked(new LocalStore(dir), {
      list: async (prefix, list) => {
        if (!gateA || prefix !== `ns/${NS}/x/`) return list();
        gateA = false;
        const page = await list();
        aListed.resolve();
        await bRootDone.promise;
        return page;
      },
    }),
  });
  const made = await a.call('POST', '/v1/sessions', {
    body: {
      task: 'a task',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: `hello ${removed}` },
        { role: 'assistant', content: `ok ${removed}` },
        { role: 'user', content: 'second question' },
        { role: 'assistant', content: 'second answer' },
      ],
    },
  });
  expect(made.status).toBe(201);
  const id = made.json.id as string;
  await settleAll(a);
  // B compacts (its view: the session as created) and waits at its segment's PUT.
  gateB = true;
  const compacting = b.search.lexical.compact(NS, true);
  await bAtRoot.promise;
  // A removes the text (or the session): its purge lists the index, B's root lands, A's purge goes on.
  gateA = true;
  if (op === 'trim') {
    const trim = await a.call('POST', `/v1/sessions/${id}/trim`, { body: { keep: 3 } });
    expect(trim.json.dropped).toBe(2);
  } else {
    expect((await a.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
  }
  await compacting;
  for (let i = 0; i < 2; i++) {
    await settleAll(a);
    await settleAll(b);
  }
  expect(gateA).toBe(false); // A's purge did list the index while B's root waited
  // The purge did see B's root: it wrote a newer one, which no longer names the segment holding the text.
  const roots = (await listAll(a.objects, `ns/${NS}/x/r/`)).sort();
  const newest = JSON.parse(new TextDecoder().decode((await a.objects.get(roots.at(-1)!))!.body));
  const holding = holders(dir, [removed]);
  for (const h of holding)
    expect(JSON.stringify(newest.segments)).not.toContain(h.split('/').pop()!.split('.')[0]!);
  // The removed text has left every stored object.
  expect({ roots, holding }).toEqual({ roots: [roots.at(-1)], holding: [] });
}

describe('a purge that loads a root written after its listing', () => {
  it('trim: the removed text leaves the other compactor segment too', () => run('trim'), 30_000);
  it(
    'delete: the deleted text leaves the other compactor segment too',
    () => run('delete'),
    30_000,
  );
});
