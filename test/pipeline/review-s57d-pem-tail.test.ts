// Review s57d, finding 3. An agent reads a private key file in two chunks (a read_file tool with
// offset/limit, `head` then `tail`): the first tool result holds the BEGIN line, the second the rest and
// the END line. `private-key-block` needs both lines and `private-key-block-truncated` a BEGIN, so the
// second half, which holds the primes of an RSA key (the key itself), was stored as sent. Now the rule
// `private-key-block-tail` redacts whole base64 lines before an END line.
// Review s57f, finding 5 (the last describe): the rule took base64 lines only when each started its line,
// and the END line too. The second chunk of a key inside YAML (`tls.key: |` then indented lines) or of a
// read tool's numbered output (`cat -n`: `    27\t<base64>`) kept every line of the key material.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const lines = privateKey.trim().split('\n');
const half = Math.floor(lines.length / 2);
const END = '-----END RSA PRIVATE KEY-----';

describe('a private key read in two chunks', () => {
  it('keeps no line of the key material in any stored object', async () => {
    const app = await makeApp();
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: 'deploy', messages: [{ role: 'user', content: 'set up the deploy key' }] },
    });
    expect(created.status).toBe(201);
    const id = created.json.id;
    const read = (n: number, args: object, content: string) => ({
      messages: [
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: `c${n}`,
              type: 'function',
              function: { name: 'read_file', arguments: JSON.stringify(args) },
            },
          ],
        },
        { role: 'tool', tool_call_id: `c${n}`, content },
      ],
    });
    const chunks = [lines.slice(0, half).join('\n'), lines.slice(half).join('\n')];
    for (const [i, chunk] of chunks.entries()) {
      const args = { path: 'deploy.pem', offset: i * half, limit: half };
      const appended = await app.call('POST', `/v1/sessions/${id}/messages`, {
        body: read(i, args, chunk),
      });
      expect(appended.status).toBe(200);
    }
    await settleAll(app);
    // Lines of each half (not the BEGIN and END lines): none may be stored.
    const probes = [lines[2]!, lines[half + 2]!, lines[lines.length - 2]!];
    expect(holders(app.dir, probes)).toEqual([]);
    const got = await app.call('GET', `/v1/sessions/${id}`);
    expect(got.json.messages[4].content).toBe(`${PLACEHOLDER}\n${END}`);
  });

  it('in JSON text with escaped line breaks, and with CRLF', () => {
    const tail = lines.slice(half);
    expect(redact(JSON.stringify({ content: tail.join('\n') }))).toBe(
      JSON.stringify({ content: `${PLACEHOLDER}\n${END}` }),
    );
    expect(redact(`chunk 2:\r\n${tail.join('\r\n')}\r\n`)).toBe(
      `chunk 2:\r\n${PLACEHOLDER}\r\n${END}\r\n`,
    );
  });

  it('leaves prose and placeholders before an END line', () => {
    for (const text of [
      `the file ends with\n${END} as usual`,
      `MIIEowIBAAKCAQEA...\n...\n${END}`,
      `a line\nshort\n${END}`,
    ])
      expect(redact(text)).toBe(text);
  });
});

const tail = lines.slice(half);
const probes = [tail[2]!, tail[tail.length - 3]!];

describe('the second chunk of a private key', () => {
  it('control: unindented, it is redacted', () => {
    const out = redact(tail.join('\n'));
    for (const p of probes) expect(out).not.toContain(p);
  });

  it('indented in YAML, its key material goes', () => {
    const out = redact(tail.map((l) => '    ' + l).join('\n') + '\n  tls.crt: |\n');
    for (const p of probes) expect(out).not.toContain(p);
    expect(out).toContain('-----END RSA PRIVATE KEY-----\n  tls.crt: |');
  });

  it('indented in JSON text (escaped line breaks), its key material goes', () => {
    const out = redact(JSON.stringify({ content: tail.map((l) => '  ' + l).join('\n') }));
    for (const p of probes) expect(out).not.toContain(p);
  });

  it('numbered as `cat -n` prints it, its key material goes', () => {
    const numbered = tail.map((l, i) => `${String(half + i + 1).padStart(6)}\t${l}`).join('\n');
    const out = redact(numbered);
    for (const p of probes) expect(out).not.toContain(p);
    expect(out).toContain(`${String(lines.length).padStart(6)}\t-----END RSA PRIVATE KEY-----`);
  });

  it('an indented certificate stays', () => {
    const cert = ['  -----BEGIN CERTIFICATE-----', ...tail.slice(0, -1).map((l) => '  ' + l)];
    const text = [...cert, '  -----END CERTIFICATE-----'].join('\n');
    expect(redact(text)).toBe(text);
  });
});
