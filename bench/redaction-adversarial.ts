/**
 * Redaction throughput on hostile text: 1 MB of one short unit repeated, where the unit holds a rule's
 * keyword with a short value (`cookie: a=x`, `api_key=`, `sk-proj-`…), next to 1 MB of prose.
 *
 *   npx tsx bench/redaction-adversarial.ts           every unit, best of 3 runs after a warm-up
 *   npx tsx bench/redaction-adversarial.ts --quick   one run each
 *
 * Before 2026-12-05 a rule ran its whole window again at every occurrence of its keyword, and a window
 * holds up to 8,192 characters: `cookie: a=x` redacted at about 0.6 MB/s, `x-key:` at 0.3 MB/s. Target:
 * at least 20 MB/s for every unit (1 MB in 50 ms), so that one large append cannot hold the thread.
 */
import { defaultPipeline } from '../lib/pipeline/default.js';
import { createRedactor } from '../lib/pipeline/redact.js';
import { rules } from '../lib/pipeline/rules.js';
import { fmtNum, table } from './support.js';

const MB = 1e6;
const TARGET_MBPS = 20;

/** The units, each repeated to 1 MB; the first is prose (no keyword). */
export const UNITS = [
  'the quick brown fox, 42 times. ',
  'cookie: a=x',
  'cookie: a=x; ',
  'Set-Cookie: a=b\n',
  'Set-Cookie:',
  'api_key=',
  'api_key=x ',
  'sk-proj-',
  'sk-proj-a ',
  'passwd=',
  'password=x ',
  'pwd=',
  'token=',
  'token=x ',
  'token\t="a1',
  'Authorization: Bearer x ',
  'authorization="a1',
  'x-key:',
  'apikey:',
  'secret_access_key: a=x',
  '?signature=x',
  '://',
  'mysqlx ',
  'sqlcmd x',
  '-b=x ',
  'pcsk_',
  'password is 1/',
  'secret: x',
  'pgpass',
  '-----BEGIN PRIVATE KEY-----',
  // The rules of 2026-12-06 (reviews s57d, s57f): a key's tail, name/value pairs, quoted values with escapes.
  '-----END PRIVATE KEY-----',
  '-----END PRIVATE KEY-----\n',
  'name: X_TOKEN\nvalue: ',
  '{"name":"X_TOKEN","value":"a"},',
  '{"Name":"DB_PASSWORD","Value":',
  '"password": "a\\"b\\\\c\\u0022',
  'password = \'" + pw + "\'',
  'pass=',
  'pwd: "\\"',
  // Quoted values the checks reject, and text dense with escapes (2026-12-06: 4 to 5 MB/s before).
  '"password": "ab"',
  "password='ab' ",
  '%3A',
  '\\/',
  '\\u0022',
  // SQL passwords (review s59l): `password '` after a verb far back on the line, `identified by '` unclosed.
  "password 'a",
  "create password 'ab' ",
  "identified by 'a",
  "IDENTIFIED WITH x BY '",
  // HTML character references (review s59l): decoded views of text dense with them.
  '&quot;',
  'password=&quot;a',
  '&#x22;&amp;',
  // Command-line flags (review s63f): a flag value run longer than a flag takes; `mysql -` repeated.
  '--api-key=x',
  '--password=a',
  'mysql -',
  // Review s65f: a header value's run, `]` before the separator, a key's prefix glued to its rejected body.
  'authorization=aB3',
  'Authorization:aB3',
  'apikey]=',
  'private-key]=',
  'token]=',
  'pat]=a',
  'sk-proj-_',
  'fo1_',
  // Review s65f's new forms: AWS CLI table and text output, `Secret key:`, argv arrays in text.
  'SecretAccessKey | ',
  'ACCESSKEY\tAKIAABCDEFGHIJKLMNOP\t',
  'Secret key: ',
  '"mysql", "-p',
  '"-a", "redis-cli',
  // Review s65i: echo piped on (the command looked for past every echo), and the forms it added.
  'echo abc|',
  'echo abc |',
  'ACCESSKEY  AKIAABCDEFGHIJKLMNOP  ',
  'Secret Access Key [',
  '","-a","',
  'mysql","-p',
  // The Kubernetes Secret rule (83ef97b).
  'data:\n  k: v\n',
  'kind: Secret\n',
  'kind: Secret\ndata:\n  k: vvvv\n',
  '"data":{"k":"v"},',
  // Review s66p: a keyword before a character no value starts with (`&token=`: 4 MB/s until then), a
  // password's or a header key's name repeated, full-width text (read again as ASCII), and the new forms.
  '&token=',
  '&api_key=',
  'pass: ',
  'X-Api-Key: ',
  'ＰＡＳＳＷＯＲＤ＝',
  'Secret key: ',
  'S3 Secret Key: ',
  'API Key: ',
  '"sensitive": true,',
  '│ token │ ',
];

/**
 * Units whose cost is in the save pipeline, not the rules: `data:` URLs are read as files there
 * (save.ts inlineUrls), which the core redactor above never sees. Measured through `redactText`.
 */
export const PIPELINE_UNITS = ['data:;base64,', 'data:text/plain;base64,YQ== '];

function fill(unit: string, size: number): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

function main(): void {
  const quick = process.argv.includes('--quick');
  const redactor = createRedactor(rules);
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
  redactor.redact(fill(UNITS[0]!, MB)); // warm-up
  const rows: (string | number)[][] = [];
  let failed = 0;
  const measure = (label: string, redact: () => unknown) => {
    let best = Infinity;
    for (let run = 0; run < (quick ? 1 : 3); run++) {
      const started = performance.now();
      redact();
      best = Math.min(best, performance.now() - started);
    }
    const mbps = MB / 1e3 / best;
    if (mbps < TARGET_MBPS) failed++;
    rows.push([label, fmtNum(best, 1), fmtNum(mbps, 1), mbps >= TARGET_MBPS ? 'ok' : 'SLOW']);
  };
  for (const unit of UNITS) {
    const text = fill(unit, MB);
    measure(JSON.stringify(unit), () => redactor.redact(text));
  }
  for (const unit of PIPELINE_UNITS) {
    const text = fill(unit, MB);
    measure(`${JSON.stringify(unit)} (pipeline)`, () => pipeline.redactText(text));
  }
  table(
    `redaction of 1 MB of one unit repeated (target >= ${TARGET_MBPS} MB/s)`,
    ['unit', 'ms', 'MB/s', ''],
    rows,
  );
  if (failed > 0) console.log(`${failed} unit(s) under ${TARGET_MBPS} MB/s`);
}

main();
