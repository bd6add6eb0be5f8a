import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChatServer } from '../support/chat-server.js';
import { listeningUrl, root, runEntry, type EntryRun } from '../support/node-entry.js';

// functions/node.ts as `npm start` runs it, in its own process: what a person sees when the configuration
// is wrong (one line, exit code 1) and when storage is down at start (it starts, degraded).

/** A refusal: exit code 1, one line on stderr that starts with `satchel:`, no stack, nothing on stdout. */
function expectOneLine(run: EntryRun, message: RegExp) {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^satchel: /);
  expect(lines[0]).toMatch(message);
}

let busy: Server | undefined;
afterAll(() => busy?.close());

describe('functions/node.ts at start', () => {
  it('a bad value, missing S3 settings or credentials, half a model: one line and exit code 1', async () => {
    const runs = await Promise.all([
      runEntry({ SATCHEL_MAX_BODY_BYTES: 'lots' }),
      runEntry({ SATCHEL_STORAGE: 's3' }),
      runEntry({ SATCHEL_STORAGE: 's3', S3_BUCKET: 'b' }),
      runEntry({ SATCHEL_MODEL_URL: 'http://127.0.0.1:8000/v1' }),
      runEntry({ SATCHEL_STORAGE: 'r2' }),
      runEntry({ SATCHEL_TOKENS: 'bob=sha256:9f86d0' }),
    ]);
    expectOneLine(runs[0]!, /SATCHEL_MAX_BODY_BYTES must be an integer/);
    expectOneLine(runs[1]!, /S3_BUCKET/);
    expectOneLine(runs[2]!, /needs credentials/);
    expectOneLine(runs[3]!, /SATCHEL_MODEL_URL is set but SATCHEL_MODEL is not/);
    expectOneLine(runs[4]!, /only on Workers/);
    expectOneLine(runs[5]!, /sha256: needs 64 hex digits/);
  });

  it('SATCHEL_LOG=off: the start banner still says where it listens and that no token is needed (review)', async () => {
    // The banner went through the request log, which `off` silences: open mode started without a word.
    const run = await runEntry({ SATCHEL_LOG: 'off' }, async () => undefined);
    expect(run.stdout).toMatch(/^satchel listening on http:\/\/127\.0\.0\.1:\d+\n/);
    expect(run.stdout).toContain(
      'none (SATCHEL_TOKENS is not set): namespace "default", loopback only',
    );
  });

  it('a port in use: one line naming the port', async () => {
    busy = createServer();
    const port = await new Promise<number>((ok) =>
      busy!.listen(0, '127.0.0.1', () => ok((busy!.address() as { port: number }).port)),
    );
    expectOneLine(await runEntry({ PORT: String(port) }), new RegExp(`port ${port} .*is in use`));
  });

  it('storage down at start: it starts degraded, says so, health says why, requests answer 503', async () => {
    const secret = 'entry-secret-key-0123456789';
    let health: { status: number; body: Record<string, any>; ms: number } | undefined;
    let create: { status: number; retryAfter: string | null } | undefined;
    const run = await runEntry(
      {
        SATCHEL_STORAGE: 's3',
        S3_BUCKET: 'b',
        S3_ENDPOINT: 'http://127.0.0.1:9', // nothing listens on the discard port
        AWS_ACCESS_KEY_ID: 'AKIAENTRYTEST',
        AWS_SECRET_ACCESS_KEY: secret,
      },
      async (url) => {
        const started = Date.now();
        const res = await fetch(`${url}/v1/health`);
        health = { status: res.status, body: await res.json(), ms: Date.now() - started };
        const created = await fetch(`${url}/v1/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ task: 'while down' }),
        });
        create = { status: created.status, retryAfter: created.headers.get('retry-after') };
      },
    );
    expect(health).toMatchObject({
      status: 200,
      body: { status: 'degraded', storage: { ok: false, reason: 'unreachable' } },
    });
    expect(health!.ms).toBeLessThan(2000);
    expect(create).toEqual({ status: 503, retryAfter: expect.any(String) });
    const banner = JSON.parse(run.stdout.split('\n')[0]!);
    expect(banner).toMatchObject({
      level: 'info',
      msg: expect.stringMatching(/^satchel listening on http:\/\/127\.0\.0\.1:\d+$/),
      storage: 's3 bucket b, at http://127.0.0.1:9',
      storage_state: expect.stringMatching(/^not answering .*starting degraded/),
      model: expect.stringMatching(/^none/),
      hooks: 'none',
    });
    expect(run.stdout + run.stderr).not.toContain(secret);
    // Every request has its access-log line, with the route pattern.
    expect(run.stdout).toMatch(
      /"msg":"request","method":"POST","route":"\/v1\/sessions","status":503/,
    );
  });

  it('a malformed Host header, request target or header line, or headers over 16 KiB: problem+json, as every error', async () => {
    const answers: string[] = [];
    await runEntry({}, async (url) => {
      const { hostname, port } = new URL(url);
      for (const head of [
        'GET /v1/sessions HTTP/1.1\r\nHost: bad host name\r\n',
        'GET /v1/health HTTP/1.1\r\nHost: a:99999\r\n',
        // Refused by Node's parser before any app sees them (review: a bare status line, no body).
        'GET /v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n',
        `GET /v1/sessions/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n`,
      ]) {
        answers.push(
          await new Promise<string>((resolve, reject) => {
            let got = '';
            const socket = connect(Number(port), hostname, () =>
              socket.write(`${head}Connection: close\r\n\r\n`),
            );
            socket.on('data', (d: Buffer) => void (got += d.toString()));
            socket.on('end', () => resolve(got));
            socket.on('error', reject);
          }),
        );
      }
    });
    const statuses = [400, 400, 400, 431];
    for (const [i, answer] of answers.entries()) {
      expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${statuses[i]} `));
      expect(answer.toLowerCase()).toContain('content-type: application/problem+json');
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({
        status: statuses[i],
        title: expect.any(String),
        type: expect.any(String),
      });
    }
  });
});

