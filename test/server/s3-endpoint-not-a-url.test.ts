import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, s3Config } from '../../lib/server/config.js';

// Review s52c: S3_ENDPOINT was checked with /^https?:\/\/[^\s/]/ only, so a value that is no URL at all (a
// port out of range, a space in the host, an unclosed IPv6 bracket) loaded, and then every request
// answered 500. It is parsed as a URL now, as the model and embeddings URLs are.
const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLEKEY', AWS_SECRET_ACCESS_KEY: 's3-secret-value-0123' };
const S3 = { SATCHEL_STORAGE: 's3', S3_BUCKET: 'b', ...KEYS, SATCHEL_LOG: 'off' };

async function refusal(endpoint: string): Promise<string> {
  const err = await loadConfig({ ...S3, S3_ENDPOINT: endpoint }, 'local').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  // The Workers entry reads the same settings through s3Config.
  expect(() => s3Config({ ...S3, S3_ENDPOINT: endpoint })).toThrow(ConfigError);
  return (err as Error).message;
}

describe('S3_ENDPOINT that is not a URL is a configuration error', () => {
  it.each([
    'http://minio:99000',
    'https://s3.example .com',
    'http://[::1:9000',
    'http://',
    'ftp://minio:9000',
    'minio:9000',
    'http://minio:9000 ',
  ])('%s', async (endpoint) => {
    expect(await refusal(endpoint)).toMatch(/^S3_ENDPOINT must be an http\(s\) URL/);
  });

  it.each([
    'http://minio:s3-pass-0123@127.0.0.1:9000',
    'https://s3.example.com/?X-Amz-Credential=s3-pass-0123',
    'https://s3.example.com/#s3-pass-0123',
  ])('refuses credentials, a query or a fragment, without repeating them: %s', async (endpoint) => {
    const message = await refusal(endpoint);
    expect(message).toMatch(/S3_ENDPOINT must be an http\(s\) URL without user:password@/);
    expect(message).not.toContain('s3-pass-0123');
  });

  it.each([
    'http://127.0.0.1:9000',
    'https://acct.r2.cloudflarestorage.com',
    'http://[::1]:9000',
    'http://minio',
  ])('still takes %s', async (endpoint) => {
    const config = await loadConfig({ ...S3, S3_ENDPOINT: endpoint }, 'local');
    expect(config.storage).toMatchObject({ kind: 's3', s3: { endpoint } });
  });
});
