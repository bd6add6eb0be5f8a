import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/http/app.js';
import { createNodeServer } from '../../lib/http/node-server.js';
import { loadConfig, type Env } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { captureLogs } from '../support/logs.js';
import { CHROMIUM } from '../ui/browser.js';

// Open mode (no SATCHEL_TOKENS) listens on 127.0.0.1 only. That alone does not keep other sites out: a
// page of a site whose name a DNS server points at 127.0.0.1 (DNS rebinding) is same-origin with the
// token-less API. So open mode answers only requests addressed to a loopback name.

/** The Node server on a local folder, as `npm start` runs it. */
async function serve(env: Env = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-open-mode-'));
  const config = await loadConfig(env, 'local');
  const { app, background } = createApp({
    config,
    objects: new LocalStore(dir),
    allowOpen: true,
    log: captureLogs(),
  });
  const server = createNodeServer(app.fetch, '127.0.0.1');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await background.drain();
    rmSync(dir, { recursive: true, force: true });
  };
  return { url: `http://127.0.0.1:${port}`, port, close };
}

/** A GET with the Host header given, to the server's loopback address. */
function get(
  port: number,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { ...headers, host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('open mode answers only requests addressed to a loopback name', () => {
  let srv: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    srv = await serve();
    const created = await fetch(`${srv.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'private local task', messages: [] }),
    });
    expect(created.status).toBe(201);
  });
  afterAll(() => srv.close());

  it('127.0.0.1, localhost and [::1], with or without a port', async () => {
    for (const host of [
      '127.0.0.1',
      `127.0.0.1:${srv.port}`,
      `localhost:${srv.port}`,
      'LOCALHOST',
      `[::1]:${srv.port}`,
    ]) {
      const res = await get(srv.port, '/v1/sessions', host);
      expect(res.status, host).toBe(200);
      expect(res.body).toContain('private local task');
    }
  });

  it('another name gets 403 problem+json, on the API and the pages, and learns nothing', async () => {
    for (const path of ['/v1/sessions', '/ui', '/v1/health']) {
      const res = await get(srv.port, path, `attacker.example:${srv.port}`);
      expect(res.status, path).toBe(403);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body).detail).toMatch(/SATCHEL_TOKENS/);
      expect(res.body).not.toContain('private local task');
    }
  });

  it('a page of another site resolved to 127.0.0.1 cannot read the sessions (DNS rebinding)', async () => {
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      // What a rebinding DNS server achieves: attacker.example resolves to 127.0.0.1.
      args: [
        '--no-sandbox',
        '--disable-dev-shm-usage',
        '--disable-gpu',
        '--host-resolver-rules=MAP attacker.example 127.0.0.1',
      ],
    });
    try {
      const page = await browser.newPage();
      const res = await page.goto(`http://attacker.example:${srv.port}/ui`);
      expect(res?.status()).toBe(403);
      // A script of that origin (the attacker's page, same origin with the server) asks the API.
      const answer = await page.evaluate(async () => {
        const r = await fetch('/v1/sessions');
        return { status: r.status, body: await r.text() };
      });
      expect(answer.status).toBe(403);
      expect(answer.body).not.toContain('private local task');
    } finally {
      await browser.close();
    }
  });
});

it('with tokens, any name is served (a deployed server behind its own domain)', async () => {
  const srv = await serve({ SATCHEL_TOKENS: 'alice/laptop=tok_alice_0123456789' });
  try {
    const auth = { authorization: 'Bearer tok_alice_0123456789' };
    const res = await get(srv.port, '/v1/sessions', 'satchel.example.com', auth);
    expect(res.status).toBe(200);
  } finally {
    await srv.close();
  }
});
