// Inline text files in the encodings and places the review of 2026-12-04 found stored as sent: a control
// character anywhere in a text file (a terminal log's BEL), Latin-1, UTF-16LE without a byte order mark,
// a `data:` URL inside a message's text or as a ref's uri, base64 in an MCP `blob` or Bedrock `bytes`;
// and the encoding they come back in (a UTF-8 byte order mark, base64url without `-` or `_`).
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import {
  b64,
  bucketText,
  DOTENV,
  fileOf,
  GITHUB,
  roundTrip,
  save,
  STRIPE,
  unb64,
  wrap,
} from '../support/inline-files.js';

import { HEAD } from '../support/inline-files.js';
const file = (bytes: Buffer | string) => [
  { type: 'text', text: 'here is the file' },
  { type: 'file', file: { filename: 'notes.txt', file_data: HEAD + b64(bytes) } },
];

async function expectNoSecrets(content: unknown, extra?: Record<string, unknown>) {
  const app = await makeApp();
  await save(app, content, extra);
  const stored = await bucketText(app);
  expect(stored).not.toContain(GITHUB);
  expect(stored).not.toContain(STRIPE);
}

describe('inline text files are redacted in every encoding and place', () => {
  it('with control characters: a terminal log (BEL, backspaces), a DOS file ending in Ctrl-Z', async () => {
    const crlf = DOTENV.replace(/\n/g, '\r\n');
    await expectNoSecrets(
      file(`\x1b]0;alice@host: ~/app\x07alice@host:~/app$ cat .env\r\n${crlf}`),
    );
    await expectNoSecrets(file(`build log\nDownloading... 10%\x08\x08\x0820%\n${DOTENV}`));
    await expectNoSecrets(file(crlf + '\x1a'));
  });

  it('Latin-1 / Windows-1252, and UTF-16LE without a byte order mark', async () => {
    await expectNoSecrets(file(Buffer.from(`# Paramètres de production\n${DOTENV}`, 'latin1')));
    await expectNoSecrets(file(Buffer.from(DOTENV, 'utf16le')));
  });

  it('UTF-16 without a byte order mark whose first characters are not ASCII (CJK, a Japanese comma)', async () => {
    for (const first of ['設定ファイル（本番）\n', '# 設定\n', '、設定\n', '一二三\n']) {
      const le = Buffer.from(first + DOTENV, 'utf16le');
      await expectNoSecrets(file(le));
      await expectNoSecrets(file(Buffer.from(le).swap16()));
    }
    // It is stored as it came: UTF-16, no mark added, CJK kept.
    const { content } = await roundTrip(file(Buffer.from('設定\n' + DOTENV, 'utf16le')));
    const back = Buffer.from(content[1].file.file_data.slice(HEAD.length), 'base64');
    expect(back.toString('utf16le')).toMatch(/^設定\nNODE_ENV=production\nGITHUB_TOKEN=\[REDACTED/);
  });

  it('a data: URL inside message text, or as an external ref uri', async () => {
    await expectNoSecrets(`here is my env: ${HEAD}${b64(DOTENV)} why does it fail?`);
    await expectNoSecrets('see ref', {
      external_refs: [{ kind: 'file', uri: HEAD + b64(DOTENV) }],
    });
  });

  it('base64 in an MCP embedded resource `blob` and a Bedrock document `source.bytes`', async () => {
    await expectNoSecrets([
      { type: 'text', text: 'tool output' },
      {
        type: 'resource',
        resource: { uri: 'file:///app/.env', mimeType: 'text/plain', blob: b64(DOTENV) },
      },
      {
        type: 'document',
        document: { format: 'txt', name: 'env', source: { bytes: b64(DOTENV) } },
      },
    ]);
  });
});

// The second review: a `data:` URL with a blank or over 256 characters in its parameters, in mixed case,
// or with its base64 wrapped in lines was stored with its secrets (or, wrapped, all but its first line).
describe('data: URLs in every form a sender writes them', () => {
  it('parameters with blanks or 300 characters long, and a scheme in mixed case', async () => {
    await expectNoSecrets(
      file('x')
        .slice(0, 1)
        .concat(
          [
            'data:text/plain; charset=utf-8;base64,',
            `data:text/plain;name=${'production-settings-'.repeat(14)}.env;base64,`,
            'DAta:text/plain;base64,',
            'daTa:TEXT/PLAIN;BASE64,',
          ].map((head) => ({
            type: 'file',
            file: { filename: '.env', file_data: head + b64(DOTENV) },
          })),
        ),
    );
  });

  it('base64 wrapped at 76 or 64 characters (LF or CRLF), whole or inside message text', async () => {
    const wrap = (width: number, eol: string) =>
      b64(DOTENV)
        .match(new RegExp(`.{1,${width}}`, 'g'))!
        .join(eol);
    const app = await makeApp();
    const made = await save(app, [
      { type: 'text', text: `my env:\n${HEAD}${wrap(76, '\r\n')}\nwhy does it fail?` },
      { type: 'file', file: { filename: '.env', file_data: HEAD + wrap(76, '\n') + '\n' } },
      { type: 'file', file: { filename: '.env', file_data: HEAD + wrap(64, '\r\n') } },
    ]);
    expect(made.headers.get('satchel-redactions')).toBe('6');
    expect(await bucketText(app)).not.toContain(GITHUB);
    // What a reader gets when it decodes each URL whole, line breaks skipped: a key split across lines
    // shows only so.
    const [part, ...files] = made.json.messages[0].content;
    const text: string = part.text;
    expect(text.startsWith(`my env:\n${HEAD}`)).toBe(true);
    expect(text.endsWith('\nwhy does it fail?')).toBe(true);
    const urls = [text.slice(`my env:\n`.length, -'\nwhy does it fail?'.length)].concat(
      files.map((f: any) => f.file.file_data),
    );
    for (const url of urls) {
      const file = Buffer.from(url.slice(HEAD.length).replace(/\s/g, ''), 'base64').toString();
      expect(file).toMatch(/^NODE_ENV=production\nGITHUB_TOKEN=\[REDACTED/);
      expect(file).not.toContain(STRIPE);
    }
  });

  it('a file whose base64 has blanks inside its lines (groups of 4, of 76) is read whole', async () => {
    for (const [size, blank] of [
      [4, ' '],
      [76, ' '],
      [8, '\t'],
      [4, '  '],
    ] as const) {
      const spaced = wrap(b64(`# a long enough first line of notes\n${DOTENV}`), size, blank);
      const data = HEAD + spaced;
      await expectNoSecrets([{ type: 'file', file: { filename: 'notes.txt', file_data: data } }]);
      await expectNoSecrets(HEAD + spaced);
      // The bucket check decodes runs of 40 or more characters only: the file itself, blanks skipped.
      const { content } = await roundTrip(HEAD + spaced);
      expect(unb64(content.slice(HEAD.length).replace(/\s/g, ''))).not.toContain(GITHUB);
    }
    // A word after a URL in its string is still not read as base64.
    const { content } = await roundTrip(HEAD + b64(DOTENV) + ' thanks');
    expect(content).toMatch(/ thanks$/);
    expect(unb64(content.slice(HEAD.length, -' thanks'.length))).toContain(
      'GITHUB_TOKEN=[REDACTED]',
    );
  });
});

// The third review: a word on the line after a data: URL was read as base64 (the file stored as sent,
// counted 0, or the word swallowed); a colon in the parameters, a CR or tab-indented wrap, wrapped base64
// in JSON-escaped text, percent-encoded base64 and a URL split across two text parts kept secrets.
describe('data: URLs among other text', () => {
  async function expectRedacted(sent: unknown, tail?: string) {
    const { content, redactions, stored } = await roundTrip(sent);
    expect(stored).not.toContain(GITHUB);
    expect(stored).not.toContain(STRIPE);
    const text = typeof content === 'string' ? content : JSON.stringify(content);
    const url = text.slice(text.indexOf(HEAD) + HEAD.length);
    expect(fileOf(decodeURIComponent(url.replace(/\\[rn]/g, '')))).not.toContain(STRIPE);
    expect(redactions).toBe('2');
    if (tail) expect(text.endsWith(tail)).toBe(true);
  }

  it('a word or a rule on the line after the URL stays text; so does a heredoc end', async () => {
    await expectRedacted(
      `here is my env: ${HEAD}${b64(DOTENV)}\nwhy does it fail?`,
      '\nwhy does it fail?',
    );
    await expectRedacted(`$ cat <<EOF > .env.b64\n${HEAD}${b64(DOTENV + '#')}\nEOF`, '\nEOF');
    await expectRedacted(`${HEAD}${b64(DOTENV)}\nthanks`, '\nthanks');
    await expectRedacted(`env: ${HEAD}${b64(DOTENV)}\n---\nmore`, '\n---\nmore');
    const f76 = '# production settings'.padEnd(30, '.') + DOTENV; // 171 bytes: 3 lines of 76
    const f64 = DOTENV + '###'; // 144 bytes: 3 lines of 64
    expect([b64(f76).length % 76, b64(f64).length % 64]).toEqual([0, 0]);
    await expectRedacted(`env:\r\n${HEAD}${wrap(b64(f76), 76, '\r\n')}\r\nThanks`, '\r\nThanks');
    await expectRedacted(`env:\n${HEAD}${wrap(b64(f64), 64, '\n')}\nThanks`, '\nThanks');
    // Words that decode to bytes that are no UTF-8 but hold no control character either (a Latin-1 reading).
    for (const word of ['then', 'help', 'whyy', 'okay'])
      await expectRedacted(`env:\n${HEAD}${wrap(b64(f64), 64, '\n')}\n${word}`, `\n${word}`);
  });

  it('a colon in the parameters, CR or tab-indented lines, JSON-escaped line breaks, %2B', async () => {
    await expectRedacted(
      `see data:text/plain;name=C:\\app\\.env;base64,${b64(DOTENV)} end`,
      ' end',
    );
    await expectRedacted(`env: ${HEAD}${wrap(b64(DOTENV), 76, '\r')} end`, ' end');
    await expectRedacted(`env:\n  ${HEAD}${wrap(b64(DOTENV), 76, '\n\t')}\nend`, '\nend');
    await expectRedacted(
      JSON.stringify({ path: '.env', content: HEAD + wrap(b64(DOTENV), 76, '\n') }),
    );
    await expectRedacted(`see ${HEAD}${encodeURIComponent(b64('~~~\n' + DOTENV))} end`, ' end');
  });

  it('a URL split across two text parts is stored whole, its secrets redacted', async () => {
    const url = HEAD + b64(DOTENV);
    await expectRedacted([
      { type: 'text', text: `env: ${url.slice(0, HEAD.length + 60)}` },
      { type: 'text', text: url.slice(HEAD.length + 60) },
    ]);
  });
});

describe('inline files come back in the encoding they were sent in', () => {
  async function roundTrip(files: string[]) {
    const app = await makeApp();
    const made = await save(app, [
      { type: 'text', text: 'files' },
      ...files.map((file_data) => ({ type: 'file', file: { filename: '.env', file_data } })),
    ]);
    const got = await app.call('GET', `/v1/sessions/${made.json.id}`);
    const outs: string[] = got.json.messages[0].content.slice(1).map((p: any) => p.file.file_data);
    return { outs, redactions: made.headers.get('satchel-redactions') };
  }

  it('a UTF-8 file with a byte order mark keeps it; UTF-16LE without one stays without', async () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(DOTENV)]);
    const wide = Buffer.from(DOTENV, 'utf16le');
    const { outs, redactions } = await roundTrip([HEAD + b64(bom), HEAD + b64(wide)]);
    expect(redactions).toBe('4');
    const bytes = Buffer.from(outs[0]!.slice(HEAD.length), 'base64');
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toMatch(
      /^NODE_ENV=production\nGITHUB_TOKEN=\[REDACTED/,
    );
    const back = Buffer.from(outs[1]!.slice(HEAD.length), 'base64');
    expect(back.toString('utf16le')).toMatch(/^NODE_ENV=production\nGITHUB_TOKEN=\[REDACTED/);
  });

  it('a UTF-16 file with an odd number of bytes keeps its last byte', async () => {
    const le = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(DOTENV, 'utf16le'),
      Buffer.from('!'),
    ]);
    const be = Buffer.from(le.subarray(0, -1)).swap16();
    const { outs, redactions } = await roundTrip(
      [le, Buffer.concat([be, Buffer.from('?')])].map((b) => HEAD + b64(b)),
    );
    expect(redactions).toBe('4');
    for (const [i, out] of outs.entries()) {
      const bytes = Buffer.from(out.slice(HEAD.length), 'base64');
      expect(bytes.length % 2).toBe(1);
      expect(String.fromCharCode(bytes.at(-1)!)).toBe('!?'[i]);
      const wide = Buffer.from(bytes.subarray(0, -1));
      const text = (i ? wide.swap16() : wide).toString('utf16le');
      expect(text).toMatch(
        /^\ufeffNODE_ENV=production\nGITHUB_TOKEN=\[REDACTED\]\nSTRIPE_SECRET_KEY=\[REDACTED\]\n$/,
      );
    }
  });

  it('unpadded base64url with neither "-" nor "_" in it comes back as base64url', async () => {
    const sent = [0, 1, 2, 3, 4, 5].map((i) =>
      Buffer.from(`# notes${'x'.repeat(i)}\n${DOTENV}`).toString('base64url'),
    );
    for (const s of sent) expect(s).not.toMatch(/[-_=]/);
    const { outs } = await roundTrip(sent);
    for (const [i, out] of outs.entries()) {
      expect(Buffer.from(out, 'base64url').toString('utf8')).toContain('GITHUB_TOKEN=[REDACTED');
      // Unpadded input of a length that is not a multiple of 4 can only be base64url.
      if (sent[i]!.length % 4 !== 0) expect(out).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  });

  it('a DATA: URL over 1 MiB in a part is refused with 413, as a data: one is', async () => {
    const app = await makeApp();
    const big = 'QUJD'.repeat(300_000); // 1.2 MB of base64
    for (const scheme of ['data', 'DATA']) {
      const url = `${scheme}:image/png;base64,${big}`;
      const res = await app.call('POST', '/v1/sessions', {
        body: {
          task: 't',
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
        },
      });
      expect(res.status).toBe(413);
    }
  });
});
