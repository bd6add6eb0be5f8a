/**
 * A private, throw-away S3 server for tests and benchmarks: a single-node Ceph cluster (one monitor, one
 * memstore OSD, one radosgw) on loopback ports chosen free at start. Everything lives in a fresh folder
 * under os.tmpdir(), removed by stop(). Ceph radosgw is used because it honours conditional writes
 * (If-None-Match: *, If-Match), which the store's concurrency rests on. See docs in
 * /work/shared/notes/s3-test-server.md for the recipe and its quirks.
 *
 * Quirks worth knowing when writing tests against it (radosgw 16.2):
 * - If-Match must carry the ETag WITHOUT quotes; a quoted one gives 412 even when current.
 * - The ETag is the MD5 of the body, so an identical rewrite keeps the ETag.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';

export interface S3Target {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: true;
  stop(): Promise<void>;
}

export interface StartRadosgwOptions {
  /** Bucket to create (default "satchel-test", or S3_BUCKET when S3_ENDPOINT is set). */
  bucket?: string;
  /** Size of the OSD's in-memory device (default 4 GiB; memory is only used as data is written). */
  memstoreBytes?: number;
  /** Progress lines (steps and timings). */
  log?: (line: string) => void;
}

export const INSTALL_COMMAND =
  'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd';

const REQUIRED_BINARIES = [
  'radosgw',
  'radosgw-admin',
  'ceph-mon',
  'ceph-osd',
  'ceph-authtool',
  'monmaptool',
  'ceph',
];
const TMP_PREFIX = 'satchel-radosgw-';
const RGW_NAME = 'client.rgw.satchel';
const DEFAULT_BUCKET = 'satchel-test';
const DEFAULT_MEMSTORE_BYTES = 4 * 1024 ** 3;
const REGION = 'us-east-1';

// ---------------------------------------------------------------------------------------------------------
// Installation

function findBinary(name: string): string | undefined {
  const dirs = [
    ...(process.env.PATH ?? '').split(path.delimiter),
    '/usr/bin',
    '/usr/sbin',
    '/bin',
    '/sbin',
  ];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

function missingBinaries(): string[] {
  return REQUIRED_BINARIES.filter((b) => findBinary(b) === undefined);
}

/**
 * Ensures radosgw binaries exist: if missing and running as root on Debian (/etc/debian_version), runs
 * `apt-get update` + `DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends radosgw
 * ceph-mon ceph-osd`; otherwise throws an Error whose message names that exact command.
 */
export async function ensureRadosgwInstalled(): Promise<void> {
  const missing = missingBinaries();
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (process.platform !== 'linux' || !isRoot || !existsSync('/etc/debian_version')) {
    throw new Error(
      `Ceph radosgw is not installed (missing: ${missing.join(', ')}). Install it with:\n  ${INSTALL_COMMAND}\n` +
        '(as root on Debian/Ubuntu), or point the tests at another S3 server with S3_ENDPOINT, S3_BUCKET, ' +
        'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Wait for the dpkg lock rather than failing if another process (e.g. a second test run) holds it.
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  try {
    await run('apt-get', [...lock, 'update'], { env, timeoutMs: 600_000 });
    await run(
      'apt-get',
      [...lock, 'install', '-y', '--no-install-recommends', 'radosgw', 'ceph-mon', 'ceph-osd'],
      {
        env,
        timeoutMs: 1_200_000,
      },
    );
  } catch (err) {
    throw new Error(
      `Installing Ceph radosgw failed (command: ${INSTALL_COMMAND}):\n${errorMessage(err)}`,
    );
  }
  const still = missingBinaries();
  if (still.length > 0) {
    throw new Error(`After "${INSTALL_COMMAND}" these are still missing: ${still.join(', ')}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Processes

interface RunResult {
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; rejects with its output (and the tail of logFile, if given) on failure. */
function run(
  cmd: string,
  args: string[],
  opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; logFile?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    const fail = (why: string) => {
      const parts = [`\`${cmd} ${args.join(' ')}\` ${why}`];
      if (stdout.trim()) parts.push(`stdout:\n${tailText(stdout)}`);
      if (stderr.trim()) parts.push(`stderr:\n${tailText(stderr)}`);
      if (opts.logFile) parts.push(logTail(opts.logFile));
      reject(new Error(parts.join('\n')));
    };
    child.on('error', (err) => {
      clearTimeout(timer);
      fail(`could not be started: ${err.message}`);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) fail(`timed out after ${opts.timeoutMs ?? 60_000} ms`);
      else if (code === 0) resolve({ stdout, stderr });
      else fail(`failed (${signal ? `signal ${signal}` : `exit code ${code}`})`);
    });
  });
}

