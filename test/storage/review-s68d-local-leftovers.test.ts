// Review s68d: (1) a writer killed mid-write leaves a temp file holding the write's bytes (a session's
// text), which only a LocalStore's start swept: a peer killed beside a running server, or a container
// restarted within ownerTimeoutMs of its crash (its dead owner still taken for alive at that start), left
// it for as long as the server ran, and a DELETE of the session left that text on disk. Now a heartbeat that
// finds another process's owner file gone sweeps. (2) A read of a key whose file never yields its bytes (a
// FIFO) waited for ever, and four of them held every thread of Node's file pool.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { text, utf8 } from '../../lib/storage/port.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Temp files anywhere under `root`. */
const temps = (root: string) =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.startsWith('.tmp-'))
    .map((e) => e.name);

/** Waits (bounded) until `done`; false when it never came. */
async function eventually(done: () => boolean, ms = 10_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (done()) return true;
  return done();
}

it('a running store sweeps the temp files of a writer that died beside it (this namespace, and another)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'satchel-s68d-sweep-'));
  const locks = join(root, '.locks');
  const folder = join(root, 'ns', 'alice', 'sessions');
  mkdirSync(folder, { recursive: true });
  mkdirSync(locks, { recursive: true });
  // The server: its first write makes its owner file and starts its heartbeat.
  const store = new LocalStore(root, { heartbeatMs: 50, ownerTimeoutMs: 2000 });
  await store.swept;
  await store.put('ns/alice/sessions/s1.json', utf8('{"id":"s1"}'));
  // A peer in this pid namespace, killed in the middle of a write: its pid is gone.
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  const here = 'aaaaaaaaaaaa';
  writeFileSync(join(locks, `owner-${dead}-${here}`), `${dead} - ${here}\n`);
  writeFileSync(join(folder, `.tmp-${dead}-${here}-0011223344556677`), 'TEXT OF THE LOST WRITE');
  // Its temp file goes, then its owner file (the sweep's second step).
  const gone = () => temps(root).length === 0 && !readdirSync(locks).some((n) => n.includes(here));
  expect(await eventually(gone)).toBe(true);

  // A container beside this one (another namespace's tag), killed: alive by its heartbeat at first, as at a
  // start within ownerTimeoutMs of its crash; swept once that heartbeat is older than ownerTimeoutMs.
  const there = 'bbbbbbbbbbbb' + 'f'.repeat(16);
  const owner = join(locks, `owner-7-${there}`);
  writeFileSync(owner, `7 - ${there}\n`);
  writeFileSync(join(folder, `.tmp-7-${there}-8899aabbccddeeff`), 'TEXT OF ANOTHER LOST WRITE');
  await sleep(300);
  expect(temps(root)).toEqual([`.tmp-7-${there}-8899aabbccddeeff`]);
  const old = Date.now() / 1000 - 60;
  utimesSync(owner, old, old);
  expect(await eventually(() => temps(root).length === 0)).toBe(true);
  expect(text((await store.get('ns/alice/sessions/s1.json'))!.body)).toBe('{"id":"s1"}');
});

it.skipIf(process.platform === 'win32')(
  'a key whose file is a FIFO reads as no object, and never holds up the reads of other keys',
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'satchel-s68d-fifo-'));
    const store = new LocalStore(root);
    await store.put('ns/k/ok.json', utf8('ok'));
    for (let i = 0; i < 6; i++) execFileSync('mkfifo', [join(root, 'ns', 'k', `f${i}.json`)]);
    // Six at once: more than Node's four file-pool threads.
    const fifos = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => store.get(`ns/k/f${i}.json`)));
    expect(fifos).toEqual([null, null, null, null, null, null]);
    expect(text((await store.get('ns/k/ok.json'))!.body)).toBe('ok');
  },
);
