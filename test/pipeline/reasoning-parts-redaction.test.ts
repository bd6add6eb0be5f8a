// Reasoning parts are not the content since 2026-12-05 (09e8976), and the first version of that change
// left them out of redaction's bookkeeping: a key streamed in pieces across reasoning parts was stored in
// clear (only the content's parts were scanned run together), a secret only in a reasoning part was
// redacted but counted nowhere, and a form stored before (content holding the reasoning text) counted a
// secret in its text part twice. Now reasoning parts are scanned run together on their own, and only the
// parts whose text is the content count with it.
import { describe, expect, it } from 'vitest';
import { messageInputSchema, type Message } from '../../lib/model/session.js';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { saveOne } from './sessions.js';

const redactor = createRedactor([
  { id: 'gh', keywords: ['ghp_'], pattern: /ghp_[A-Za-z0-9]{36}/y, boundary: true },
]);
const GH = 'ghp_' + 'A1b2C3d4E5'.repeat(3) + 'f6G7h8';
const apply = (content: unknown) =>
  saveOne(redactor, messageInputSchema.parse({ role: 'assistant', content }) as Message);

describe('reasoning part secrets are counted', () => {
  it('a secret only in a reasoning part counts once', () => {
    const out = apply([
      { type: 'reasoning', text: `the key is ${GH}` },
      { type: 'text', text: 'Done.' },
    ]);
    expect(JSON.stringify(out.session)).not.toContain(GH);
    expect(out.redactions).toBe(1);
  });
});

describe('a key streamed in pieces across reasoning parts', () => {
  it('is redacted as it is across text parts', () => {
    const [a, b] = [GH.slice(0, 20), GH.slice(20)];
    // Control: across text parts the run-on key is caught.
    const asText = apply([
      { type: 'text', text: `the key is ${a}` },
      { type: 'text', text: b },
    ]);
    expect(JSON.stringify(asText.session)).not.toContain(b);
    const asReasoning = apply([
      { type: 'reasoning', text: `the key is ${a}` },
      { type: 'reasoning', text: b },
      { type: 'text', text: 'Done.' },
    ]);
    expect(JSON.stringify(asReasoning.session)).not.toContain(b);
  });
});

describe('a stored form written before 2026-12-05 (content holds the reasoning text)', () => {
  it('counts a secret in its text part once, as the same form did before', () => {
    const legacy = {
      role: 'assistant',
      content: `thinking it over\nthe key is ${GH}`,
      content_parts: [
        { type: 'reasoning', text: 'thinking it over' },
        { type: 'text', text: `the key is ${GH}` },
      ],
    };
    const out = saveOne(redactor, messageInputSchema.parse(legacy) as Message);
    expect(JSON.stringify(out.session)).not.toContain(GH);
    expect(out.redactions).toBe(1);
  });
});
