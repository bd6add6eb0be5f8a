// SHA-256 (lib/model/digest.ts): Node's own hash where the runtime offers it, Web Crypto elsewhere (Workers,
// browsers; the Worker tests run that path in workerd). Both give the same digests.
import { describe, expect, it } from 'vitest';
import { sha256, sha256Hex } from '../../lib/model/digest.js';

const webCrypto = async (value: string | Uint8Array<ArrayBuffer>) =>
  Buffer.from(
    await crypto.subtle.digest(
      'SHA-256',
      typeof value === 'string' ? new TextEncoder().encode(value) : value,
    ),
  ).toString('hex');

describe('sha256', () => {
  it('gives the standard digests, as Web Crypto does', async () => {
    expect(await sha256Hex('')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(await sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 31) % 256);
    for (const value of ['Idempotency-Key ✓ ключ 🔑', 'x'.repeat(100_000), bytes])
      expect(await sha256Hex(value)).toBe(await webCrypto(value));
    const raw = await sha256('abc');
    expect(raw).toBeInstanceOf(Uint8Array);
    expect(raw).toHaveLength(32);
  });
});
