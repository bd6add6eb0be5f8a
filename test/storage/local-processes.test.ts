import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  text,
  utf8,
} from '../../lib/storage/port.js';

// Two real OS processes on one data folder (issue 12, item 3): the local store's preconditions must hold
// across processes, and a writer killed with SIGKILL must leave a consistent folder.

const worker = fileURLToPath(new URL('../support/local-store-worker.ts', import.meta.url));

function start(args: string[]): {
  child: ChildProcess;
  output: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', worker, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const output = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, output };
}

/** Every file under `dir` whose name starts with `.tmp-`. */
function tempFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.startsWith('.tmp-'))
      out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

/** The pid of a process that has already exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('local store shared by several processes', () => {
  it('two processes doing compare-and-swap increments on one key lose no update', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-procs-'));
    const perProcess = 150;
    // Both start on a signal, once both are up: on a loaded machine one finished before the other began
    // (CI8: no conflict at all, so the test proved nothing).
    const go = join(mkdtempSync(join(tmpdir(), 'satchel-go-')), 'go');
    const runs = [
      start(['cas', dir, 'ns/a/counter.json', String(perProcess), go]),
      start(['cas', dir, 'ns/a/counter.json', String(perProcess), go]),
    ];
    await Promise.all(
      runs.map(
        ({ child }) =>
          new Promise<void>((ready) => {
            let said = '';
            const hear = (d: Buffer | string) => {
              said += d;
              if (said.includes('ready')) (child.stdout!.off('data', hear), ready());
            };
            child.stdout!.on('data', hear);
            child.on('close', () => ready());
          }),
      ),
    );
    writeFileSync(go, '');
    const outputs = await Promise.all(runs.map((r) => r.output));
    for (const o of outputs) expect(o.code, o.stderr).toBe(0);
    const reports = outputs.map(
      (o) =>
        JSON.parse(o.stdout.trim().split('\n').at(-1)!) as { wrote: number[]; conflicts: number },
    );
    const acknowledged = reports.flatMap((r) => r.wrote);
    expect(acknowledged).toHaveLength(2 * perProcess);
    // Every acknowledged increment wrote a value no other write wrote, and the counter holds them all.
    expect(new Set(acknowledged).size).toBe(2 * perProcess);
    const stored = await new LocalStore(dir).get('ns/a/counter.json');
    expect(JSON.parse(text(stored!.body)).n).toBe(2 * perProcess);
    // The processes really did contend (otherwise this test proves nothing).
    expect(reports[0]!.conflicts + reports[1]!.conflicts).toBeGreaterThan(0);
    expect(tempFiles(dir)).toEqual([]);
  }, 60_000);

  it('a writer killed with SIGKILL mid-writes leaves a consistent folder; reopening removes its temp files and locks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-kill-'));
    for (let round = 0; round < 5; round++) {
      const { child, output } = start(['crash', dir]);
      // Kill it after a varying number of acknowledged writes, while it is writing 256 KiB bodies.
      const target = 3 + round * 5;
      let acked = 0;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('writer made no progress in 30 s')),
          30_000,
        );
        child.stdout!.on('data', (d: string) => {
          const lines = String(d).match(/^ack (\d+)$/gm) ?? [];
          for (const line of lines) acked = Math.max(acked, Number(line.slice(4)));
          if (acked >= target) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      child.kill('SIGKILL');
      const out = await output;
      expect(out.signal).toBe('SIGKILL');
      const lastAck = Math.max(
        acked,
        ...[...out.stdout.matchAll(/^ack (\d+)$/gm)].map((m) => Number(m[1])),
      );

      const reopened = new LocalStore(dir, { staleLockMs: 0 });
      await reopened.swept;
      expect(tempFiles(dir)).toEqual([]);
      // Nothing acknowledged is lost; at most the one write in flight landed without its acknowledgement.
      const counter = await reopened.get('counter');
      const n = (JSON.parse(text(counter!.body)) as { n: number }).n;
      expect(n).toBeGreaterThanOrEqual(lastAck);
      expect(n).toBeLessThanOrEqual(lastAck + 1);
      for (const { key } of (await reopened.list('other/')).objects) {
        const got = await reopened.get(key);
        expect(() => JSON.parse(text(got!.body))).not.toThrow();
      }
      // Its locks are gone or breakable: a compare-and-swap on every key it touched goes through at once.
      await reopened.put('counter', utf8(JSON.stringify({ n: n + 1 })), { ifMatch: counter!.etag });
      const after = await reopened.get('counter');
      expect(JSON.parse(text(after!.body)).n).toBe(n + 1);
      const locks = readdirSync(join(dir, '.locks')).filter((f) => !f.startsWith('owner-'));
      expect(locks).toEqual([]);
    }
  }, 120_000);

  it('a lock left by a dead process is broken; a lock held by a live process is waited for, then StorageUnavailableError', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-locks-'));
    const locks = join(dir, '.locks');
    mkdirSync(locks, { recursive: true });
    const lockOf = (key: string) =>
      join(locks, createHash('sha256').update(key).digest('hex').slice(0, 40));
    const store = new LocalStore(dir, { staleLockMs: 50, lockTimeoutMs: 400 });
    await store.swept;
    await store.put('k', utf8('v1'));

    // A dead owner: its pid is gone. The next write breaks the lock and goes through.
    const dead = await deadPid();
    writeFileSync(join(locks, `owner-${dead}-abc`), `${dead} - abc\n`);
    linkSync(join(locks, `owner-${dead}-abc`), lockOf('k'));
    await new Promise((r) => setTimeout(r, 80));
    const current = await store.get('k');
    await store.put('k', utf8('v2'), { ifMatch: current!.etag });
    expect(text((await store.get('k'))!.body)).toBe('v2');

    // A live owner (this test's own process, with another owner file): never broken, the write waits and fails.
    writeFileSync(join(locks, `owner-${process.pid}-def`), `${process.pid} - def\n`);
    linkSync(join(locks, `owner-${process.pid}-def`), lockOf('k'));
    await new Promise((r) => setTimeout(r, 80));
    const started = Date.now();
    const err = await store.put('k', utf8('v3')).catch((e: unknown) => e);
    expect(StorageUnavailableError.is(err)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(text((await store.get('k'))!.body)).toBe('v2');
    expect(tempFiles(dir)).toEqual([]);
    expect(statSync(lockOf('k')).nlink).toBeGreaterThan(1);
  });

  it("sweeps temp files of dead writers at start, and keeps a live writer's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-sweep-'));
    mkdirSync(join(dir, 'ns', 'a'), { recursive: true });
    const dead = await deadPid();
    writeFileSync(join(dir, 'ns', 'a', `.tmp-${dead}-0011223344556677`), 'half a write');
    writeFileSync(join(dir, `.tmp-${process.pid}-8899aabbccddeeff`), 'in flight');
    const store = new LocalStore(dir);
    expect((await store.swept).tempFiles).toBe(1);
    expect(tempFiles(dir).map((f) => f.slice(dir.length))).toEqual([
      `/.tmp-${process.pid}-8899aabbccddeeff`,
    ]);
    // Temp files are never listed as keys.
    expect((await store.list('')).objects).toEqual([]);
  });

  it('etags agree between processes (instances) and never repeat for a key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-etag-'));
    const a = new LocalStore(dir);
    const b = new LocalStore(dir);
    const seen = new Set<string>();
    let { etag } = await a.put('k', utf8('same'));
    seen.add(etag);
    for (let i = 0; i < 200; i++) {
      // Same size, written back to back: inode numbers get reused and file times are coarse.
      const writer = i % 2 ? a : b;
      ({ etag } = await writer.put('k', utf8('same'), { ifMatch: etag }));
      expect(seen.has(etag)).toBe(false);
      seen.add(etag);
      expect((await (i % 2 ? b : a).get('k'))!.etag).toBe(etag);
    }
    const stale = await a
      .put('k', utf8('same'), { ifMatch: [...seen][0]! })
      .catch((e: unknown) => e);
    expect(PreconditionFailedError.is(stale)).toBe(true);
  });
});
