// Inline files are redacted as the text they hold. A `.env` handed to the model as a content part
// (`data:text/plain;base64,…`, OpenAI's `file_data`, Anthropic's `source.data`) was stored as sent until
// 2026-12-04: the rules ran on the base64 text, never on the file, so every key in it reached the bucket
// and the API answered `redactions: 0`.
import { describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';

const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
const GITHUB = 'ghp_' + rep('Zq8xW3vN5', 36);
const STRIPE = 'sk_live_' + rep('51HxYzAbCdEf', 40);
const DOTENV = `NODE_ENV=production\nGITHUB_TOKEN=${GITHUB}\nSTRIPE_SECRET_KEY=${STRIPE}\n`;
const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/** Every stored object, with every base64 run in it decoded, as one text: what a bucket reader sees. */
async function bucketText(app: Awaited<ReturnType<typeof makeApp>>): Promise<string> {
  await app.sessions.settled();
  const keys = await listAll(app.objects, '');
  const bodies = await Promise.all(keys.map(async (k) => text((await app.objects.get(k))!.body)));
  const all = bodies.join('\n');
  return all + [...all.matchAll(/[A-Za-z0-9+/]{40,}={0,2}/g)].map((m) => unb64(m[0])).join('\n');
}

async function save(app: Awaited<ReturnType<typeof makeApp>>, content: unknown[]) {
  const made = await app.call('POST', '/v1/sessions', {
    body: { task: 'why does prod crash?', messages: [{ role: 'user', content }] },
  });
  expect(made.status).toBe(201);
  return made;
}

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
