// Review s58g: a stored message with fewer content parts than the file's was judged unchanged when the
// file's parts, joined with a line break or nothing at each boundary, gave the stored text (70ebd5f, meant
// for a key split across parts, which the pipeline redacts as one and so merges into one part). But the
// matcher never checked that a secret caused the merge: parts stored merged with no secret at all ("Hello"
// and "world" stored as "Hello\nworld" or "Helloworld", a text after an image stored before it) were
// unchanged too, and `import --overwrite` left the stored parts as they were. A merge is now accepted only
// when a placeholder stands for text across a boundary between the file's parts, and the other boundaries
// are what the pipeline writes there (nothing where it ran the parts together, a line break where it
// redacted the content whole).
import { describe, expect, it } from 'vitest';
import { firstDifference } from '../../lib/odek/match.js';
import { importOdekFile } from '../../lib/odek/transfer.js';
import { inProcessClient } from '../http/helpers.js';

const client = inProcessClient;

const times = { created_at: '2025-01-10T08:00:00Z', updated_at: '2025-01-10T09:30:00Z' };
const GH = 'ghp_' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A';
const PEM_LINE = 'MIIEowIBAAKCAQEAx'.padEnd(64, 'Q');
const text = (t: string) => ({ type: 'text', text: t });
const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };

/** An odek file (an export) of one message sent as `parts`, its content their text by lines. */
function partsFile(id: string, parts: Record<string, unknown>[]) {
  const texts = parts.flatMap((p) => (p.type === 'text' ? [p.text as string] : []));
  return {
    id,
    ...times,
    task: 't',
    external_refs: [],
    messages: [{ role: 'user', content: texts.join('\n'), content_parts: parts }],
  };
}

/** A stored session (as GET shows it) of one message whose content is `parts`. */
function storedAs(parts: Record<string, unknown>[]) {
  return { id: 'x', task: 't', external_refs: [], messages: [{ role: 'user', content: parts }] };
}

describe('parts stored merged where no secret ran across them', () => {
  it('two text parts stored as one "Hello\\nworld": --overwrite replaces it', async () => {
    const c = await client();
    await c.create({
      id: 'merged-no-secret',
      task: 't',
      messages: [{ role: 'user', content: [text('Hello\nworld')] }],
    } as never);
    const parts = [text('Hello'), text('world')];
    const file = JSON.stringify(partsFile('merged-no-secret', parts));
    const plain = await importOdekFile(c, 'merged-no-secret.json', file);
    // Before: "unchanged", and --overwrite left the one stored part.
    expect([plain.status, plain.reason]).toEqual([
      'failed',
      'exists with different content (messages[0].content_parts: 2 items in the file, 1 stored); ' +
        '--overwrite replaces it',
    ]);
    const r = await importOdekFile(c, 'merged-no-secret.json', file, { overwrite: true });
    expect(r.status).toBe('replaced');
    expect((await c.get('merged-no-secret')).session.messages[0]!.content).toEqual(parts);
  });

  it('content "Hello\\nworld" in two parts is not "Helloworld" in one', () => {
    const file = partsFile('x', [text('Hello'), text('world')]);
    expect(firstDifference(file as never, storedAs([text('Helloworld')]) as never)).toBe(
      'messages[0].content',
    );
  });

  it('a text part after an image is not the same text before it', () => {
    const file = partsFile('x', [text('Look:'), image, text('what is it?')]);
    const stored = storedAs([text('Look:what is it?'), image]);
    expect(firstDifference(file as never, stored as never)).toBe('messages[0].content');
  });

  it('a secret across one boundary does not excuse a line break taken out at another', () => {
    const file = partsFile('x', [
      text('Hello'),
      text('world'),
      text(`token ${GH.slice(0, 14)}`),
      text(GH.slice(14)),
    ]);
    // The pipeline writes "Helloworldtoken [REDACTED]" (the parts run together), never this.
    const stored = storedAs([text('Hello\nworldtoken [REDACTED]')]);
    expect(firstDifference(file as never, stored as never)).toBe('messages[0].content');
    // Nor a placeholder that stands for text within one part only.
    const within = partsFile('x', [text('Hello'), text(`world ${GH}`)]);
    const joined = storedAs([text('Helloworld [REDACTED]')]);
    expect(firstDifference(within as never, joined as never)).toBe('messages[0].content');
  });
});

describe('parts the pipeline merged for a secret across them', () => {
  it.each([
    [
      'run together (no line break where no secret is)',
      [text('Hello'), text('world'), text(`token ${GH.slice(0, 14)}`), text(GH.slice(14))],
    ],
    [
      'a text after an image, moved before it with the key',
      [text('Look:'), image, text(GH.slice(0, 14)), text(GH.slice(14))],
    ],
    [
      'the content redacted whole (its line breaks kept)',
      [
        text('see:'),
        text('-----BEGIN RSA PRIVATE KEY-----'),
        text(PEM_LINE),
        text(PEM_LINE),
        text('-----END RSA PRIVATE KEY-----'),
        text('ok then'),
        text('bye'),
      ],
    ],
  ])('%s: a re-import is unchanged', async (_, parts) => {
    const c = await client();
    const file = JSON.stringify(partsFile('split', parts));
    expect((await importOdekFile(c, 'split.json', file)).status).toBe('created');
    const stored = (await c.get('split')).session;
    expect((stored.messages[0]!.content as unknown[]).length).toBeLessThan(parts.length);
    expect(JSON.stringify(stored)).toContain('[REDACTED]');
    const again = await importOdekFile(c, 'split.json', file);
    expect([again.status, again.reason]).toEqual(['unchanged', undefined]);
    const last = await importOdekFile(c, 'split.json', file, { overwrite: true });
    expect(last.status).toBe('unchanged');
    expect((await c.get('split')).session.revision).toBe(1);
  });
});
