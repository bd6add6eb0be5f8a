import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  isFresh,
  parseGitHubSignature,
  parseHexMac,
  parseSatchelSignature,
  satchelSignedBytes,
  SIGNATURE_TOLERANCE_S,
  verifySignature,
} from '../../lib/hooks/signature.js';

// An independent HMAC (node:crypto), so the tests do not check Web Crypto against itself.
const mac = (secret: string, data: string | Buffer) =>
  createHmac('sha256', secret).update(data).digest('hex');
const HEX = 'ab'.repeat(32);
const NOW = 1_750_000_000_000;
const T = String(NOW / 1000);
const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

describe('webhook signatures: parsing', () => {
  it.each([
    [`sha256=${HEX}`, true],
    [`sha256=${HEX.toUpperCase()}`, true],
    [` sha256=${HEX} `, true],
    [`sha1=${HEX}`, false],
    [`sha256=${HEX.slice(2)}`, false],
    [`sha256=${HEX}00`, false],
    [`sha256=${'zz'.repeat(32)}`, false],
    [HEX, false],
    ['', false],
  ])('GitHub header %j parses: %s', (header, ok) => {
    expect(parseGitHubSignature(header) !== null).toBe(ok);
  });

  it.each([
    [`t=${T},v1=${HEX}`, { t: T, n: 1 }],
    [`t=${T}, v1=${HEX}`, { t: T, n: 1 }],
    [`v1=${HEX},t=${T}`, { t: T, n: 1 }],
    [`t=${T},v1=${HEX},v1=${'cd'.repeat(32)}`, { t: T, n: 2 }],
    [`t=${T},v0=whatever,v1=${HEX}`, { t: T, n: 1 }],
    [`t=${T}`, null],
    [`v1=${HEX}`, null],
    [`t=${T},t=${T},v1=${HEX}`, null],
    [`t=-5,v1=${HEX}`, null],
    [`t=1.5,v1=${HEX}`, null],
    [`t=${T},v1=${HEX.slice(1)}`, null],
    [`t=${T};v1=${HEX}`, null],
    ['', null],
  ])('Satchel header %j parses to %j', (header, want) => {
    const got = parseSatchelSignature(header);
    expect(got === null ? null : { t: got.t, n: got.v1.length }).toEqual(want);
  });

  it('hex MACs: 64 hex digits only, to the bytes they spell', () => {
    expect(Array.from(parseHexMac('00ff'.repeat(16))!)).toEqual(
      Array.from({ length: 32 }, (_, i) => (i % 2 ? 255 : 0)),
    );
    expect(parseHexMac('00')).toBeNull();
  });

  it.each([
    [0, true],
    [SIGNATURE_TOLERANCE_S, true],
    [-SIGNATURE_TOLERANCE_S, true],
    [SIGNATURE_TOLERANCE_S + 1, false],
    [-SIGNATURE_TOLERANCE_S - 1, false],
  ])('a timestamp %i s from the clock is fresh: %s', (offset, fresh) => {
    expect(isFresh(String(NOW / 1000 + offset), NOW)).toBe(fresh);
  });

  it('the Satchel scheme signs "<t>." followed by the raw bytes', () => {
    const raw = new Uint8Array([0xff, 0x00, 0x7b]);
    expect(Array.from(satchelSignedBytes('12', raw))).toEqual([0x31, 0x32, 0x2e, 0xff, 0x00, 0x7b]);
  });
});

describe('webhook signatures: verification', () => {
  const secret = 's3cret';
  const body = '{"zen":"Keep it logically awesome."}';
  const good = {
    github: `sha256=${mac(secret, body)}`,
    satchel: `t=${T},v1=${mac(secret, `${T}.${body}`)}`,
  };

  it.each([
    ['GitHub, good', { github: good.github }, body, { ok: true, scheme: 'github' }],
    ['Satchel, good', { satchel: good.satchel }, body, { ok: true, scheme: 'satchel' }],
    [
      'Satchel, one of two v1 good (secret rotation)',
      { satchel: `t=${T},v1=${HEX},v1=${mac(secret, `${T}.${body}`)}` },
      body,
      { ok: true, scheme: 'satchel' },
    ],
    ['GitHub, wrong secret', { github: `sha256=${mac('other', body)}` }, body, { ok: false }],
    ['GitHub, body changed', { github: good.github }, body + ' ', { ok: false }],
    ['GitHub, malformed', { github: 'sha256=nothex' }, body, { ok: false }],
    [
      'Satchel, body changed',
      { satchel: good.satchel },
      body.replace('awesome', 'awful'),
      { ok: false },
    ],
    [
      'Satchel, signed without the timestamp',
      { satchel: `t=${T},v1=${mac(secret, body)}` },
      body,
      { ok: false },
    ],
    [
      'Satchel, another timestamp than signed',
      { satchel: `t=${Number(T) - 1},v1=${mac(secret, `${T}.${body}`)}` },
      body,
      { ok: false },
    ],
    [
      'Satchel decides when both are sent: a bad Satchel one fails',
      { github: good.github, satchel: `t=${T},v1=${HEX}` },
      body,
      { ok: false },
    ],
    [
      'Satchel decides when both are sent: a good one passes',
      { github: 'sha256=bad', satchel: good.satchel },
      body,
      { ok: true, scheme: 'satchel' },
    ],
    ['none', {}, body, { ok: false }],
  ])('%s', async (_name, headers, sent, want) => {
    const got = await verifySignature(secret, headers, bytes(sent), NOW);
    expect(got).toMatchObject(want);
  });

  it('the MAC covers the raw bytes, not a re-encoding of the JSON', async () => {
    const raw = '{ "a" : 1 }';
    const headers = { github: `sha256=${mac(secret, raw)}` };
    expect((await verifySignature(secret, headers, bytes(raw), NOW)).ok).toBe(true);
    expect(
      (await verifySignature(secret, headers, bytes(JSON.stringify(JSON.parse(raw))), NOW)).ok,
    ).toBe(false);
  });

  it('bytes that are not UTF-8 verify as they are', async () => {
    const raw = Buffer.from([0xc3, 0x28, 0xff]);
    const got = await verifySignature(
      secret,
      { github: `sha256=${mac(secret, raw)}` },
      new Uint8Array(raw),
      NOW,
    );
    expect(got.ok).toBe(true);
  });

  it.each([
    ['301 s old', -301, false],
    ['301 s ahead', 301, false],
    ['299 s old', -299, true],
    ['299 s ahead', 299, true],
  ])('a Satchel signature %s: ok=%s, and the reason names the clock', async (_name, offset, ok) => {
    const t = String(NOW / 1000 + offset);
    const got = await verifySignature(
      secret,
      { satchel: `t=${t},v1=${mac(secret, `${t}.${body}`)}` },
      bytes(body),
      NOW,
    );
    expect(got.ok).toBe(ok);
    if (!got.ok) expect(got.reason).toMatch(/300 seconds/);
  });
});

describe('signature problems a person can act on', () => {
  it('names a MAC of the wrong length instead of calling it "not hex"', async () => {
    const body = new TextEncoder().encode('{}');
    const short = await verifySignature('s', { github: 'sha256=abcd' }, body, Date.now());
    expect(short).toEqual({
      ok: false,
      reason: 'X-Hub-Signature-256 carries a MAC of 4 hex digits; an HMAC-SHA256 has 64',
    });
    const notHex = await verifySignature('s', { github: 'sha256=zz' }, body, Date.now());
    expect(notHex).toMatchObject({ reason: 'X-Hub-Signature-256 is not sha256=<64 hex digits>' });
  });
});
