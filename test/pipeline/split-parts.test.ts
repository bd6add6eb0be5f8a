// Secrets split across a message's text parts, through HTTP: what a bucket reader sees.
import { describe, expect, it } from 'vitest';
import { b64, DOTENV, GITHUB, HEAD, roundTrip, STRIPE } from '../support/inline-files.js';

const t = (text: string) => ({ type: 'text', text });
const MENTION = 'note: the prefix is data:text/plain;base64, then the file';

describe('a key split across text parts', () => {
  it('is redacted when a part follows that would run on into its last piece (review)', async () => {
    const pieces = [GITHUB.slice(0, 20), GITHUB.slice(20)];
    for (const next of ['thanks', MENTION, '42', 'and-more']) {
      const r = await roundTrip([...pieces, next].map(t));
      expect(r.stored, next).not.toContain(GITHUB.slice(0, 20));
      expect(r.stored, next).not.toContain(GITHUB.slice(20));
      expect(r.redactions, next).toBe('1');
      expect(r.content, next).toContainEqual(expect.objectContaining({ type: 'text' }));
    }
  });

  it('is redacted when it is streamed in 4-character pieces between words', async () => {
    const pieces = ['see ', ...GITHUB.match(/.{1,4}/g)!, 'thanks', ' a lot'];
    const r = await roundTrip(pieces.map(t));
    for (let i = 0; i + 8 <= GITHUB.length; i += 4)
      expect(r.stored).not.toContain(GITHUB.slice(i, i + 8));
    expect(r.redactions).toBe('1');
    // The parts carry the redacted text as one, a line break where the key ended.
    expect(r.content).toEqual([t('see [REDACTED]\nthanks a lot')]);
  });

  it('is redacted whole when its first piece looks like a shorter key', async () => {
    const pieces = [STRIPE.slice(0, 16), STRIPE.slice(16, 32), STRIPE.slice(32), 'ok'];
    const r = await roundTrip(pieces.map(t));
    for (const piece of pieces.slice(1, 3)) expect(r.stored).not.toContain(piece);
    expect(r.redactions).toBe('1');
  });

  it('keeps the parts as sent when none holds a secret run on', async () => {
    const parts = ['ghp_', 'is how a GitHub token starts', 'sk_live_', 'a Stripe key'].map(t);
    const r = await roundTrip(parts);
    expect(r.content).toEqual(parts);
    expect(r.redactions).toBe('0');
  });
});

describe('a part that mentions ;base64,', () => {
  it('keeps its own part when another part holds a key (review)', async () => {
    const pem = [
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx',
      'yz\n-----END RSA PRIVATE KEY-----',
    ];
    const without = await roundTrip(pem.map(t));
    const r = await roundTrip([...pem, MENTION].map(t));
    expect(r.content).toEqual([...without.content, t(MENTION)]);
  });

  it('still carries a data: URL split between two parts as the redacted content', async () => {
    const url = HEAD + b64(DOTENV);
    const cut = HEAD.length + 20;
    const r = await roundTrip([url.slice(0, cut), url.slice(cut), MENTION].map(t));
    expect(r.stored).not.toContain(GITHUB);
    expect(r.stored).not.toContain(STRIPE);
    expect(r.redactions).toBe('2');
  });
});

describe('a data: URL after text that mentions data: paths', () => {
  // The URL head once let a colon before a slash anywhere in its parameters, so each `data:/srv/x` tried
  // up to 4 KiB on: 4 MB of them took 5.4 s to save. A colon is now only a drive letter's (`=C:\`).
  for (const unit of ['data:/srv/x ', 'data:\\x\\y ', 'see data:/a:/b '])
    it(`finds the URL after ${JSON.stringify(unit)} and keeps those as sent`, async () => {
      const listing = unit.repeat(64);
      const r = await roundTrip(listing + HEAD + b64(DOTENV) + ' ' + listing);
      expect(r.stored).not.toContain(GITHUB);
      expect(r.redactions).toBe('2');
      expect(r.content.startsWith(listing + HEAD)).toBe(true);
      expect(r.content.endsWith(' ' + listing)).toBe(true);
    });

  it('still reads a file named with a drive letter in its parameters', async () => {
    const r = await roundTrip(`data:text/plain;name=C:\\app\\.env;base64,${b64(DOTENV)}`);
    expect(r.stored).not.toContain(GITHUB);
    expect(r.redactions).toBe('2');
  });
});
