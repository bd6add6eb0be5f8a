/** SHA-256 and hex through Web Crypto, the same on Node, Workers and browsers. */

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** SHA-256 of a string's UTF-8 bytes. */
export async function sha256(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value)));
}

/** Hex SHA-256 of a string's UTF-8 bytes. */
export async function sha256Hex(value: string): Promise<string> {
  return toHex(await sha256(value));
}
