// Review s62i, finding 2: the import read a file's data: URL to extra ends (each following line that
// starts with a base64 character, and the whole text when the URL starts it). The base64 with the
// following text glued on still decodes, to the file plus a few junk bytes, and when the stored file ends
// with a placeholder that placeholder took them: text added to the message after the URL compared as
// unchanged, and an --overwrite wrote nothing. Now a file's URL is read to the ends the pipeline reads it
// to (lib/pipeline/save.ts `inlineUrls`, `inlineUrl`), and a last line that does not decode as the rest does
// is left to the text after it, as the pipeline leaves it.
import { describe, expect, it } from 'vitest';
import { importOdekFile } from '../../lib/odek/transfer.js';
import { inProcessClient } from '../http/helpers.js';

const times = { created_at: '2026-03-02T09:00:00Z', updated_at: '2026-03-02T09:30:00Z' };
const TOKEN = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
// A token file with no final line break (an .env whose last line is the token), of a length that is a
// multiple of 3: its base64 has no `=` padding, so more base64 glued on still decodes.
const padded = (s: string) => '#'.repeat((3 - (Buffer.byteLength(s) % 3)) % 3) + s;
const ENV = padded(`DEPLOY=1\nexport GITHUB_TOKEN=${TOKEN}`);
// A longer one, for a URL wrapped at 76 columns (a shorter last line that ends with the token).
const LONG = padded(`${'# deploy settings, do not share\n'.repeat(4)}${ENV}`);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const url = (s: string) => `data:text/plain;base64,${b64(s)}`;
const wrapped = (s: string) =>
  `data:text/plain;base64,${b64(s)
    .match(/.{1,76}/g)!
    .join('\n')}`;
const fileOf = (id: string, content: string) =>
  JSON.stringify({ id, ...times, task: 'inline file', messages: [{ role: 'user', content }] });

/** The stored message's first URL's file, decoded. */
async function storedFile(c: Awaited<ReturnType<typeof inProcessClient>>, id: string) {
  const stored = (await c.get(id)).session.messages[0]!.content as string;
  return Buffer.from(
    stored.slice(stored.indexOf('base64,') + 7).split(/\s/)[0]!,
    'base64',
  ).toString();
}

const CHANGED: [string, string, string][] = [
  ['a line inserted after the URL', `see ${url(ENV)}\nthanks`, `see ${url(ENV)}\nbye\nthanks`],
  // `okay` is a whole group of 4: the pipeline tries it as the URL's last line, and leaves it (not UTF-8).
  [
    'a word of 4 inserted after the URL',
    `see ${url(ENV)}\nthanks`,
    `see ${url(ENV)}\nokay\nthanks`,
  ],
  ['a sentence after a message that is the URL', url(ENV), `${url(ENV)} and please delete prod`],
  ['a line after a message that is the URL', url(ENV), `${url(ENV)}\nrm -rf /tmp/x`],
  // After text: a message that is a URL and lines of one word each is read whole by the pipeline, those
  // lines into the file, so a line added there differs only by bytes after the file's last secret.
  [
    'a line inserted after a wrapped URL',
    `see ${wrapped(LONG)}\nthanks`,
    `see ${wrapped(LONG)}\nbye\nthanks`,
  ],
];

describe('import compares the text around an inline file that ends with a secret', () => {
  it.each(CHANGED)('%s: a difference', async (_, before, after) => {
    const c = await inProcessClient();
    expect((await importOdekFile(c, 'a.json', fileOf('inl-1', before))).status).toBe('created');
    // The pipeline redacted the token inside the file: the stored file ends with the placeholder.
    expect(await storedFile(c, 'inl-1')).toMatch(/GITHUB_TOKEN=\[REDACTED\]$/);
    for (const overwrite of [false, true]) {
      const again = await importOdekFile(c, 'a.json', fileOf('inl-1', after), { overwrite });
      expect([again.status, again.reason]).toEqual(
        overwrite
          ? ['replaced', undefined]
          : [
              'failed',
              'exists with different content (messages[0].content); --overwrite replaces it',
            ],
      );
    }
  });

  const SAME: [string, string][] = [
    ['a URL, then a line', `see ${url(ENV)}\nthanks`],
    ['a URL, then a word of 4', `see ${url(ENV)}\nokay\nthanks`],
    ['a message that is the URL', url(ENV)],
    ['a wrapped URL, then a line', `${wrapped(LONG)}\nthanks`],
    ['a message that is a wrapped URL', `${wrapped(LONG)}\n`],
    [
      'a message that is a wrapped URL and words the pipeline reads into it',
      `${wrapped(LONG)}\nbye\nthanks`,
    ],
    ['a wrapped URL after text, then a word of 4', `see ${wrapped(LONG)}\nokay`],
  ];

  it.each(SAME)('%s, re-imported as it is: unchanged', async (_, content) => {
    const c = await inProcessClient();
    const first = await importOdekFile(c, 'a.json', fileOf('inl-2', content));
    expect([first.status, first.notes.join()]).toEqual([
      'created',
      expect.stringMatching(/redacted/),
    ]);
    expect(await storedFile(c, 'inl-2')).toMatch(/GITHUB_TOKEN=\[REDACTED\]/);
    const again = await importOdekFile(c, 'a.json', fileOf('inl-2', content));
    expect([again.status, again.reason]).toEqual(['unchanged', undefined]);
  });
});
