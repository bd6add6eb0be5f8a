/** UTF-8 bytes of a string (what every stored JSON object is written as). */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text);
}

/** Decodes a stored body as UTF-8 text (malformed bytes become U+FFFD, as TextDecoder does). */
export function text(body: Uint8Array): string {
  return asciiText?.(body) ?? lenient.decode(body);
}

/** Decodes UTF-8 text, throwing a TypeError on malformed bytes. */
export function strictText(body: Uint8Array): string {
  return asciiText?.(body) ?? strict.decode(body);
}

const lenient = new TextDecoder();
const strict = new TextDecoder('utf-8', { fatal: true });

/**
 * A decoder for bodies that are pure ASCII, or undefined for any other body, installed by the Node
 * transports (lib/model/bytes-node.ts). Node 20's UTF-8 decoding takes about 33 ms for 10 MB; checking
 * for ASCII and copying as latin1 takes about 1. Workers keep TextDecoder.
 */
let asciiText: ((body: Uint8Array) => string | undefined) | undefined;

/** Installs the ASCII fast path of `text` and `strictText` (the same string, or undefined to decode). */
export function useAsciiText(decode: (body: Uint8Array) => string | undefined): void {
  asciiText = decode;
}

/** Standard base64 of bytes (a binary string made 8 KiB at a time: a character at a time is slower). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 8192)
    binary += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return btoa(binary);
}

/**
 * The bytes of standard base64 (throws on anything else). A loop, not `Uint8Array.from` with a mapping
 * function: 17 ms for 1 MiB on Node 20 against 244.
 */
export function fromBase64(b64: string): Uint8Array<ArrayBuffer> {
  return bytesOf(atob(b64));
}

/** The bytes of a binary string (one character per byte, as `atob` gives). */
export function bytesOf(binary: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** UTF-16 bytes (a binary string, as `atob` gives) as text, little-endian unless `be`. */
export function fromUtf16(bin: string, be: boolean): string {
  const units = new Uint16Array(bin.length >> 1);
  for (let i = 0; i < units.length; i++) {
    const [a, b] = [bin.charCodeAt(2 * i), bin.charCodeAt(2 * i + 1)];
    units[i] = be ? (a << 8) | b : a | (b << 8);
  }
  let text = '';
  for (let i = 0; i < units.length; i += 8192)
    text += String.fromCharCode(...units.subarray(i, i + 8192));
  return text;
}

/** Text as UTF-16 bytes, little-endian unless `be`, then the bytes of `tail` (a binary string). */
export function toUtf16(text: string, be: boolean, tail = ''): Uint8Array {
  const out = new Uint8Array(text.length * 2 + tail.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[2 * i + +be] = c & 255;
    out[2 * i + +!be] = c >> 8;
  }
  for (let i = 0; i < tail.length; i++) out[text.length * 2 + i] = tail.charCodeAt(i);
  return out;
}

/**
 * Whether `b64` is base64 in 3 or more groups between blanks, of one width (a multiple of 4) but the last:
 * how the save pipeline reads a URL that is a whole string (lib/pipeline/save.ts), and the import after it.
 */
export function spacedGroups(b64: string): boolean {
  const groups = b64.trim().split(/\s+/);
  const width = groups[0]!.length;
  const last = groups.pop()!.length;
  return (
    groups.length > 1 && width % 4 === 0 && last <= width && groups.every((g) => g.length === width)
  );
}
