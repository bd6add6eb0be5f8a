// Review s62i, finding 3: the import compared a big wrapped inline file followed by text in quadratic time
// (40 s for a 1 MiB file and 1 MiB of text after it): every wrapped line's end was tried as the URL's end,
// and each try compared the whole text after it. Now only the ends the pipeline reads a URL to are tried
// (two at most, and the whole text for base64 in groups), so the work grows with the text's length. Measured
// as work: the characters handed to the comparison of the texts (`sameText`) for one message.
import { describe, expect, it } from 'vitest';
import { inlineUrlsMatch } from '../../lib/odek/inline.js';
import { sameText } from '../../lib/odek/match.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';

const TOKEN = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const KB = 256;

/** A message: a file with a secret as a data: URL wrapped at 76 columns, then `after`; and as stored. */
function message(after: string) {
  const body = `${'x'.repeat(KB * 1024)}\nGITHUB_TOKEN=${TOKEN}\n`;
  const wrapped = Buffer.from(body)
    .toString('base64')
    .match(/.{1,76}/g)!
    .join('\n');
  const file = `data:text/plain;base64,${wrapped}${after}`;
  const stored = defaultPipeline({ maxSessionBytes: 64 << 20 }).redactText(file);
  return { file, stored };
}

/** `sameText`, counting the characters it is handed. */
function counted() {
  const work = { calls: 0, chars: 0 };
  const same = (a: string, b: string) => {
    work.calls++;
    work.chars += a.length + b.length;
    return sameText(a, b);
  };
  return { work, same };
}

const lines = (n: number, line: string) => `\n${line}\n`.repeat(n);

describe('comparing a big wrapped inline file followed by text', () => {
  it.each([
    ['plain text after it', lines((KB * 1024) / 25, 'log line without secrets')],
    ['text with a secret after it', `\n${TOKEN}${lines((KB * 1024) / 25, 'log line')}`],
    ['a line of text alone after it', '\nthanks'],
  ])('%s: the work grows with its length', (_, after) => {
    const { file, stored } = message(after);
    // The pipeline stored the file redacted (unwrapped) and the text after it as it was, or redacted.
    const url = /^data:text\/plain;base64,([\w+/=]+)\n/.exec(stored)![1]!;
    expect(Buffer.from(url, 'base64').toString()).toMatch(/GITHUB_TOKEN=\[REDACTED\]\n$/);
    const { work, same } = counted();
    expect(inlineUrlsMatch(file, stored, same)).toBe(true);
    expect(work.calls).toBeLessThanOrEqual(8);
    expect(work.chars).toBeLessThanOrEqual(4 * (file.length + stored.length));
    // And a change to the text after it is still found.
    expect(inlineUrlsMatch(`${file}!`, stored, sameText)).toBe(false);
  });
});