interface Daemon {
  name: string;
  child: ChildProcess;
  /** The daemon's own log (set in ceph.conf). */
  logFile: string;
  /** Its stdout+stderr (early errors before the log is open). */
  outFile: string;
  exited: Promise<void>;
  exitDescription?: string;
}

// `setpriv --pdeathsig KILL` makes the kernel kill the daemon when the Node thread that spawned it dies,
// even if Node is SIGKILLed and cannot run its 'exit' handler. setpriv execs, so the pid is the daemon's.
const SETPRIV = process.platform === 'linux' ? findBinary('setpriv') : undefined;

function startDaemon(
  name: string,
  cmd: string,
  args: string[],
  logFile: string,
  outFile: string,
): Daemon {
  const fd = openSync(outFile, 'a');
  let child: ChildProcess;
  try {
    const [file, argv] = SETPRIV
      ? [SETPRIV, ['--pdeathsig', 'KILL', '--', cmd, ...args]]
      : [cmd, args];
    // With setpriv, also give the daemons their own process group, so a Ctrl-C in the terminal reaches only
    // Node (whose exit then kills them) instead of starting slow clean shutdowns that race the clean-up.
    child = spawn(file, argv, { stdio: ['ignore', fd, fd], detached: SETPRIV !== undefined });
  } finally {
    closeSync(fd);
  }
  const daemon: Daemon = {
    name,
    child,
    logFile,
    outFile,
    exited: new Promise<void>((resolve) => {
      child.on('error', (err) => {
        daemon.exitDescription = `could not be started: ${err.message}`;
        resolve();
      });
      child.on('exit', (code, signal) => {
        daemon.exitDescription = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        resolve();
      });
    }),
  };
  // A forgotten stop() must not keep the process alive; the 'exit' handler kills the daemons.
  child.unref();
  return daemon;
}

async function killDaemon(d: Daemon): Promise<void> {
  if (d.exitDescription !== undefined || d.child.pid === undefined) return;
  // The child is unref'd; ref it so that waiting for its exit keeps the event loop (and thus us) alive.
  d.child.ref();
  d.child.kill('SIGKILL');
  await d.exited;
}

