// Review s64e, finding 1. OpenAI's reasoning models return `encrypted_content` (a Fernet token: `gAAAAAB` and
// base64url of random bytes) that the adapters store and must give back byte for byte; the Responses API
// refuses a blob that no longer decrypts. Token rules whose shape can occur inside random base64url
// (`ghs_`/`ghu_` with no left boundary, `hf_`, `r8_`, `EAA…`) redacted a piece of about 1 in 2,000 blobs of
// 6 KB. A match inside a run of base64url of 200 characters or more that goes on past it is now left
// alone; a key standing alone, or glued to a word or a short identifier, is still redacted.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { messageInputSchema, type Message } from '../../lib/model/session.js';
import { createRedactor, ruleWork } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { saveOne } from './sessions.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (text: string) => pipeline.redactText(text);

/** Deterministic base64url filler (a linear congruential generator), `n` characters. */
function filler(n: number, seed: number): string {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let x = seed >>> 0;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out += abc[x >>> 26];
  }
  return out;
}

const ALNUM36 = 'ujvS9Zl4XAgYi1iOYzjduu4ONSzBFRd46Xkf';
// Pieces of blobs that review s64e saw redacted (as they were, or the same shape), each inside random base64url.
const PIECES = [
  `ghs_${ALNUM36}kNc7N6rtK7lBxspZURlN_m8s6wrgPIayqve2MjESMYlqqh8uc`, // github-app-token
  `ghu_nmVreCJCweNM524eeo0VrsJd5Ea29jZQilz5HStK0rd9RRrwrX1Pxq9S_suQgFbZ8xE6Xx9q0oFy`, // github-app-token
  `-hf_${ALNUM36.slice(0, 34)}-Ab3dE5gH7`, // huggingface-token (a `-` before: its boundary is a letter or digit)
  `_r8_${ALNUM36}Q-Zx8`, // replicate-api-token
];

describe('opaque base64url blobs come back as they were given', () => {
  it.each(PIECES)('a key-shaped piece inside a blob: %s', (piece) => {
    const middle = `gAAAAAB${filler(300, piece.length)}${piece}${filler(300, 7)}`;
    expect(redact(middle)).toBe(middle);
    // At a blob's end, with nothing after it.
    const end = `gAAAAAB${filler(400, 3)}${piece}`;
    expect(redact(end)).toBe(end);
  });

  it('3,000 blobs of 6 KB, every one unchanged', () => {
    for (let i = 0; i < 3000; i++) {
      const blob = `gAAAAAB${filler(6000, i * 7919 + 1)}`;
      expect(redact(blob)).toBe(blob);
    }
  });

  it("as a reasoning item's encrypted content in a stored message", () => {
    const blob = `gAAAAAB${filler(500, 11)}${PIECES[0]}${filler(500, 12)}`;
    const message = messageInputSchema.parse({
      role: 'assistant',
      content: '',
      openai_agents_item: {
        type: 'reasoning',
        id: 'rs_1',
        providerData: { encrypted_content: blob },
      },
    }) as Message;
    const out = saveOne(createRedactor(rules), message);
    expect(JSON.stringify(out.session)).toContain(blob);
    // The same item holding a key alone is redacted.
    const keyed = messageInputSchema.parse({
      role: 'assistant',
      content: '',
      openai_agents_item: {
        type: 'reasoning',
        providerData: { encrypted_content: `ghs_${ALNUM36}` },
      },
    }) as Message;
    expect(JSON.stringify(saveOne(createRedactor(rules), keyed).session)).not.toContain(ALNUM36);
  });
});

describe('keys outside blobs are still redacted', () => {
  const GHS = `ghs_${ALNUM36}`;
  it.each([
    ['alone', `token: ${GHS}`],
    ['glued to a word', `mytoken${GHS} is set`],
    ['in markdown italics', `use _${GHS}_ for it`],
    ['after a short identifier', `${filler(120, 5)}${GHS}`],
    ['in a URL path', `https://example.com/x/${GHS}/y`],
    ['in a JSON string', JSON.stringify({ token: GHS })],
    ['a Hugging Face token', `HF_TOKEN=hf_${ALNUM36.slice(0, 34)}`],
  ])('%s', (_, text) => {
    expect(redact(text)).not.toContain(ALNUM36.slice(0, 30));
  });
});

describe('a blob dense with key shapes is walked once per rule', () => {
  it('runs each rule a few times, not once per shape (the walk of the run around each match cost 10x)', () => {
    for (const unit of [`ghs_${ALNUM36}_`, `-hf_${ALNUM36.slice(0, 34)}`]) {
      const text = unit.repeat(Math.ceil(40_000 / unit.length));
      const redactor = createRedactor(
        rules.filter((r) => r.keywords.some((k) => unit.includes(k))),
      );
      ruleWork.runs = 0;
      expect(redactor.redact(text).text).toBe(text);
      // One run per shape before (about 1,000 here), each walking 400 characters around it.
      expect(ruleWork.runs, unit).toBeLessThan(20);
    }
  });
});
