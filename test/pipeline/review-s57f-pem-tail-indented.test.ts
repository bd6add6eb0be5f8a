// Review s57f, finding 5. `private-key-block-tail` (the key material before an END line, when a key is
// read in two chunks) took base64 lines only when each started its line, with no indentation, and the END
// line too. The second chunk of a key inside YAML (a Helm values file, a Kubernetes Secret's stringData:
// `tls.key: |` then indented lines) or of a read tool's numbered output (`cat -n`: `    27\t<base64>`)
// kept every line of the key material (the primes), though the first chunk of the same key was redacted.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const lines = privateKey.trim().split('\n');
const half = Math.floor(lines.length / 2);
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