describe('SIGTERM', () => {
  it('while a continue waits for its model: exit 0 within the 10 s bound (review)', async () => {
    // The bound was armed only once server.close() had seen every open request end: a continue waiting on
    // its model kept the process from even starting its drain, past an orchestrator's grace period.
    const chat = await startChatServer({ hang: true });
    let signalled = 0;
    try {
      const run = await runEntry(
        { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm', SATCHEL_MODEL_TIMEOUT_MS: '60000' },
        async (url) => {
          const created = await fetch(`${url}/v1/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ task: 'term' }),
          });
          const { id } = (await created.json()) as { id: string };
          void fetch(`${url}/v1/sessions/${id}/continue`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ message: 'hello' }),
          }).catch(() => undefined);
          await expect.poll(() => chat.requests.length, { timeout: 10_000 }).toBe(1);
          signalled = Date.now();
        },
      );
      expect(run.code).toBe(0);
      // 10 s and the exit; without the bound it waited for the model timeout (60 s here).
      expect(Date.now() - signalled).toBeLessThan(20_000);
    } finally {
      await chat.close();
    }
  }, 60_000);
});

describe('npm start', () => {
  it('SIGTERM to npm stops the server: the port is free again (review: a child kept it)', async () => {
    const child = spawn('npm', ['start'], {
      cwd: root,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        SATCHEL_DATA_DIR: mkdtempSync(join(tmpdir(), 'satchel-npm-start-')),
        SATCHEL_LOG: 'json',
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await listeningUrl(child, 60_000);
    expect((await fetch(`${url}/v1/health`)).status).toBe(200);
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await exited;
    const { port } = new URL(url);
    // Nothing listens any more: a connection is refused.
    await expect
      .poll(
        () =>
          new Promise<string>((resolve) => {
            const socket = connect(Number(port), '127.0.0.1');
            socket.on('connect', () => (socket.destroy(), resolve('open')));
            socket.on('error', () => resolve('refused'));
          }),
        { timeout: 15_000 },
      )
      .toBe('refused');
  }, 60_000);
});
