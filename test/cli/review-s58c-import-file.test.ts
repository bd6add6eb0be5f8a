// Review s58c: what `satchel import` says of a file. A file whose bytes are not UTF-8 (a Latin-1 editor's
// "café") was read with readFile('utf8'), which turns each bad byte into U+FFFD without a word: the session
// was imported `created` holding other text than the file (the server refuses such bytes in a body). Now
// the file fails, with where its first bad byte is. And `export --help`'s usage lines left out
// --concurrency, which the export takes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.js';
import { exportCommand, importCommand, invalidUtf8At } from '../../lib/cli/commands/transfer.js';
import { makeApp, TOKENS } from '../http/helpers.js';

async function harness() {
  const app = await makeApp();
  const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
  const cli = async (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await main(args, {
      stdout: { write: (s: string) => void (stdout += s), isTTY: false, columns: 120 },
      stderr: { write: (s: string) => void (stderr += s), isTTY: false },
      env: { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.laptop },
      fetch: fetcher,
    });
    return { code, stdout, stderr };
  };
  return { app, cli };
}

const head = (id: string) =>
  `{"id":"${id}","created_at":"2025-01-10T08:00:00Z","updated_at":"2025-01-10T09:30:00Z",` +
  `"model":"m","task":"t","messages":[{"role":"user","content":"caf`;

describe('import of a file that is not UTF-8', () => {
  it('fails the file, naming where, and stores nothing', async () => {
    const { app, cli } = await harness();
    const dir = mkdtempSync(join(tmpdir(), 'satchel-utf8-'));
    const bytes = Buffer.from(head('latin1'));
    const file = Buffer.concat([bytes, Buffer.from([0xe9]), Buffer.from(' au lait"}]}')]);
    writeFileSync(join(dir, 'latin1.json'), file);
    const r = await cli(['import', dir]);
    expect(r.stdout).toContain(
      `failed     ${join(dir, 'latin1.json')}: not UTF-8 (at byte offset ${bytes.length})`,
    );
    expect(r.code).toBe(4);
    expect((await app.call('GET', '/v1/sessions/latin1')).status).toBe(404);
  });

  it('still imports UTF-8 with a byte order mark, and U+FFFD the file itself holds', async () => {
    const { app, cli } = await harness();
    const dir = mkdtempSync(join(tmpdir(), 'satchel-utf8-'));
    const text = `\ufeff${head('bom')}\u00e9 \ufffd au lait"}]}`;
    writeFileSync(join(dir, 'bom.json'), text, 'utf8');
    const r = await cli(['import', dir]);
    expect(r.stdout).toContain('1 created');
    const stored = (await app.call('GET', '/v1/sessions/bom')).json;
    expect(stored.messages[0].content).toBe('caf\u00e9 \ufffd au lait');
  });

  it.each([
    [[0x61, 0x62], -1],
    [[0xc3, 0xa9], -1],
    [[0xf0, 0x9f, 0x98, 0x80], -1],
    [[0x61, 0xe9, 0x20], 1],
    [[0x61, 0xc0, 0x80], 1], // an overlong form
    [[0xed, 0xa0, 0x80], 0], // a surrogate
    [[0xf4, 0x90, 0x80, 0x80], 0], // past U+10FFFF
    [[0x61, 0x62, 0xe2, 0x82], 2], // cut short
    [[0x80], 0],
  ])('invalidUtf8At(%j) is %i', (bytes, at) => {
    expect(invalidUtf8At(Uint8Array.from(bytes))).toBe(at);
  });
});

it("every option of import and export is in its --help's usage lines", () => {
  const missing: string[] = [];
  for (const command of [importCommand, exportCommand]) {
    const usage = command.help.split('\n\n')[0]!;
    for (const name of Object.keys(command.options))
      if (!usage.includes(`--${name}`)) missing.push(`${command.name} --${name}`);
  }
  expect(missing).toEqual([]);
});
