/** SHA-256 and hex through Web Crypto, the same on Node, Workers and browsers. */

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** SHA-256 of a string's UTF-8 bytes (or of raw bytes). */
export async function sha256(value: string | Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
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
