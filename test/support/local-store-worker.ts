/**
 * A separate OS process on a local data folder, for the multi-process tests of the local store
 * (test/storage/local-processes.test.ts). Run as `node --import tsx local-store-worker.ts <mode> <root> ...`.
 *
 * - `cas <root> <key> <count> [<start file>]`: `count` compare-and-swap increments of a counter object (once the
 *   start file exists, when one is named: `ready` is printed first), retrying on
 *   precondition failures; prints `{"wrote":[values...],"conflicts":n}` at the end.
 * - `crash <root>`: increments a counter (bodies padded to 256 KiB, so a write is often in flight) and
 *   rewrites a few other keys, forever; prints `ack <n>` after each acknowledged counter write. The test
 *   kills it with SIGKILL.
 */
import { existsSync } from 'node:fs';
import { LocalStore } from '../../lib/storage/local.js';
import { PreconditionFailedError, text, utf8 } from '../../lib/storage/port.js';

const [mode, root, ...rest] = process.argv.slice(2);
if (!mode || !root) throw new Error('usage: <cas|crash> <root> ...');
const store = new LocalStore(root);

async function increment(key: string, pad: number): Promise<{ value: number; conflicts: number }> {
  let conflicts = 0;
  for (;;) {
    const current = await store.get(key);
    const value = current ? (JSON.parse(text(current.body)) as { n: number }).n + 1 : 1;
    const body = utf8(JSON.stringify({ n: value, pid: process.pid, pad: 'x'.repeat(pad) }));
    try {
      await store.put(key, body, current ? { ifMatch: current.etag } : { ifNoneMatch: '*' });
      return { value, conflicts };
    } catch (err) {
      if (!PreconditionFailedError.is(err)) throw err;
      conflicts++;
    }
  }
}

if (mode === 'cas') {
  const key = rest[0]!;
  const count = Number(rest[1]);
  // With a start file: says `ready`, then waits for it, so that processes started apart begin together.
  const go = rest[2];
  if (go) {
    process.stdout.write('ready\n');
    while (!existsSync(go)) await new Promise((r) => setTimeout(r, 5));
  }
  const wrote: number[] = [];
  let conflicts = 0;
  for (let i = 0; i < count; i++) {
    const out = await increment(key, 0);
    wrote.push(out.value);
    conflicts += out.conflicts;
  }
  process.stdout.write(JSON.stringify({ wrote, conflicts }) + '\n');
} else if (mode === 'crash') {
  for (let i = 0; ; i++) {
    const { value } = await increment('counter', 256 * 1024);
    process.stdout.write(`ack ${value}\n`);
    await store.put(
      `other/k${i % 5}.json`,
      utf8(JSON.stringify({ i, pad: 'y'.repeat(64 * 1024) })),
    );
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
