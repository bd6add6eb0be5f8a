// Review s64b. `S3_BUCKET=my-bucket/prod` (a bucket and a folder written as one value, an easy mistake beside
// S3_PREFIX) was taken at start: on Workers every request then answered a bare 500 (the SDK refused each
// command with InvalidBucketName) and health said storage was "unreachable"; the Node entry started
// degraded and answered 503. It is refused as a configuration error naming the variable, as other wrong
// S3 settings are.
import { describe, expect, it } from 'vitest';
import worker from '../../functions/worker.js';
import { loadConfig, type Env } from '../../lib/server/config.js';
import { captureConsole } from '../support/logs.js';
import { runEntry } from '../support/node-entry.js';

const s3Env = (bucket: string): Env => ({
  SATCHEL_STORAGE: 's3',
  S3_BUCKET: bucket,
  AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'secret',
});
const REFUSAL = 'S3_BUCKET must be a bucket name alone; put a folder in S3_PREFIX';

describe('S3_BUCKET holding a folder or blanks', () => {
  it('is refused at start, naming the variable; bucket names are taken', async () => {
    const refusal = (bucket: string) =>
      loadConfig(s3Env(bucket), 'local').then(
        () => 'accepted',
        (err: Error) => `${err.name}: ${err.message}`,
      );
    for (const bucket of ['satchel-sessions/prod', 'b/', '/b', 'my bucket', 'b\n'])
      expect(await refusal(bucket)).toBe(`ConfigError: ${REFUSAL}`);
    // Access points' ARNs (review s64h): the SDK takes them as the bucket.
    const arns = [
      'arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap',
      'arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01ac5d28a6a232904/accesspoint/ap',
      'arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/my-olap',
    ];
    for (const bucket of ['satchel-sessions', 'a.b.c', 'Legacy_Bucket', 'b', ...arns])
      expect(await refusal(bucket)).toBe('accepted');
  });

  it('the Node entry stops with that one line', async () => {
    const run = await runEntry(s3Env('satchel-sessions/prod') as Record<string, string>);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`satchel: ${REFUSAL}\n`);
  });

  it('a Worker answers the configuration problem, not a bare 500', async () => {
    captureConsole();
    // The R2 + S3 entry (dist/worker/worker.js's source).
    const res = await worker.fetch(
      new Request('https://w.example/v1/sessions', {
        headers: { authorization: 'Bearer tok_bucket_slash_0123' },
      }),
      {
        ...s3Env('satchel-sessions/prod'),
        SATCHEL_TOKENS: 'edge/w=tok_bucket_slash_0123',
        SATCHEL_LOG: 'off',
      } as never,
      { waitUntil() {}, passThroughOnException() {}, props: {} } as never,
    );
    const body = (await res.json()) as { title: string; detail: string };
    expect(res.status).toBe(500);
    expect(body.title).toBe('Configuration Error');
    expect(body.detail).toContain(REFUSAL);
  });

  it('an ARN the SDK cannot use is refused, naming the form it takes (reviews s64i, s64j)', async () => {
    for (const bucket of [
      'arn:aws:s3:::my-bucket',
      'arn:aws:s3:::my-bucket/prod',
      'arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap/prod',
      'arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap',
      'arn:aws:s3:x y',
    ])
      await expect(loadConfig(s3Env(bucket), 'local'), bucket).rejects.toThrow(
        /^S3_BUCKET: an ARN must be an access point's/,
      );
  });
});
