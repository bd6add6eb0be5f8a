// `npm run bench:s3-wire`: what one object request costs through S3Store on Node, over the AWS SDK and over
// `nodeWire` (lib/storage/s3-node.ts), on a radosgw this script starts. Per operation: wall time (p50) and
// this process's CPU time (user + system, mean), GET and PUT of a 150 KB object (a session of about 140
// messages), a PUT refused with 412 (a lost compare-and-swap) and a LIST of 20 keys, the two paths
// interleaved in blocks.
// Writes the `s3Wire` section of bench/results.json.
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PreconditionFailedError } from '../lib/storage/port.js';
import { S3Store, type S3StoreOptions } from '../lib/storage/s3.js';
import { nodeWire } from '../lib/storage/s3-node.js';
import { startRadosgw } from '../test/support/radosgw.js';
import { writeSections } from './results.js';

const BLOCKS = Number(process.env.S3_WIRE_BLOCKS ?? 6);
const PER_BLOCK = 50;
const BODY = new Uint8Array(150_000).fill(0x61);
const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');

type Op = 'get' | 'put' | 'put412' | 'list';
type Path = 'sdk' | 'wire';
const samples: Record<Path, Record<Op, { ms: number[]; cpuMs: number }>> = {
  sdk: {
    get: { ms: [], cpuMs: 0 },
    put: { ms: [], cpuMs: 0 },
    put412: { ms: [], cpuMs: 0 },
    list: { ms: [], cpuMs: 0 },
  },
  wire: {
    get: { ms: [], cpuMs: 0 },
    put: { ms: [], cpuMs: 0 },
    put412: { ms: [], cpuMs: 0 },
    list: { ms: [], cpuMs: 0 },
  },
};

const loadAtStart = loadavg()[0]!;
const started = new Date();
const rgw = await startRadosgw({ memstoreBytes: 1024 ** 3, bucket: 's3-wire', log: () => {} });
try {
  const stores: Record<Path, S3Store> = { sdk: open({}), wire: open({ wire: nodeWire }) };
  for (const path of ['sdk', 'wire'] as const) {
    await stores[path].put('obj', BODY);
    for (let i = 0; i < 20; i++)
      await stores[path].put(`l/session-${i}.json`, BODY.subarray(0, 100));
  }
  for (let b = 0; b < BLOCKS; b++) {
    for (const path of (b % 2 ? ['wire', 'sdk'] : ['sdk', 'wire']) as Path[]) {
      const store = stores[path];
      await block(path, 'put', () => store.put('obj', BODY));
      await block(path, 'get', () => store.get('obj'));
      await block(path, 'list', async () => {
        if ((await store.list('l/')).objects.length !== 20) throw new Error('the LIST lost keys');
      });
      await block(path, 'put412', () =>
        store.put('obj', BODY, { ifMatch: 'not-the-etag' }).then(
          () => {
            throw new Error('the PUT with a wrong If-Match landed');
          },
          (err: unknown) => {
            if (!PreconditionFailedError.is(err)) throw err;
          },
        ),
      );
    }
  }
} finally {
  await rgw.stop();
}

const summary = Object.fromEntries(
  (['sdk', 'wire'] as const).map((path) => [
    path,
    Object.fromEntries(
      (['get', 'put', 'put412', 'list'] as const).map((op) => {
        const s = samples[path][op];
        return [
          op,
          { p50Ms: round(p50(s.ms)), cpuMs: round(s.cpuMs / s.ms.length), n: s.ms.length },
        ];
      }),
    ),
  ]),
);
const section = {
  date: started.toISOString(),
  command: 'npm run bench:s3-wire',
  what:
    'S3Store on radosgw from one Node process, keep-alive: GET, PUT (150,000-byte body), a PUT refused ' +
    'with 412 and a LIST of 20 keys, through the AWS SDK and through nodeWire; p50 wall time and mean CPU ' +
    `of this process per operation, ${BLOCKS} interleaved blocks of ${PER_BLOCK} per path and operation`,
  machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length },
  loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0] },
  node: process.version,
  ...summary,
};
console.log(JSON.stringify(section, null, 2));
writeSections(join(root, 'bench', 'results.json'), { s3Wire: section });

function open(extra: Partial<S3StoreOptions>): S3Store {
  return new S3Store({
    endpoint: rgw.endpoint,
    region: rgw.region,
    bucket: rgw.bucket,
    forcePathStyle: true,
    accessKeyId: rgw.accessKeyId,
    secretAccessKey: rgw.secretAccessKey,
    prefix: `${Object.keys(extra).length ? 'wire' : 'sdk'}/`,
    ...extra,
  });
}

async function block(path: Path, op: Op, fn: () => Promise<unknown>): Promise<void> {
  await fn(); // not counted: the connection and the code path warm
  const s = samples[path][op];
  const cpu = process.cpuUsage();
  for (let i = 0; i < PER_BLOCK; i++) {
    const t = performance.now();
    await fn();
    s.ms.push(performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  s.cpuMs += (used.user + used.system) / 1000;
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
