import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { spawnEntry } from '../support/node-entry.js';

// Review s59c: with an IPv6 HOST, functions/node.ts printed `satchel listening on http://::1:<port>`, which
// is not a URL (it needs brackets: http://[::1]:<port>). Runs the entry as `npm start` does, in its own
// process, on the loopback address ::1 and any free port, and reads the banner's first line.

/**
 * The first line functions/node.ts prints with `env`, then stops it; `then` runs with that line before the
 * stop, and its answer is returned beside it.
 */
function firstLine(env: Record<string, string>): Promise<string>;
function firstLine<T>(
  env: Record<string, string>,
  then: (line: string) => Promise<T>,
): Promise<[string, T]>;
function firstLine<T>(
  env: Record<string, string>,
  then?: (line: string) => Promise<T>,
): Promise<string | [string, T]> {
  return new Promise((resolve, reject) => {
    const child = spawnEntry({ SATCHEL_LOG: 'pretty', ...env });
    let stdout = '';
    let stderr = '';
    let after: Promise<T> | undefined;
    child.stdout.on('data', (d: Buffer) => {
      const first = !stdout.includes('\n');
      stdout += d.toString();
      if (!first || !stdout.includes('\n')) return;
      after = then?.(stdout.split('\n')[0]!);
      void (after ?? Promise.resolve()).finally(() => child.kill('SIGTERM'));
    });
    child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      if (!stdout.includes('\n')) return reject(new Error(stderr));
      const line = stdout.split('\n')[0]!;
      if (!after) return resolve(line);
      after.then((v) => resolve([line, v]), reject);
    });
  });
}

describe('functions/node.ts start banner with an IPv6 HOST (review s59c)', () => {
  it('prints a URL with the address in brackets, one that parses', async () => {
    const line = await firstLine({ HOST: '::1', SATCHEL_TOKENS: 'a=tok_aaaaaaaaaaaa1' });
    const m = /^satchel listening on (\S+)$/.exec(line);
    expect(m, line).not.toBeNull();
    const url = new URL(m![1]!);
    expect(url.hostname).toBe('[::1]');
    expect(Number(url.port)).toBeGreaterThan(0);
  });

  // Review s59i: the server took the unbracketed address as the authority of a request without Host
  // (HTTP/1.0 allows that): http://::1/v1/health is no URL, and the request was answered 400 "malformed".
  it('serves an HTTP/1.0 request without Host on it', async () => {
    const [, answer] = await firstLine(
      { HOST: '::1', SATCHEL_TOKENS: 'a=tok_aaaaaaaaaaaa1' },
      (line) =>
        new Promise<string>((resolve) => {
          const port = Number(new URL(line.split(' ').pop()!).port);
          const sock = connect(port, '::1');
          let out = '';
          sock.on('data', (d: Buffer) => (out += d.toString('latin1')));
          sock.on('error', () => resolve(out));
          sock.on('close', () => resolve(out));
          sock.on('connect', () => sock.write('GET /v1/health HTTP/1.0\r\n\r\n'));
        }),
    );
    expect(answer).toMatch(/^HTTP\/1\.[01] 200 /);
  });

  it('an IPv4 HOST is printed as before', async () => {
    const line = await firstLine({ HOST: '127.0.0.1', SATCHEL_TOKENS: 'a=tok_aaaaaaaaaaaa1' });
    expect(line).toMatch(/^satchel listening on http:\/\/127\.0\.0\.1:\d+$/);
  });
});
