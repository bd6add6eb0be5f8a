/**
 * SHA-256 and hex: Node's own hash where the runtime offers it (Node 20.16+: `process.getBuiltinModule`),
 * else Web Crypto (Workers, browsers). Node's is synchronous: Web Crypto's digest runs on the thread pool
 * and its answer waits in the event loop behind every other ready task, which on a busy process put a
 * write's key and fingerprint hashes between its read and its commit.
 */

interface NodeCrypto {
  createHash(algorithm: 'sha256'): { update(value: string | Uint8Array): { digest(): Uint8Array } };
}

const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** SHA-256 of a string's UTF-8 bytes (or of raw bytes). */
export async function sha256(value: string | Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  if (nodeCrypto) return new Uint8Array(nodeCrypto.createHash('sha256').update(value).digest());
  return new Uint8Array(
    await crypto.subtle.digest(
      'SHA-256',
      typeof value === 'string' ? new TextEncoder().encode(value) : value,
    ),
  );
}

/** Hex SHA-256 of a string's UTF-8 bytes (or of raw bytes). */
export async function sha256Hex(value: string | Uint8Array<ArrayBuffer>): Promise<string> {
  return toHex(await sha256(value));
}

/** True when two byte arrays are equal, in time that depends only on their length (for secrets). */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
