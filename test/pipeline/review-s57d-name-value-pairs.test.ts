// Review s57d, finding 4. A secret-sounding NAME and its value in sibling fields, the way Kubernetes
// (`env: [{name, value}]`), ECS task definitions, CloudFormation (`ParameterKey`, `ParameterValue`) and
// HAR files (`headers: [{name, value}]`) write them. The same pair as `DB_PASSWORD=<v>` or as
// `{"headers": {"x-api-key": <v>}}` was redacted; as a name/value pair the value was read alone and stored
// as sent. Now the JSON walk reads a pair's value under its name, and the rule `name-value-pair` reads
// `name: DB_PASSWORD` then `value: …` in text (YAML or JSON).
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { redactArguments } from '../../lib/pipeline/save.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);
const DB = 'Hq7Zk2LmP9xWv4Rt8Ny3Bc6Df1';
const KEY = 'Wd3Rq8Zt5Yp1Lk6Nv9Bm2Xc4Jh7';
const PAT = 'Rk4Tz8Qm2Wx6Yb1Nc5Vd9Lf3Hp7Js0';

const kubectl = (password: string) => `apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
      - name: api
        image: registry.example.com/api:1.4.2
        env:
        - name: DB_PASSWORD
          value: ${password}
        - name: LOG_LEVEL
          value: info
        - name: SMTP_PASS
          value: "S3cr3t!Tulip-42"
`;

describe('a secret in a name/value pair', () => {
  it('is redacted in kubectl YAML and JSON text; other pairs stay', () => {
    expect(redact(kubectl(DB))).toBe(
      kubectl(PLACEHOLDER).replace('"S3cr3t!Tulip-42"', `"${PLACEHOLDER}"`),
    );
    const json = JSON.stringify(
      {
        env: [
          { name: 'DB_PASSWORD', value: 'Hq7Zk2Lm#P9x' },
          { name: 'LOG', value: 'debugging-on' },
        ],
      },
      null,
      2,
    );
    expect(redact(json)).toBe(json.replace('Hq7Zk2Lm#P9x', PLACEHOLDER));
    const cfn = JSON.stringify(
      JSON.stringify([{ ParameterKey: 'DbPassword', ParameterValue: 'Hq7Zk2Lm#P9x' }]),
    );
    expect(redact(cfn)).toBe(cfn.replace('Hq7Zk2Lm#P9x', PLACEHOLDER));
    for (const kept of [
      `- name: COMPASS\n  value: north-by-west`,
      `{"name": "api_token", "value": "\${TOKEN}"}`,
      `- name: db_host\n  value: db.internal.example.com`,
    ])
      expect(redact(kept)).toBe(kept);
  });

  it('goes in JSON arguments: under a secret-sounding name, a header name, or a NAME=value rule', () => {
    const args = {
      url: 'https://api.example.com/v1/health',
      headers: [
        { name: 'X-Api-Key', value: KEY },
        { name: 'Cookie', value: `session=${PAT}` },
        { name: 'Accept', value: 'application/json' },
      ],
      env: [
        { name: 'DB_PASSWORD', value: DB },
        { name: 'GITHUB_PAT', value: PAT },
        { name: 'LOG_LEVEL', value: 'info' },
      ],
      Parameters: [{ ParameterKey: 'DbPassword', ParameterValue: DB }],
    };
    const out = JSON.parse(redactArguments(JSON.stringify(args), redact));
    expect(out).toEqual({
      ...args,
      headers: [
        { name: 'X-Api-Key', value: PLACEHOLDER },
        { name: 'Cookie', value: `session=${PLACEHOLDER}` },
        { name: 'Accept', value: 'application/json' },
      ],
      env: [
        { name: 'DB_PASSWORD', value: PLACEHOLDER },
        { name: 'GITHUB_PAT', value: PLACEHOLDER },
        { name: 'LOG_LEVEL', value: 'info' },
      ],
      Parameters: [{ ParameterKey: 'DbPassword', ParameterValue: PLACEHOLDER }],
    });
  });

  it('is not stored: kubectl YAML in a tool result, HAR headers in tool-call arguments', async () => {
    const app = await makeApp();
    const har = {
      url: 'https://api.example.com/v1/health',
      headers: [{ name: 'X-Api-Key', value: KEY }],
    };
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'debug the api deployment',
        metadata: { env: JSON.stringify([{ name: 'DB_PASSWORD', value: DB }]) },
        messages: [
          { role: 'user', content: 'why does the api not reach the db?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'c1',
                type: 'function',
                function: {
                  name: 'bash',
                  arguments: '{"command":"kubectl get deploy api -o yaml"}',
                },
              },
              {
                id: 'c2',
                type: 'function',
                function: { name: 'http_request', arguments: JSON.stringify(har) },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: kubectl(DB) },
          { role: 'tool', tool_call_id: 'c2', content: '{"ok":true}' },
        ],
      },
    });
    expect(created.status).toBe(201);
    await settleAll(app);
    expect(holders(app.dir, [DB, KEY, 'S3cr3t!Tulip-42'])).toEqual([]);
  });
});
