// Review s58c: re-importing an odek file the store already holds must be `unchanged` (docs/cli.md:
// "Re-importing changes nothing ... the same content is unchanged, with --overwrite too"), and an import
// names what it leaves out.
// - A -0 (Python writes -0.0) in a field kept as sent is stored as 0; match.ts compared numbers with
//   Object.is, for which they differ: the second import failed, and each --overwrite wrote a new revision.
// - A key streamed across content parts is redacted in their text as one, and the first text part then
//   holds that text while the other text parts go: the parts were compared item by item ("3 items in the
//   file, 1 stored"), so the file failed for good, and each --overwrite wrote a new revision.
// - An external ref's own field (`title`) was dropped on import (a ref carries five fields) without a word.
import { describe, expect, it } from 'vitest';
import type { SatchelClient } from '../../lib/client/index.js';
import { importOdekFile } from '../../lib/odek/transfer.js';
import { inProcessClient } from '../http/helpers.js';

const client = inProcessClient;

const times = { created_at: '2025-01-10T08:00:00Z', updated_at: '2025-01-10T09:30:00Z' };

/** Imports `text` three times: plain, then twice with --overwrite; the outcomes and the last revision. */
async function importThrice(c: SatchelClient, id: string, text: string) {
  const first = await importOdekFile(c, `${id}.json`, text);
  const again = await importOdekFile(c, `${id}.json`, text);
  await importOdekFile(c, `${id}.json`, text, { overwrite: true });
  const last = await importOdekFile(c, `${id}.json`, text, { overwrite: true });
  return { first, again, last, revision: (await c.get(id)).session.revision };
}

describe('re-import of an unchanged file', () => {
  it('is unchanged when a kept field holds -0.0, and --overwrite writes nothing', async () => {
    const c = await client();
    const text = JSON.stringify({
      id: 'neg-zero',
      ...times,
      task: 'measure',
      messages: [{ role: 'user', content: 'hi', score: 'SCORE', parts: [{ delta: 'DELTA' }] }],
    })
      .replace('"SCORE"', '-0.0')
      .replace('"DELTA"', '-0');
    const r = await importThrice(c, 'neg-zero', text);
    expect(r.first.status).toBe('created');
    expect([r.again.status, r.again.reason]).toEqual(['unchanged', undefined]);
    expect(r.last.status).toBe('unchanged');
    expect(r.revision).toBe(1);
  });

  it('still finds a number that differs (1 is not 0)', async () => {
    const c = await client();
    const file = {
      id: 'zero-one',
      ...times,
      task: 't',
      messages: [{ role: 'user', content: 'hi', n: 0 }],
    };
    await importOdekFile(c, 'zero-one.json', JSON.stringify(file));
    const other = JSON.stringify(file).replace('"n":0', '"n":1');
    const out = await importOdekFile(c, 'zero-one.json', other);
    expect([out.status, out.reason]).toEqual([
      'failed',
      'exists with different content (messages[0].n); --overwrite replaces it',
    ]);
  });
});

const GH = 'ghp_' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A';

/** An odek file holding one message sent as `parts` (as an export writes it: content the parts' text). */
function partsFile(id: string, parts: Record<string, unknown>[]): string {
  const texts = parts.flatMap((p) =>
    p.type !== 'reasoning' && typeof p.text === 'string' ? [p.text] : [],
  );
  return JSON.stringify({
    id,
    ...times,
    task: 'streamed key',
    messages: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: texts.join('\n'), content_parts: parts },
    ],
  });
}

const text = (t: string) => ({ type: 'text', text: t });

describe('re-import of a file whose content parts carried a key split across them', () => {
  it.each([
    [
      'in three text parts',
      [text(`token ${GH.slice(0, 14)}`), text(GH.slice(14, 26)), text(`${GH.slice(26)} thanks`)],
    ],
    // Stored "key: [REDACTED]\nthanks": no line break inside the key, one where it ends.
    [
      'with a line break kept after it',
      [text(`key: ${GH.slice(0, 14)}`), text(GH.slice(14)), text('thanks')],
    ],
    [
      'around an image part (kept in its place)',
      [
        text(`token ${GH.slice(0, 14)}`),
        { type: 'image_url', image_url: { url: 'https://example.com/y.png' } },
        text(GH.slice(14, 26)),
        text(`${GH.slice(26)} thanks`),
      ],
    ],
    [
      'in reasoning parts',
      [
        { type: 'reasoning', text: `think ${GH.slice(0, 14)}` },
        { type: 'reasoning', text: GH.slice(14, 26) },
        { type: 'reasoning', text: `${GH.slice(26)} ok` },
        text('answer'),
      ],
    ],
  ])('%s is unchanged, and --overwrite writes nothing', async (_, parts) => {
    const c = await client();
    const r = await importThrice(c, 'split', partsFile('split', parts));
    expect(r.first.status).toBe('created');
    const stored = (await c.get('split')).session;
    expect(stored.messages[1]!.content).toHaveLength(parts.length - 2); // merged, and redacted:
    expect(JSON.stringify(stored)).not.toContain(GH.slice(14, 26));
    expect([r.again.status, r.again.reason]).toEqual(['unchanged', undefined]);
    expect(r.last.status).toBe('unchanged');
    expect(r.revision).toBe(1);
  });

  it('still fails a file whose text around the key differs, naming the content', async () => {
    const c = await client();
    const parts = (end: string) => [
      text(`token ${GH.slice(0, 14)}`),
      text(GH.slice(14, 26)),
      text(`${GH.slice(26)} ${end}`),
    ];
    await importOdekFile(c, 'split-other.json', partsFile('split-other', parts('thanks')));
    const out = await importOdekFile(
      c,
      'split-other.json',
      partsFile('split-other', parts('cheers')),
    );
    expect([out.status, out.reason]).toEqual([
      'failed',
      'exists with different content (messages[1].content); --overwrite replaces it',
    ]);
  });
});

describe("an external ref's own fields", () => {
  it('are named in the import notes, created and unchanged alike', async () => {
    const c = await client();
    const ref = {
      kind: 'github_issue',
      uri: 'https://github.com/acme/app/issues/42',
      created_by: 'odek',
    };
    const file = JSON.stringify({
      id: 'ref-own-field',
      ...times,
      task: 'refs',
      messages: [{ role: 'user', content: 'see the issue' }],
      external_refs: [
        {
          ...ref,
          read_only: false,
          created_at: '2025-01-10T08:00:01Z',
          title: 'Leap days',
          state: 'open',
        },
        { ...ref, uri: 'https://github.com/acme/app/issues/43' },
      ],
    });
    const note =
      'not imported: external_refs[0].title, external_refs[0].state ' +
      '(a ref keeps only kind, uri, created_by, read_only and created_at)';
    const first = await importOdekFile(c, 'ref-own-field.json', file);
    expect([first.status, first.notes]).toEqual(['created', [note]]);
    const again = await importOdekFile(c, 'ref-own-field.json', file);
    expect([again.status, again.notes]).toEqual(['unchanged', [note]]);
  });
});
