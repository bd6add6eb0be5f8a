/** UTF-8 bytes of a string (what every stored JSON object is written as). */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Decodes a stored body as UTF-8 text. */
export function text(body: Uint8Array): string {
  return new TextDecoder().decode(body);
}
