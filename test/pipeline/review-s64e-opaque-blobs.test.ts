// Review s64e, finding 1. OpenAI's reasoning models return `encrypted_content` (a Fernet token: `gAAAAA` and
// base64url of random bytes) that the adapters store and must give back byte for byte; the Responses API
// refuses a blob that no longer decrypts. Token rules whose shape can occur inside random base64url
// (`ghs_`/`ghu_` with no left boundary, `hf_`, `r8_` after a `-` or `_`) redacted a piece of about 1 in
// 2,000 blobs of 6 KB. A Fernet token whole under such a field's name (`encrypted_content`,
// `reasoningEncryptedContent`) is now left as it is; anywhere else it is text as any (review s64i: a
// Keystone token is one, and a request's secrets must go). (A first version
// left alone any key shape inside a long run of base64url, which let keys glued to a word through: review
// s64h; those shapes are below.)
import { describe, expect, it } from 'vitest';
import { messageInputSchema, type Message } from '../../lib/model/session.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { saveOne } from './sessions.js';

const redactor = createRedactor(rules);
const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });

/** Deterministic filler (a linear congruential generator) from `abc`, `n` characters. */
function filler(n: number, seed: number, abc = B64URL): string {
  let x = seed >>> 0;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out += abc[(x >>> 16) % abc.length];
  }
  return out;
}
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ALNUM = B64URL.slice(0, 62);

const ALNUM36 = 'ujvS9Zl4XAgYi1iOYzjduu4ONSzBFRd46Xkf';
// Pieces of blobs that review s64e saw redacted (as they were, or the same shape).
const PIECES = [
  `ghs_${ALNUM36}kNc7N6rtK7lBxspZURlN_m8s6wrgPIayqve2MjESMYlqqh8uc`, // github-app-token
  `ghu_nmVreCJCweNM524eeo0VrsJd5Ea29jZQilz5HStK0rd9RRrwrX1Pxq9S_suQgFbZ8xE6Xx9q0oFy`, // github-app-token
  `-hf_${ALNUM36.slice(0, 34)}-Ab3dE5gH7`, // huggingface-token (a `-` before: its boundary is a letter or digit)
  `_r8_${ALNUM36}Q-Zx8`, // replicate-api-token
];

/** The stored form of an Agents SDK reasoning item whose encrypted content is `blob`. */
function storedItem(blob: string): string {
  const message = messageInputSchema.parse({
    role: 'assistant',
    content: '',
    openai_agents_item: {
      type: 'reasoning',
      id: 'rs_1',
      providerData: { encrypted_content: blob },
    },
  }) as Message;
  return JSON.stringify(saveOne(redactor, message).session);
}

describe("a reasoning item's encrypted content (a Fernet token) comes back as it was given", () => {
  it.each(PIECES)('holding a key-shaped piece: %s', (piece) => {
    const blob = `gAAAAAB${filler(300, piece.length)}${piece}${filler(300, 7)}==`;
    expect(storedItem(blob)).toContain(JSON.stringify(blob));
    // Ending with it.
    const end = `gAAAAAB${filler(400, 3)}${piece}`;
    expect(storedItem(end)).toContain(JSON.stringify(end));
  });

  it('3,000 random ones of 6 KB, every one unchanged', () => {
    for (let i = 0; i < 3000; i++) {
      const blob = `gAAAAAB${filler(6000, i * 7919 + 1)}`;
      expect(storedItem(blob)).toContain(blob);
    }
  });

  it('under a secret-sounding key, or holding more than base64url, it is redacted as before', () => {
    const blob = `gAAAAAB${filler(300, 5)}${PIECES[0]}`;
    const keyed = messageInputSchema.parse({
      role: 'assistant',
      content: '',
      openai_agents_item: { type: 'x', providerData: { api_key: blob } },
    }) as Message;
    expect(JSON.stringify(saveOne(redactor, keyed).session)).not.toContain(blob);
    expect(storedItem(`${blob} ghs_${ALNUM36}`)).not.toContain(ALNUM36);
  });
});

describe('a Fernet token anywhere else is text as any (review s64i)', () => {
  const ghp = `ghp_${ALNUM36}`;
  const token = `gAAAAAB${filler(200, 21)}`;
  it("a request's secret that is one (a Keystone token) is redacted in content, tool arguments, metadata", () => {
    const message = messageInputSchema.parse({
      role: 'assistant',
      content: token,
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'f', arguments: JSON.stringify({ id: token }) },
        },
      ],
    }) as Message;
    expect(JSON.stringify(saveOne(redactor, message, [token]).session)).not.toContain(token);
  });

  it('a key glued after a gAAAAA run in content is redacted', () => {
    const message = messageInputSchema.parse({
      role: 'user',
      content: `${token}_${ghp}`,
    }) as Message;
    expect(JSON.stringify(saveOne(redactor, message).session)).not.toContain(ghp);
  });
});

describe('keys glued to words or to each other are redacted (review s64h)', () => {
  const eaa = `EAAG${filler(216, 1, ALNUM)}`;
  const skproj = `sk-proj-${filler(156, 2)}`;
  const ghp = (i: number) => `ghp_${filler(36, 10 + i, ALNUM)}`;
  it.each([
    ['alone', `token: ghs_${ALNUM36}`, [`ghs_${ALNUM36}`]],
    ['glued to a word', `mytokenghs_${ALNUM36} is set`, [`ghs_${ALNUM36}`]],
    ['in markdown italics', `use _ghs_${ALNUM36}_ for it`, [`ghs_${ALNUM36}`]],
    ['a Meta token glued to fb_', `fb_${eaa}`, [eaa]],
    [
      'an OpenAI key glued to a long name',
      `OPENAI_API_KEY_FOR_PRODUCTION_DEPLOYMENT_${skproj}`,
      [skproj],
    ],
    [
      'five GitHub tokens joined by -',
      [1, 2, 3, 4, 5].map(ghp).join('-'),
      [1, 2, 3, 4, 5].map(ghp),
    ],
    [
      'five GitHub tokens joined by _',
      [1, 2, 3, 4, 5].map(ghp).join('_'),
      [1, 2, 3, 4, 5].map(ghp),
    ],
    ['at the end of a long base64url value', `x=${filler(200, 9)}${ghp(7)}`, [ghp(7)]],
  ])('%s', (_, text, keys) => {
    const out = pipeline.redactText(text);
    for (const key of keys) expect(out).not.toContain(key);
  });
});
