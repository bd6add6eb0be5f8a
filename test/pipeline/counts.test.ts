import { describe, expect, it } from 'vitest';
import { messageInputSchema, type Message } from '../../lib/model/session.js';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { saveOne } from './sessions.js';

const redactor = createRedactor([
  { id: 'gh', keywords: ['ghp_'], pattern: /ghp_[A-Za-z0-9]{36}/y, boundary: true },
  {
    id: 'pem',
    keywords: ['-----begin key'],
    pattern: /-----BEGIN KEY-----[\s\S]*?-----END KEY-----/y,
  },
]);
const GH = 'ghp_' + 'A1b2C3d4E5'.repeat(3) + 'f6G7h8';

const apply = (content: unknown) =>
  saveOne(redactor, messageInputSchema.parse({ role: 'user', content }) as Message);

describe('redaction counts with content parts (review)', () => {
  it('one secret counts once, whether sent as a string or as parts (the content is their text)', () => {
    expect(apply(`key ${GH}`).redactions).toBe(1);
    const one = apply([{ type: 'text', text: `key ${GH}` }]);
    expect(one.redactions).toBe(1);
    expect(JSON.stringify(one.session)).not.toContain(GH);
    const two = apply([
      { type: 'text', text: 'hello' },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      { type: 'text', text: `key ${GH}` },
    ]);
    expect(two.redactions).toBe(1);
    expect(two.session.messages[0]!.content).toBe(`hello\nkey ${PLACEHOLDER}`);
  });

  it("a secret outside the parts' text (an image url) still counts", () => {
    const out = apply([
      { type: 'text', text: `key ${GH}` },
      { type: 'image_url', image_url: { url: `https://example.com/a.png?t=${GH}` } },
    ]);
    expect(out.redactions).toBe(2);
    expect(JSON.stringify(out.session)).not.toContain(GH);
  });

  it('a secret split across parts, which only the content shows, counts once', () => {
    const out = apply([
      { type: 'text', text: '-----BEGIN KEY-----' },
      { type: 'text', text: 'MIIEowIBAAKCAQEA' },
      { type: 'text', text: '-----END KEY-----' },
    ]);
    expect(out.session.messages[0]!.content).toBe(PLACEHOLDER);
    expect(out.redactions).toBe(1);
  });
});
