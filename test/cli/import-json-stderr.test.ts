/**
 * Fixed on 2026-12-04 (found by review): with --json, an import (or export) stopped by a server that went away writes a plain-text line
 * "import stopped after N of M files (…)" to stderr before the JSON error (importCommand.run /
 * exportCommand.run in lib/cli/commands/transfer.ts write it unconditionally), so stderr is not JSON.
 * docs/cli.md: "Every command takes --help and --json (the server's answer on stdout; an error as JSON on
 * stderr)". (Progress count lines, written for more than ten files when stderr is not a terminal, mix in
 * the same way.)
 *
 * Consequence: a script that runs `satchel import dir --json 2>err.json` and parses err.json on a
 * non-zero exit gets a parse error instead of the error, and loses how far the import got.
 *
 * Fix: lib/cli/commands/transfer.ts: in --json mode, do not write the "stopped after" line (and the
 * Progress lines); put the counts in the JSON error instead (e.g. rethrow with them and let main.ts
 * reportFailure add {"done","total",…} to its {"error":"connection",…} object).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { startFlakyProxy } from '../client/flaky-proxy.js';
import { oldFormat } from '../support/odek-files.js';
import { satchel } from './run.js';

let server: RunningServer;
let dir: string;
beforeAll(async () => {
  server = await startSatchelServer();
  dir = mkdtempSync(join(tmpdir(), 'review-cli-json-'));
  for (const id of ['json-a', 'json-b', 'json-c'])
    writeFileSync(join(dir, `${id}.json`), JSON.stringify(oldFormat(id)));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('import --json stopped by a lost server', () => {
  it('writes its error to stderr as JSON, and only JSON', async () => {
    // The first request goes through, then the server is gone (connections dropped).
    const p = await startFlakyProxy(server.url, (n) => (n === 0 ? 'forward' : 'drop'));
    let r;
    try {
      r = await satchel(['import', dir, '--json', '--concurrency', '1'], { SATCHEL_URL: p.url });
    } finally {
      await p.close();
    }
    expect(r.code).toBe(3);
    expect(() => JSON.parse(r.stderr)).not.toThrow();
  });
});
