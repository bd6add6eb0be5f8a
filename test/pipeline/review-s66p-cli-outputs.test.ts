// Review s66p, F1-F4: secrets in the output of CLI tools, saved through POST /v1/sessions. Each was stored:
// `API Key: …` and `S3 Secret Key: …` (a blank before `Key`: the keyed rules spelled only `api_key`, `apikey`,
// `api-key`), `terraform output -json`'s sensitive values (the name is the enclosing object's key, the
// value in `value`), 1Password's `op item get --format json` (`label` before `value`, not `name`), and
// tables drawn with `│`/`║` (doppler, railway, netlify).
import { describe, expect, it } from 'vitest';
import { redact, storedHolders } from './review-s63f-stored.js';

const PW = 'Tq7vLm2pXz9wQe4R';
const HEX32 = '9f4b4d48b8ba42c02775ba956695ee96';
const HEX64 = '850181e4652dd023b7a98c58ae0d2d34bd487ee0cc3254aed6eda37307425907';
const MIXED32 = '8rgzxTddI3VAlYGIHHvsrVNd5TF2W8NP';
const stored = (command: string, output: string, secrets: string[]) =>
  storedHolders(command, output, secrets);

describe('F1 a key named with a blank before "Key"', () => {
  it.each([
    [
      'supabase status',
      `   S3 Access Key: 625729a08b95bf1b7ff351a663f3a23c\n   S3 Secret Key: ${HEX64}\n   S3 Region: local\n`,
      [HEX64, '625729a08b95bf1b7ff351a663f3a23c'],
    ],
    ['a hex API key', `Datadog\n  Site: datadoghq.eu\n  API Key: ${HEX32}\n`, [HEX32]],
    ['a mixed-case API key', `Name: ci\nAPI Key: ${MIXED32}\nStatus: on\n`, [MIXED32]],
    ['a private key', `Private Key: ${MIXED32}\n`, [MIXED32]],
  ])('%s is not stored', async (command, output, secrets) =>
    expect(await stored(command, output, secrets)).toEqual([]),
  );

  it('prose and references after such a name stay', () => {
    for (const text of [
      'Private Key: see the vault entry',
      'The API key: it goes in the header',
      'Secret key: (none)',
      'api key: ${API_KEY}',
      'Access Key: required',
    ])
      expect(redact(text)).toBe(text);
  });
});

describe('F2 terraform output -json', () => {
  it('sensitive outputs are not stored, pretty or compact', async () => {
    const pretty = JSON.stringify(
      {
        api_key: { sensitive: true, type: 'string', value: MIXED32 },
        db_password: { sensitive: true, type: 'string', value: PW },
        url: { sensitive: false, type: 'string', value: 'https://app.example.com' },
      },
      null,
      2,
    );
    expect(await stored('terraform output -json', pretty, [PW, MIXED32])).toEqual([]);
    const compact = `{"conn":{"sensitive":true,"type":"string","value":"${PW}"}}`;
    expect(await stored('terraform output -json', compact, [PW])).toEqual([]);
  });

  it('outputs not marked sensitive stay', () => {
    const text = '{"url":{"sensitive":false,"type":"string","value":"https://app.example.com/x1"}}';
    expect(redact(text)).toBe(text);
  });
});

describe('F3 1Password op item get --format json', () => {
  it('fields labelled password or API Key are not stored', async () => {
    const out = JSON.stringify(
      {
        id: 'abc',
        fields: [
          { id: 'username', type: 'STRING', purpose: 'USERNAME', label: 'username', value: 'app' },
          { id: 'password', type: 'CONCEALED', purpose: 'PASSWORD', label: 'password', value: PW },
          { id: 'x1', type: 'CONCEALED', label: 'API Key', value: MIXED32 },
        ],
      },
      null,
      2,
    );
    expect(
      await stored('op item get "Prod DB" --format json --reveal', out, [PW, MIXED32]),
    ).toEqual([]);
  });

  it('other labelled fields stay', () => {
    for (const text of [
      '{"label":"notesPlain","value":"call Bob"}',
      '{"label":"Token count","value":"42"}',
    ])
      expect(redact(text)).toBe(text);
  });
});

describe('F4 tables drawn with box-drawing characters', () => {
  it.each([
    ['doppler secrets', `┌──────┬──────┐\n│ NAME  │ VALUE │\n│ SESSION_SECRET    │ ${PW}     │\n`],
    ['railway variables', `║ PGPASSWORD        │ ${PW}      ║\n`],
    ['netlify env:list', `│ API_TOKEN    │ ${MIXED32} │\n`],
  ])('%s: the value is not stored', async (command, output) =>
    expect(await stored(command, output, [PW, MIXED32])).toEqual([]),
  );

  it('types in such tables stay', () => {
    for (const text of ['│ password │ string │', '│ token │ Uint8Array │'])
      expect(redact(text)).toBe(text);
  });
});