// Clusters still running, killed synchronously if the process exits without stop().
const live = new Set<{ dir: string; daemons: Daemon[] }>();
let exitHandlerInstalled = false;

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on('exit', () => {
    for (const cluster of live) {
      for (const d of cluster.daemons) {
        if (d.exitDescription === undefined && d.child.pid !== undefined) {
          try {
            process.kill(d.child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
      try {
        rmSync(cluster.dir, { recursive: true, force: true });
      } catch {
        // best effort; a later start removes leftovers whose owner is gone
      }
    }
  });
}

/** Removes temp folders of earlier runs whose owning process is gone (e.g. it was SIGKILLed). */
function removeStaleDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(os.tmpdir()).filter((e) => e.startsWith(TMP_PREFIX));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = path.join(os.tmpdir(), entry);
    try {
      const owner = Number(readFileSync(path.join(dir, 'owner.pid'), 'utf8').trim());
      if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue;
      // Kill daemons it left (only without setpriv could they outlive it), identified by pid file + cmdline.
      const runDir = path.join(dir, 'run');
      for (const f of existsSync(runDir)
        ? readdirSync(runDir).filter((n) => n.endsWith('.pid'))
        : []) {
        const pid = Number(readFileSync(path.join(runDir, f), 'utf8').trim());
        if (!Number.isInteger(pid) || pid <= 0) continue;
        try {
          if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir))
            process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // not ours or in use
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function tailText(text: string, lines = 30): string {
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}

function logTail(file: string, lines = 30): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return `(no log at ${file})`;
  }
  if (!text.trim()) return `(${file} is empty)`;
  return `--- last lines of ${file} ---\n${tailText(text.length > 64_000 ? text.slice(-64_000) : text, lines)}`;
}

function daemonLogs(d: Daemon): string {
  return [logTail(d.outFile, 15), logTail(d.logFile)].join('\n');
}

/** Finds `count` distinct free TCP ports on 127.0.0.1 (held open together, so they differ). */
async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      ports.push((server.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function s3Client(t: {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}): S3Client {
  return new S3Client({
    endpoint: t.endpoint,
    region: t.region,
    forcePathStyle: true,
    credentials: { accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey },
    // Ceph 16 does not know the newer flexible checksums (CRC32 etc.) the SDK now sends by default.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
}

// Errors that retrying cannot fix (wrong credentials or bucket name).
const FATAL_S3_ERRORS = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidBucketName',
]);

/** Creates the bucket, retrying until it succeeds (the first CreateBucket on a fresh cluster is slow). */
async function createBucket(
  client: S3Client,
  bucket: string,
  timeoutMs: number,
  check?: () => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    check?.();
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }), {
        abortSignal: AbortSignal.timeout(30_000),
      });
      return;
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'BucketAlreadyOwnedByYou') return;
      if (name === 'BucketAlreadyExists') {
        // Ceph answers this also for buckets we own in some configurations; accept it if we can reach it.
        try {
          await client.send(new HeadBucketCommand({ Bucket: bucket }));
          return;
        } catch {
          // fall through to retry / fail
        }
      }
      lastError = err;
      if (name && FATAL_S3_ERRORS.has(name)) {
        throw new Error(`CreateBucket ${bucket} failed: ${describeS3Error(err)}`);
      }
    }
    if (Date.now() > deadline) {
      throw new Error(
        `CreateBucket ${bucket} kept failing for ${timeoutMs} ms: ${describeS3Error(lastError)}`,
      );
    }
    await sleep(250);
  }
}

function describeS3Error(err: unknown): string {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  return `${e.name ?? 'Error'} (HTTP ${e.$metadata?.httpStatusCode ?? '?'}): ${e.message ?? String(err)}`;
}

// ---------------------------------------------------------------------------------------------------------
// Start / stop

/**
 * Starts a private single-node Ceph cluster with radosgw on free loopback ports (or uses S3_ENDPOINT etc.
 * from env when S3_ENDPOINT is set: then stop() is a no-op and bucket comes from S3_BUCKET, created if
 * missing).
 */
