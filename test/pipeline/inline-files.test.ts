// Inline files are redacted as the text they hold. A `.env` handed to the model as a content part
// (`data:text/plain;base64,…`, OpenAI's `file_data`, Anthropic's `source.data`) was stored as sent until
// 2026-12-04: the rules ran on the base64 text, never on the file, so every key in it reached the bucket
// and the API answered `redactions: 0`.
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { b64, bucketText, DOTENV, GITHUB, save, STRIPE, unb64 } from '../support/inline-files.js';

describe('inline text files in content parts', () => {
  it('a data: URL of a text file is stored with its keys redacted, still a data: URL of the file', async () => {
    const app = await makeApp();
    const made = await save(app, [
      { type: 'text', text: 'here is our env file' },
      {
        type: 'file',
        file: { filename: '.env', file_data: `data:text/plain;base64,${b64(DOTENV)}` },
      },
    ]);
    expect(Number(made.headers.get('satchel-redactions'))).toBe(2);
    const url: string = made.json.messages[0].content[1].file.file_data;
    expect(url.startsWith('data:text/plain;base64,')).toBe(true);
    const file = unb64(url.slice('data:text/plain;base64,'.length));
    expect(file).toContain('NODE_ENV=production\nGITHUB_TOKEN=[REDACTED');
    expect(file).not.toContain(GITHUB);
    const stored = await bucketText(app);
    expect(stored).not.toContain(GITHUB);
    expect(stored).not.toContain(STRIPE);
  });

  it('base64 fields by name, whatever the media type says: Anthropic source.data, bare file_data', async () => {
    const app = await makeApp();
    await save(app, [
      { type: 'document', source: { type: 'base64', media_type: 'text/plain', data: b64(DOTENV) } },
      { type: 'file', file: { filename: 'creds', file_data: b64(`token: ${STRIPE}\n`) } },
      { type: 'file', file: { file_data: `data:application/octet-stream;base64,${b64(GITHUB)}` } },
    ]);
    const stored = await bucketText(app);
    expect(stored).not.toContain(GITHUB);
    expect(stored).not.toContain(STRIPE);
  });

  it('a file with nothing to redact, and binary media, are stored byte for byte', async () => {
    const app = await makeApp();
    const png = new Uint8Array(300).map((_, i) => (i * 37) % 256);
    const clean = `data:text/markdown;base64,${b64('# Notes\n\nNothing secret here.\n')}`;
    const image = `data:image/png;base64,${b64(png)}`;
    const made = await save(app, [
      { type: 'file', file: { filename: 'notes.md', file_data: clean } },
      { type: 'image_url', image_url: { url: image } },
      { type: 'input_audio', input_audio: { data: b64(png), format: 'wav' } },
    ]);
    expect(made.headers.get('satchel-redactions')).toBe('0');
    const got = await app.call('GET', `/v1/sessions/${made.json.id}`);
    const [file, img, audio] = got.json.messages[0].content;
    expect(file.file.file_data).toBe(clean);
    expect(img.image_url.url).toBe(image);
    expect(audio.input_audio.data).toBe(b64(png));
  });
});

