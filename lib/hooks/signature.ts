import { utf8 } from '../model/bytes.js';
import { timingSafeEqual } from '../model/digest.js';

/**
 * Webhook signatures, checked over the raw body bytes before anything parses them. Two schemes:
 * GitHub's `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, and Satchel's
 * `X-Satchel-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, whose timestamp must be
 * within `SIGNATURE_TOLERANCE_S` of the server clock so that a captured request cannot be replayed later.
 */

/** How far (seconds, either way) a Satchel signature's `t` may be from the server clock. */
export const SIGNATURE_TOLERANCE_S = 300;

/** The signature headers of a request, as sent (absent headers undefined). */
export interface SignatureHeaders {
  github?: string | undefined;
  satchel?: string | undefined;
}

/** `signed`: the bytes the MAC covers (with the Satchel scheme, `<t>.<body>`; else the body). */
export type SignatureResult =
  | { ok: true; scheme: 'github' | 'satchel'; signed: Uint8Array<ArrayBuffer> }
  | { ok: false; reason: string };

/** A Satchel signature header, parsed: `t` kept as sent (the signed text uses it verbatim). */
export interface SatchelSignature {
  t: string;
  v1: Uint8Array[];
}

/** Bytes of exactly 64 hex digits (a SHA-256 MAC), or null. */
export function parseHexMac(hex: string): Uint8Array | null {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  return Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
}

/** `sha256=<64 hex>` → the MAC, or null when the header has another form. */
export function parseGitHubSignature(header: string): Uint8Array | null {
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  return m ? parseHexMac(m[1]!) : null;
}

/**
 * `t=<seconds>,v1=<hex>[,v1=<hex>…]` → its parts, or null. Several `v1` are allowed (a sender rotating
 * its secret signs with both); other keys are ignored, so a later scheme version can be added beside v1.
 */
export function parseSatchelSignature(header: string): SatchelSignature | null {
  let t: string | undefined;
  const v1: Uint8Array[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !/^\d{1,12}$/.test(value)) return null;
      t = value;
    } else if (key === 'v1') {
      const mac = parseHexMac(value);
      if (!mac) return null;
      v1.push(mac);
    }
  }
  return t !== undefined && v1.length > 0 ? { t, v1 } : null;
}

/** True when `t` (unix seconds) is within the tolerance of `nowMs`, in the past or the future. */
export function isFresh(t: string, nowMs: number, toleranceS = SIGNATURE_TOLERANCE_S): boolean {
  return Math.abs(Number(t) - nowMs / 1000) <= toleranceS;
}

/** The bytes a Satchel signature covers: `<t>.` followed by the raw body. */
export function satchelSignedBytes(t: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const head = utf8(`${t}.`);
  const out = new Uint8Array(head.byteLength + body.byteLength);
  out.set(head, 0);
  out.set(body, head.byteLength);
  return out;
}

/** HMAC-SHA256 of `data` under the UTF-8 bytes of `secret`, through Web Crypto. */
export async function hmacSha256(
  secret: string,
  data: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    'raw',
    utf8(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, data));
}

/**
 * Checks a request's signature. When both headers are sent, the Satchel one decides: it is the scheme
 * with replay protection, and falling back to GitHub's would let a stale Satchel request through. MACs
 * are compared in constant time; every `v1` is compared, not stopping at the first match.
 */
export async function verifySignature(
  secret: string,
  headers: SignatureHeaders,
  body: Uint8Array<ArrayBuffer>,
  nowMs: number,
): Promise<SignatureResult> {
  if (headers.satchel !== undefined) {
    const sig = parseSatchelSignature(headers.satchel);
    if (!sig)
      return { ok: false, reason: `X-Satchel-Signature ${formatProblem(headers.satchel, 'v1=')}` };
    if (!isFresh(sig.t, nowMs))
      return {
        ok: false,
        reason: `the signature timestamp is more than ${SIGNATURE_TOLERANCE_S} seconds from the server clock`,
      };
    const signed = satchelSignedBytes(sig.t, body);
    const expected = await hmacSha256(secret, signed);
    let match = false;
    for (const mac of sig.v1) match = timingSafeEqual(mac, expected) || match;
    return match
      ? { ok: true, scheme: 'satchel', signed }
      : { ok: false, reason: 'the signature does not match' };
  }
  if (headers.github !== undefined) {
    const mac = parseGitHubSignature(headers.github);
    if (!mac)
      return {
        ok: false,
        reason: `X-Hub-Signature-256 ${formatProblem(headers.github, 'sha256=')}`,
      };
    const expected = await hmacSha256(secret, body);
    return timingSafeEqual(mac, expected)
      ? { ok: true, scheme: 'github', signed: body }
      : { ok: false, reason: 'the signature does not match' };
  }
  return { ok: false, reason: 'send X-Hub-Signature-256 or X-Satchel-Signature' };
}

/**
 * What is wrong with a signature header, for the 401's detail: a MAC of the wrong length is named as such
 * (it is hex, just not 64 digits), otherwise the expected form.
 */
function formatProblem(header: string, macPrefix: 'v1=' | 'sha256='): string {
  const macs = [...header.matchAll(new RegExp(`${macPrefix}([^,\\s]*)`, 'g'))].map((m) => m[1]!);
  const wrongLength = macs.find((mac) => /^[0-9a-fA-F]+$/.test(mac) && mac.length !== 64);
  if (wrongLength !== undefined) {
    return `carries a MAC of ${wrongLength.length} hex digits; an HMAC-SHA256 has 64`;
  }
  return macPrefix === 'v1='
    ? 'is not t=<unix seconds>,v1=<64 hex digits>'
    : 'is not sha256=<64 hex digits>';
}
