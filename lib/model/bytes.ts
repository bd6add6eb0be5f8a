/** UTF-8 bytes of a string (what every stored JSON object is written as). */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text);
}

/** Decodes a stored body as UTF-8 text. */
export function text(body: Uint8Array): string {
  return new TextDecoder().decode(body);
}

/** Standard base64 of bytes. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** The bytes of standard base64 (throws on anything else). */
export function fromBase64(b64: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
}