// Left by the review of 2026-12-04: files in base64url, UTF-16 text (PowerShell's `>` writes UTF-16LE with
// a byte order mark), `DATA:` in capitals and a text file labelled as an image were stored as sent.
describe('inline text files in other encodings and labels', () => {
  const utf16 = (s: string, be = false) => {
    const le = Buffer.from('\ufeff' + s, 'utf16le');
    return be ? Buffer.from(le.map((_, i) => le[i ^ 1]!)) : le;
  };
  const fromUtf16 = (b: Buffer, be = false) =>
    (be ? Buffer.from(b.map((_, i) => b[i ^ 1]!)) : b).toString('utf16le');

  it('base64url keeps its alphabet and unpadded form; UTF-16 keeps its byte order and mark', async () => {
    const app = await makeApp();
    // `?>` and `~` make `_`, `-`, `/` and `+` in the encodings.
    const env = `A=1?>~\n${DOTENV}#?>>\n`;
    const url = Buffer.from(env).toString('base64url');
    expect(url).toMatch(/[-_]/);
    const made = await save(app, [
      { type: 'file', file: { filename: '.env', file_data: url } },
      { type: 'file', file: { file_data: `data:text/plain;base64,${b64(utf16(env))}` } },
      { type: 'file', file: { file_data: `data:text/plain;base64,${b64(utf16(env, true))}` } },
    ]);
    expect(made.headers.get('satchel-redactions')).toBe('6');
    const [web, le, be] = made.json.messages[0].content.map((p: any) => p.file.file_data);
    expect(web).toMatch(/^[A-Za-z0-9_-]+$/);
    const fromWeb = Buffer.from(web, 'base64url').toString('utf8');
    expect(fromWeb).toContain('A=1?>~\nNODE_ENV=production\nGITHUB_TOKEN=[REDACTED');
    const head = 'data:text/plain;base64,';
    const wide = Buffer.from(le.slice(head.length), 'base64');
    expect([...wide.subarray(0, 2)]).toEqual([0xff, 0xfe]);
    expect(fromUtf16(wide)).toMatch(/^\ufeffA=1\?>~\nNODE_ENV=production\nGITHUB_TOKEN=\[REDACTED/);
    const big = Buffer.from(be.slice(head.length), 'base64');
    expect([...big.subarray(0, 2)]).toEqual([0xfe, 0xff]);
    expect(fromUtf16(big, true)).toBe(fromUtf16(wide));
    const stored = await bucketText(app);
    for (const secret of [GITHUB, STRIPE]) {
      expect(stored).not.toContain(secret);
      for (const form of [
        Buffer.from(secret).toString('base64url').slice(4, 40),
        b64(utf16(secret).subarray(2)).slice(4, 40),
        b64(utf16(secret, true).subarray(2)).slice(4, 40),
      ])
        expect(stored).not.toContain(form);
    }
  });

  it('a DATA: URL, and a text file whatever media type it names (an SVG, a .env called image/png)', async () => {
    const app = await makeApp();
    const svg = `<svg xmlns="http://www.w3.org/2000/svg"><!-- ${GITHUB} --></svg>`;
    const made = await save(app, [
      { type: 'file', file: { file_data: `DATA:TEXT/PLAIN;BASE64,${b64(DOTENV)}` } },
      { type: 'image_url', image_url: { url: `data:image/svg+xml;base64,${b64(svg)}` } },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(`STRIPE=${STRIPE}`)}` } },
    ]);
    expect(made.headers.get('satchel-redactions')).toBe('4');
    const [upper, image, png] = made.json.messages[0].content;
    expect(upper.file.file_data.startsWith('DATA:TEXT/PLAIN;BASE64,')).toBe(true);
    expect(unb64(image.image_url.url.split(',')[1])).toMatch(/^<svg xmlns=.*<!-- \[REDACTED/);
    expect(unb64(png.image_url.url.split(',')[1])).toMatch(/^STRIPE=\[REDACTED/);
    const stored = await bucketText(app);
    expect(stored).not.toContain(GITHUB);
    expect(stored).not.toContain(STRIPE);
  });

  it('a data: URL as a text part is counted once: the content is the same text', async () => {
    const app = await makeApp();
    const made = await save(app, [{ type: 'text', text: `data:text/plain;base64,${b64(DOTENV)}` }]);
    expect(made.headers.get('satchel-redactions')).toBe('2');
    const [part] = made.json.messages[0].content;
    expect(unb64(part.text.split(',')[1])).toContain('GITHUB_TOKEN=[REDACTED');
  });

  it('real media headers are told binary from their first bytes and stored byte for byte', async () => {
    const app = await makeApp();
    // Binary media are not searched for secrets (only files of text are decoded), as before.
    const tail = Buffer.from(` ${GITHUB} `);
    const headers = {
      png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d],
      jpeg: [0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1],
      gif: [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0, 0x01, 0, 0x80, 0],
      mp3: [0x49, 0x44, 0x33, 0x03, 0, 0, 0, 0, 0x0f, 0x76, 0x54, 0x41],
    };
    const urls = Object.entries(headers).map(
      ([kind, h]) => `data:image/${kind};base64,${b64(Buffer.concat([Buffer.from(h), tail]))}`,
    );
    const made = await save(
      app,
      urls.map((url) => ({ type: 'image_url', image_url: { url } })),
    );
    const got = await app.call('GET', `/v1/sessions/${made.json.id}`);
    expect(got.json.messages[0].content.map((p: any) => p.image_url.url)).toEqual(urls);
  });
});
