// Secrets split across a message's text parts, through HTTP: what a bucket reader sees.
import { describe, expect, it } from 'vitest';
import {
  b64,
  DOTENV,
  GITHUB,
  glued,
  HEAD,
  pieces,
  rep,
  roundTrip,
  runOn,
  STRIPE,
  t,
} from '../support/inline-files.js';

const MENTION = 'note: the prefix is data:text/plain;base64, then the file';

describe('a key split across text parts', () => {
  it('is redacted when a part follows that would run on into its last piece (review)', async () => {
    const halves = [GITHUB.slice(0, 20), GITHUB.slice(20)];
    for (const next of ['thanks', MENTION, '42', 'and-more']) {
      const r = await roundTrip([...halves, next].map(t));
      expect(r.stored, next).not.toContain(GITHUB.slice(0, 20));
      expect(r.stored, next).not.toContain(GITHUB.slice(20));
      expect(r.redactions, next).toBe('1');
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

  it('is redacted when another split key starts just after the word that follows it (review)', async () => {
    const other = GITHUB.replace('Zq', 'Yy');
    const sent = [
      [
        ' ' + GITHUB.slice(0, 20),
        GITHUB.slice(20),
        'or',
        ' ' + STRIPE.slice(0, 20),
        STRIPE.slice(20),
        '.',
      ],
      [' ', ...pieces(GITHUB, 4), 'and', ' ', ...pieces(other, 4), ' done'],
    ];
    for (const parts of sent) {
      const r = await roundTrip(parts.map(t));
      expect(glued(r.stored)).not.toContain(GITHUB.slice(4, 30));
      expect(r.redactions).toBe('2');
    }
  });

  it('is redacted after a long streamed reply of 4,200 in-word boundaries (review)', async () => {
    const reply = Array<string>(4200).fill('ab');
    const r = await roundTrip([...reply, ' ', ...pieces(GITHUB, 4), 'thanks'].map(t));
    expect(glued(r.stored)).not.toContain(GITHUB.slice(4, 30));
    expect(r.redactions).toBe('1');
  });

  it('is redacted whole when a part alone already matched a shorter key at its end', async () => {
    // The first part, alone, is a Stripe key (30 characters); the key goes on in the next part.
    let r = await roundTrip([' ' + STRIPE.slice(0, 30), STRIPE.slice(30), 'ok', ' x'].map(t));
    expect(glued(r.stored)).not.toContain(STRIPE.slice(30));
    expect(r.redactions).toBe('1');
    expect(runOn(r.content)).toBe(' [REDACTED] x');
    r = await roundTrip(['password=hunter2', 'more', ' ok'].map(t));
    expect(r.stored).not.toContain('more');
    expect(runOn(r.content)).toBe('password=[REDACTED] ok');
    // The parts keep their layout: the ones the key took are left empty.
    expect(r.content).toEqual([t('password=[REDACTED]'), t(''), t(' ok')]);
    // A part that ends a secret at a word's end, and a next part that starts a new word, stay as sent.
    r = await roundTrip(['password=hunter2', ' more', ' ok'].map(t));
    expect(runOn(r.content)).toBe('password=[REDACTED] more ok');
  });

  it('is redacted when a word runs on into its first piece (review)', async () => {
    const r = await roundTrip(['see', GITHUB.slice(0, 20), GITHUB.slice(20), ' ok'].map(t));
    expect(glued(r.stored)).not.toContain(GITHUB.slice(4));
    expect(r.redactions).toBe('1');
  });

  // Rules with a lookbehind (Telegram's digits before `:AA`, Mailchimp's hex before `-us12`), empty,
  // refusal and image parts between the pieces, and keys either side of the 256-character window.
  const TG = '123456789:AA' + rep('Zq8xW3vN5bPz_-', 33);
  const MC = rep('0123456789abcdef', 32) + '-us12';
  const cases: Record<string, unknown[]> = {
    telegram: ['bot ', TG.slice(0, 10), TG.slice(10, 30), TG.slice(30), 'ok', ' fine'],
    'telegram digits alone': ['123456789', ':AA' + TG.slice(12, 30), TG.slice(30), 'ok'],
    mailchimp: [' ', MC.slice(0, 20), MC.slice(20, 34), MC.slice(34), 'ok', ' fine'],
    'empty parts': [' ', GITHUB.slice(0, 20), '', GITHUB.slice(20), '', 'thanks', ' ok'],
    refusal: [
      { type: 'refusal', refusal: ' ' + GITHUB.slice(0, 20) },
      { type: 'refusal', refusal: GITHUB.slice(20) },
      'thanks',
    ],
    'image between': [
      ' ' + GITHUB.slice(0, 20),
      { type: 'image_url', image_url: { url: 'https://x/y.png' } },
      GITHUB.slice(20),
      'thanks',
      ' ok',
    ],
    'past the window': ['a'.repeat(300) + ' ' + GITHUB.slice(0, 20), GITHUB.slice(20), 'thanks'],
    'at the window edge': [
      ' ' + 'b'.repeat(234) + ' ' + GITHUB.slice(0, 20),
      GITHUB.slice(20),
      'thanks',
    ],
  };
  for (const [name, parts] of Object.entries(cases))
    it(`is redacted once: ${name}`, async () => {
      const r = await roundTrip(parts.map((p) => (typeof p === 'string' ? t(p) : p)));
      expect(r.redactions).toBe('1');
      for (const key of [GITHUB, TG.slice(12), MC])
        expect(glued(r.stored)).not.toContain(key.slice(4, 30));
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
    const r = await roundTrip([...pem, MENTION].map(t));
    // The key's body runs on into the second part (`…AxY` + `yz`): its rest goes with the placeholder.
    expect(r.content).toEqual([t('[REDACTED]'), t(''), t(MENTION)]);
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

describe('a data: URL streamed in parts, then a word', () => {
  it('is redacted when the word runs on into its base64 (review)', async () => {
    const url = HEAD + b64(DOTENV);
    const cut = HEAD.length + 20;
    const glued = [
      url.slice(0, cut),
      url.slice(cut),
      'then ',
      GITHUB.slice(0, 20),
      GITHUB.slice(20),
      'thanks',
    ];
    const streamed = [...pieces(url, 8), 'Please review it'];
    for (const parts of [glued, streamed]) {
      const r = await roundTrip(parts.map(t));
      expect(r.stored).not.toContain(STRIPE);
      expect(r.stored).not.toContain(GITHUB);
      expect(r.redactions).toBe(parts === glued ? '3' : '2');
    }
  });

  it('keeps the parts as sent when the file holds no secret', async () => {
    const parts = [
      ...pieces(HEAD + b64('NODE_ENV=production\nPORT=8080\n'), 8),
      'Please review it',
    ].map(t);
    const r = await roundTrip(parts);
    expect(r.content).toEqual(parts);
    expect(r.redactions).toBe('0');
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

  const named = [
    'name=C:\\app\\.env',
    'name="C:\\app\\.env"',
    "name='C:\\app\\.env'",
    'name=s3://bucket/.env',
  ];
  for (const param of [...named, 'src=https://x.example/a/.env', 'name=file:///home/u/.env'])
    it(`still reads a file whose parameters hold a colon before a slash: ${param} (review)`, async () => {
      const r = await roundTrip(`see data:text/plain;${param};base64,${b64(DOTENV)} end`);
      expect(r.stored).not.toContain(GITHUB);
      expect(r.redactions).toBe('2');
    });
});
