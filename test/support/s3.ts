import { inject } from 'vitest';
import { S3Store, type S3StoreOptions, type S3Timeouts } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';

/**
 * An S3 adapter on the run's radosgw, under a fresh prefix so test files never see each other's keys. Its
 * object requests go over `nodeWire`, as in the Node and Lambda entries; `{ sdk: true }` sends everything
 * through the SDK, as on Workers. `endpoint`: another way to it (a fault proxy), with `timeouts` of its own.
 */
export function openTestS3(
  label = 'test',
  options: { sdk?: boolean; endpoint?: string; timeouts?: S3Timeouts } = {},
): S3Store {
  const s3 = inject('s3');
  return new S3Store({
    endpoint: options.endpoint ?? s3.endpoint,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    region: s3.region,
    bucket: s3.bucket,
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    prefix: `${label}-${Math.random().toString(36).slice(2, 10)}/`,
    ...(options.sdk ? {} : { wire: nodeWire }),
  });
}

/** The S3_* and AWS_* settings of the run's radosgw under a fresh `prefix`, for an entry (Lambda) read from env. */
export function s3Env(prefix: string): Record<string, string> {
  const s3 = inject('s3');
  return {
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_BUCKET: s3.bucket,
    S3_PREFIX: `${prefix}-${Date.now()}`,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
}

/** An S3 adapter on a port where nothing listens (connections refused), with quick retries. */
export function unreachableS3(): S3Store {
  return fakeS3('http://127.0.0.1:9', { bucket: 'nowhere' });
}

/**
 * An S3 adapter on a server of the test's own at `endpoint` (test/support/misbehaving-server.ts): path
 * style, made-up keys, two quick attempts; `overWire` sends object requests over `nodeWire` as Node does.
 */
export function fakeS3(
  endpoint: string,
  options: Partial<S3StoreOptions> & { overWire?: boolean } = {},
): S3Store {
  const { overWire, ...rest } = options;
  return new S3Store({
    endpoint,
    region: 'us-east-1',
    bucket: 'b',
    forcePathStyle: true,
    accessKeyId: 'a',
    secretAccessKey: 'b',
    retry: { attempts: 2, baseMs: 1, maxMs: 2 },
    ...rest,
    ...(overWire ? { wire: nodeWire } : {}),
  });
}
