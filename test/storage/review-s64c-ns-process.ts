/**
 * A second server process on a local data folder, run by test/storage/review-s64c-pid-namespace.test.ts in
 * its own pid namespace (`unshare -p -f --mount-proc`), as a second container on the same volume would be.
 * Run as `node --import tsx review-s64c-ns-process.ts <mode> <root> [<key>] [<options JSON>] [<holdMs>]`.
 *
 * - `sweep <root>`: opens a LocalStore (its start-up sweep) and prints `{"swept":{...}}`.
 * - `put <root> <key> <options>`: one put of the key; prints `{"ok":true}` or `{"ok":false,"name","code"}`.
 * - `hold <root> <key> <options> <holdMs>`: takes the key's lock as a put does around its check and rename,
 *   prints `held`, and after holdMs exits without releasing it (as a crashed process leaves it).
 */
import { LocalStore, type LocalStoreOptions } from '../../lib/storage/local.js';
import { utf8 } from '../../lib/storage/port.js';

const [mode, root, key, options, holdMs] = process.argv.slice(2);
if (!mode || !root) throw new Error('usage: <sweep|put|hold> <root> [key] [options] [holdMs]');
const store = new LocalStore(root, JSON.parse(options ?? '{}') as LocalStoreOptions);

if (mode === 'sweep') {
  process.stdout.write(JSON.stringify({ swept: await store.swept }) + '\n');
} else if (mode === 'put') {
  await store.swept;
  const started = Date.now();
  const out = await store.put(key!, utf8(`from pid ${process.pid}`)).then(
    () => ({ ok: true }),
    (err: { name?: string; code?: string; message?: string }) => ({
      ok: false,
      name: err.name,
      code: err.code,
      message: err.message,
    }),
  );
  process.stdout.write(JSON.stringify({ ...out, ms: Date.now() - started }) + '\n');
} else if (mode === 'hold') {
  await store.swept;
  // The per-key lock a put takes (private): held as by a put stalled between its check and its rename.
  const locked = (store as unknown as { locked(k: string, fn: () => Promise<void>): Promise<void> })
    .locked;
  await locked.call(store, key!, async () => {
    process.stdout.write('held\n');
    await new Promise((r) => setTimeout(r, Number(holdMs)));
    // Exits with the lock still taken: its owner is gone, as after a crash.
    process.exit(0);
  });
} else throw new Error(`unknown mode ${mode}`);