export async function startRadosgw(opts: StartRadosgwOptions = {}): Promise<S3Target> {
  const log = opts.log ?? (() => {});
  const endpointFromEnv = process.env.S3_ENDPOINT;
  if (endpointFromEnv) {
    const target: S3Target = {
      endpoint: endpointFromEnv,
      region: process.env.S3_REGION || process.env.AWS_REGION || REGION,
      bucket: process.env.S3_BUCKET || opts.bucket || DEFAULT_BUCKET,
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
      forcePathStyle: true,
      stop: async () => {},
    };
    log(`using S3_ENDPOINT=${target.endpoint}, bucket ${target.bucket}`);
    const client = s3Client(target);
    try {
      try {
        await client.send(new HeadBucketCommand({ Bucket: target.bucket }));
      } catch {
        await createBucket(client, target.bucket, 30_000);
      }
    } finally {
      client.destroy();
    }
    return target;
  }

  await ensureRadosgwInstalled();
  removeStaleDirs();
  installExitHandler();

  const t0 = Date.now();
  const step = (what: string) =>
    log(`[radosgw +${((Date.now() - t0) / 1000).toFixed(1)}s] ${what}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), TMP_PREFIX));
  const cluster = { dir, daemons: [] as Daemon[] };
  live.add(cluster);

  const stop = async () => {
    // SIGKILL in the order radosgw, OSD, monitor: the cluster is thrown away, and a clean shutdown is slow
    // (several seconds; a memstore OSD even writes all its data to disk when it unmounts).
    for (const name of ['rgw', 'osd', 'mon']) {
      const d = cluster.daemons.find((x) => x.name === name);
      if (d) await killDaemon(d);
    }
    live.delete(cluster);
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  };

  try {
    const p = (...parts: string[]) => path.join(dir, ...parts);
    await Promise.all(['run', 'log', 'mon', 'osd', 'rgw', 'crash'].map((d) => mkdir(p(d))));
    await writeFile(p('owner.pid'), `${process.pid}\n`);

    const [monV2, monV1, rgwPort] = (await freePorts(3)) as [number, number, number];
    const fsid = randomUUID();
    const osdUuid = randomUUID();
    const memstoreBytes = opts.memstoreBytes ?? DEFAULT_MEMSTORE_BYTES;
    if (!Number.isSafeInteger(memstoreBytes) || memstoreBytes < 256 * 1024 ** 2) {
      // Smaller devices are "full" at once (radosgw then hangs creating its pools).
      throw new Error(`memstoreBytes must be an integer of at least 256 MiB, got ${memstoreBytes}`);
    }
    const monAddr = `[v2:127.0.0.1:${monV2},v1:127.0.0.1:${monV1}]`;
    const conf = p('ceph.conf');
    await writeFile(
      conf,
      `[global]
fsid = ${fsid}
mon host = ${monAddr}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = false
ms mon client mode = crc
ms client mode = crc
ms service mode = crc
ms cluster mode = crc
run dir = ${p('run')}
crash dir = ${p('crash')}
keyring = ${p('keyring')}
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
# Mon commands (pool creation by radosgw) otherwise wait ~1 s each for the next paxos proposal.
paxos propose interval = 0.01
mon data = ${p('mon', '$cluster-$id')}
mon cluster log file = ${p('log', '$cluster.$channel.log')}
osd data = ${p('osd', '$cluster-$id')}
osd objectstore = memstore
memstore device bytes = ${memstoreBytes}
rgw data = ${p('rgw', '$cluster-$id')}

[mon]
pid file = ${p('run', '$name.pid')}
log file = ${p('log', '$name.log')}
admin socket = ${p('run', '$name.asok')}

[osd]
pid file = ${p('run', '$name.pid')}
log file = ${p('log', '$name.log')}
admin socket = ${p('run', '$name.asok')}

[${RGW_NAME}]
pid file = ${p('run', '$name.pid')}
log file = ${p('log', '$name.log')}
admin socket = ${p('run', '$name.asok')}
rgw frontends = beast endpoint=127.0.0.1:${rgwPort} tcp_nodelay=1
rgw dynamic resharding = false
`,
    );
    step(`config in ${dir} (mon ${monV2}/${monV1}, rgw ${rgwPort})`);

    // Monitor
    await run('ceph-authtool', [
      '--create-keyring',
      p('mon.keyring'),
      '--gen-key',
      '-n',
      'mon.',
      '--cap',
      'mon',
      'allow *',
    ]);
    await run('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', monAddr, p('monmap')]);
    const monLog = p('log', 'mon.a.log');
    await run(
      'ceph-mon',
      ['-c', conf, '--mkfs', '-i', 'a', '--monmap', p('monmap'), '--keyring', p('mon.keyring')],
      {
        logFile: monLog,
      },
    );
    const mon = startDaemon(
      'mon',
      'ceph-mon',
      ['-c', conf, '-i', 'a', '-f'],
      monLog,
      p('log', 'mon.a.out'),
    );
    cluster.daemons.push(mon);
    step('monitor started');

    const checkDaemons = () => {
      for (const d of cluster.daemons) {
        if (d.exitDescription !== undefined) {
          throw new Error(`ceph ${d.name} ${d.exitDescription}\n${daemonLogs(d)}`);
        }
      }
    };

    // OSD: register it (this also waits for the monitor to answer), then mkfs and start it.
    const osdNew = await run(
      'ceph',
      ['-c', conf, '--connect-timeout', '30', 'osd', 'new', osdUuid],
      {
        timeoutMs: 45_000,
        logFile: monLog,
      },
    ).catch((err: unknown) => {
      checkDaemons();
      throw err;
    });
    const osdId = osdNew.stdout.trim();
    if (!/^\d+$/.test(osdId))
      throw new Error(`unexpected output of "ceph osd new": ${osdNew.stdout}`);
    const osdLog = p('log', `osd.${osdId}.log`);
    await mkdir(p('osd', `ceph-${osdId}`));
    await run('ceph-osd', ['-c', conf, '-i', osdId, '--mkfs', '--osd-uuid', osdUuid], {
      logFile: osdLog,
      timeoutMs: 60_000,
    });
    cluster.daemons.push(
      startDaemon(
        'osd',
        'ceph-osd',
        ['-c', conf, '-i', osdId, '-f'],
        osdLog,
        p('log', `osd.${osdId}.out`),
      ),
    );
    step(`osd.${osdId} started`);

    // radosgw: it creates its pools and waits for them to become active, then opens its port.
    const rgwLog = p('log', `${RGW_NAME}.log`);
    const rgw = startDaemon(
      'rgw',
      'radosgw',
      ['-c', conf, '-n', RGW_NAME, '-f'],
      rgwLog,
      p('log', `${RGW_NAME}.out`),
    );
    cluster.daemons.push(rgw);
    const rgwDeadline = Date.now() + 60_000;
    while (!(await canConnect(rgwPort))) {
      checkDaemons();
      if (Date.now() > rgwDeadline) {
        const osd = cluster.daemons.find((d) => d.name === 'osd');
        throw new Error(
          `radosgw did not open port ${rgwPort} within 60 s\n${daemonLogs(rgw)}\n${osd ? daemonLogs(osd) : ''}\n` +
            logTail(p('log', 'ceph.cluster.log'), 15),
        );
      }
      await sleep(100);
    }
    step(`radosgw listening on 127.0.0.1:${rgwPort}`);

    // S3 user and bucket
    const accessKeyId = `SATCHEL${randomBytes(7).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(30).toString('base64url');
    await run(
      'radosgw-admin',
      [
        '-c',
        conf,
        'user',
        'create',
        '--uid',
        'satchel',
        '--display-name',
        'Satchel tests',
        '--access-key',
        accessKeyId,
        '--secret',
        secretAccessKey,
      ],
      { timeoutMs: 60_000, logFile: rgwLog },
    );
    step('S3 user created');

    const target: S3Target = {
      endpoint: `http://127.0.0.1:${rgwPort}`,
      region: REGION,
      bucket: opts.bucket ?? DEFAULT_BUCKET,
      accessKeyId,
      secretAccessKey,
      forcePathStyle: true,
      stop: once(stop),
    };
    const client = s3Client(target);
    try {
      await createBucket(client, target.bucket, 60_000, checkDaemons);
    } catch (err) {
      throw new Error(`${errorMessage(err)}\n${daemonLogs(rgw)}`);
    } finally {
      client.destroy();
    }
    step(`bucket ${target.bucket} created; ready`);
    return target;
  } catch (err) {
    // Keep the logs in the error, then clean up everything that was started.
    await stop().catch(() => {});
    throw new Error(`Starting radosgw failed: ${errorMessage(err)}`, { cause: err });
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined;
  return () => (promise ??= fn());
}
