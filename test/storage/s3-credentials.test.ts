import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/server/config.js';
import { S3Store } from '../../lib/storage/s3.js';

// Lambda's execution role gives temporary credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN. Without the token every request would be refused as an unknown key.
const seen: IncomingHttpHeaders[] = [];
const server = createServer((req, res) => {
  seen.push(req.headers);
  res.writeHead(404, { 'content-type': 'application/xml' });
  res.end('<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>');
});
let endpoint: string;
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

describe('S3 credentials from the environment', () => {
  it('AWS_SESSION_TOKEN is sent with the key pair (X-Amz-Security-Token, signed)', async () => {
    const env = {
      S3_ENDPOINT: endpoint,
      S3_BUCKET: 'b',
      AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'session-token-1',
    };
    const config = await loadConfig({ SATCHEL_STORAGE: 's3', ...env }, 's3');
    if (config.storage.kind !== 's3') throw new Error('expected s3');
    expect(
      await new S3Store({ ...config.storage.s3, retry: { attempts: 1, baseMs: 1, maxMs: 1 } }).get(
        'some/key',
      ),
    ).toBeNull();
    const headers = seen.at(-1)!;
    expect(headers['x-amz-security-token']).toBe('session-token-1');
    expect(headers.authorization).toMatch(
      /Credential=ASIAEXAMPLE\/.*SignedHeaders=[^,]*x-amz-security-token/,
    );
  });

  it('without a session token none is sent', async () => {
    const config = await loadConfig(
      {
        SATCHEL_STORAGE: 's3',
        S3_ENDPOINT: endpoint,
        S3_BUCKET: 'b',
        AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'secret',
      },
      's3',
    );
    if (config.storage.kind !== 's3') throw new Error('expected s3');
    expect(await new S3Store(config.storage.s3).get('k')).toBeNull();
    expect(seen.at(-1)!['x-amz-security-token']).toBeUndefined();
  });
});
