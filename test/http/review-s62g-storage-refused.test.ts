import { describe, expect, inject, it } from 'vitest';
import { S3Client } from '@aws-sdk/client-s3';
import { S3Store } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp } from './helpers.js';

// Review s62g, finding 1: storage that refuses Satchel's credentials (a wrong secret key: radosgw's 403
// SignatureDoesNotMatch; no credentials at all: the SDK's CredentialsProviderError) answered every request
// a bare 500 "the server failed to handle this request", while the start banner promised 503. It is now a
// 503 whose detail names the cause, and never a 404 or "not stored" when it may have been.

/** A store on the run's radosgw under a fresh prefix, over the Node wire or (`sdk`) the SDK alone. */
function storeOn(prefix: string, over: { secretAccessKey?: string; sdk?: boolean } = {}) {
  const s3 = inject('s3');
  return new S3Store({
    ...s3,
    prefix,
    ...(over.secretAccessKey ? { secretAccessKey: over.secretAccessKey } : {}),
    ...(over.sdk ? {} : { wire: nodeWire }),
  });
}

const prefix = () => `s62g-refused-${Math.random().toString(36).slice(2, 10)}/`;

describe('storage refusing the credentials answers 503 naming the cause (review s62g)', () => {
  for (const sdk of [false, true]) {
    it(`a wrong secret key: reads and writes answer 503, not 500 or 404 (${sdk ? 'SDK' : 'Node wire'})`, async () => {
      const at = prefix();
      const good = await makeApp({ objects: storeOn(at, { sdk }) });
      const made = await good.call('POST', '/v1/sessions', { body: { task: 'kept' } });
      expect(made.status).toBe(201);
      const app = await makeApp({
        objects: storeOn(at, { sdk, secretAccessKey: 'not-the-secret' }),
      });
      const answers = [
        await app.call('GET', '/v1/sessions'),
        await app.call('GET', `/v1/sessions/${made.json.id}`),
        await app.call('POST', '/v1/sessions', { body: { task: 'refused' } }),
        await app.call('POST', `/v1/sessions/${made.json.id}/messages`, {
          body: { messages: [{ role: 'user', content: 'refused' }] },
        }),
      ];
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('2');
        expect(res.json.detail).toBe(
          "storage refused Satchel's credentials (HTTP 403 SignatureDoesNotMatch); check " +
            'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
        );
        expect(res.text).not.toContain('not-the-secret');
      }
      // A write refused is not stored: the one session there is the one made with the right key.
      const listed = await good.call('GET', '/v1/sessions');
      expect(listed.json.sessions.map((s: { task: string }) => s.task)).toEqual(['kept']);
      const kept = await good.call('GET', `/v1/sessions/${made.json.id}`);
      expect(kept.json.messages).toEqual([]);
    });
  }

  it('no credentials found (CredentialsProviderError): 503 naming it, on the wire and through the SDK', async () => {
    const s3 = inject('s3');
    // The SDK's own chain with a profile that does not exist, as AWS_PROFILE=nosuch gives.
    const saved = { ...process.env };
    const empty = `/tmp/s62g-no-aws-${process.pid}`;
    Object.assign(process.env, {
      AWS_PROFILE: 'nosuch',
      AWS_CONFIG_FILE: `${empty}/config`,
      AWS_SHARED_CREDENTIALS_FILE: `${empty}/credentials`,
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    try {
      for (const wire of [nodeWire, undefined]) {
        const client = new S3Client({
          endpoint: s3.endpoint,
          region: s3.region,
          forcePathStyle: true,
          maxAttempts: 1,
        });
        const objects = new S3Store({
          bucket: s3.bucket,
          prefix: prefix(),
          client,
          ...(wire ? { wire } : {}),
        });
        const app = await makeApp({ objects });
        const res = await app.call('GET', '/v1/sessions');
        expect(res.status).toBe(503);
        expect(res.json.detail).toMatch(
          /^storage credentials could not be loaded \(CredentialsProviderError\); check AWS_PROFILE/,
        );
      }
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  it('the store itself throws the refusal as unavailable, its S3 error kept as the cause', async () => {
    const at = prefix();
    const store = storeOn(at, { secretAccessKey: 'not-the-secret' });
    const err = await store.get('k').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'SatchelError', kind: 'unavailable' });
    expect((err as Error).cause).toMatchObject({
      name: 'SignatureDoesNotMatch',
      $metadata: { httpStatusCode: 403 },
    });
    expect(await listAll(storeOn(at), '')).toEqual([]);
  });
});
