// Review s65f, F1. A Kubernetes Secret's `data:` values are base64 of the secrets themselves (`DATABASE_URL:
// cG9zdGdyZXM6Ly8…`, `.dockerconfigjson: eyJhdXRocyI6…`), and `stringData:` holds them as sent: under key
// names that do not sound secret, `kubectl get secret -o yaml|json` output was stored byte for byte.
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const GHP = 'ghp_Zq8xW3vN5bPzR7tK2mYc4LdH9sF6jA1eQ0uB';
const URL = `postgres://app:${PW}@db:5432/app`;
const DOCKER = JSON.stringify({ auths: { 'ghcr.io': { auth: b64('bot:' + GHP) } } });
/** The base64 values a Secret holds, and what they decode to. */
const VALUES = [b64(URL), b64(DOCKER)];

const kubectlYaml = (indent = '') =>
  [
    `apiVersion: v1`,
    `data:`,
    `  DATABASE_URL: ${VALUES[0]}`,
    `  .dockerconfigjson: ${VALUES[1]}`,
    `kind: Secret`,
    `metadata:`,
    `  creationTimestamp: "2026-12-07T10:00:00Z"`,
    `  name: app`,
    `  namespace: default`,
    `type: kubernetes.io/dockerconfigjson`,
  ]
    .map((line) => indent + line)
    .join('\n');

const kubectlJson = JSON.stringify(
  {
    apiVersion: 'v1',
    data: { DATABASE_URL: VALUES[0], '.dockerconfigjson': VALUES[1] },
    kind: 'Secret',
    metadata: { name: 'app', namespace: 'default' },
    type: 'Opaque',
  },
  null,
  4,
);

describe('Kubernetes Secret manifests: every value of `data:` and `stringData:` is redacted, keys kept', () => {
  it.each([
    ['kubectl get secret -o yaml', `$ kubectl get secret app -o yaml\n${kubectlYaml()}\n`],
    ['kubectl get secret -o json', `$ kubectl get secret app -o json\n${kubectlJson}\n`],
    [
      'a List (kubectl get secrets -o yaml)',
      `apiVersion: v1\nitems:\n- ${kubectlYaml('  ').trimStart()}\nkind: List\nmetadata:\n  resourceVersion: ""\n`,
    ],
    [
      'a manifest written by hand (kind first)',
      [
        `apiVersion: v1`,
        `kind: Secret`,
        `metadata:`,
        `  name: app`,
        `  labels:`,
        `    app: web`,
        `type: Opaque`,
        `data:`,
        `  DATABASE_URL: ${VALUES[0]}`,
        ``,
        `  .dockerconfigjson: ${VALUES[1]}`,
      ].join('\n'),
    ],
    ['compact JSON (jq -c)', JSON.stringify(JSON.parse(kubectlJson))],
    [
      'JSON written kind first',
      JSON.stringify(
        {
          kind: 'Secret',
          apiVersion: 'v1',
          metadata: { name: 'app' },
          data: {
            DATABASE_URL: VALUES[0],
            '.dockerconfigjson': VALUES[1],
          },
        },
        null,
        2,
      ),
    ],
  ])('%s', (_, text) => {
    const out = redact(text);
    for (const v of VALUES) expect(out).not.toContain(v);
    expect(out).toContain(`DATABASE_URL`);
    expect(out).toContain(`.dockerconfigjson`);
    expect(out).toContain(PLACEHOLDER);
  });

  it('stringData values as sent, a block scalar too, beside data', () => {
    const text = [
      `apiVersion: v1`,
      `kind: Secret`,
      `metadata:`,
      `  name: app`,
      `type: Opaque`,
      `data:`,
      `  DATABASE_URL: ${VALUES[0]}`,
      `stringData:`,
      `  SMTP_URL: smtp://mailer:${PW}@mail:587`,
      `  config.yaml: |`,
      `    upstream: ${GHP}`,
      `    retries: 3`,
      `---`,
      `apiVersion: v1`,
      `kind: ConfigMap`,
      `metadata:`,
      `  name: app`,
      `data:`,
      `  LOG_LEVEL: debug-verbose`,
    ].join('\n');
    const out = redact(text);
    for (const s of [VALUES[0], PW, GHP]) expect(out).not.toContain(s);
    expect(out).toContain('  SMTP_URL: ');
    expect(out).toContain('  LOG_LEVEL: debug-verbose');
  });

  it('the last-applied-configuration annotation (compact JSON, stringData after metadata)', () => {
    const applied = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { annotations: {}, name: 'app', namespace: 'default' },
      stringData: { SMTP_URL: `smtp://mailer:${PW}@mail:587`, TOKEN: GHP },
      type: 'Opaque',
    });
    const text =
      `apiVersion: v1\ndata:\n  SMTP_URL: ${b64('x')}\nkind: Secret\nmetadata:\n  annotations:\n` +
      `    kubectl.kubernetes.io/last-applied-configuration: |\n      ${applied}\n  name: app\n`;
    const out = redact(text);
    expect(out).not.toContain(PW);
    expect(out).not.toContain(GHP);
  });

  it('is not stored through the API: kubectl get secret -o yaml as a tool result', async () => {
    const secrets = [PW, GHP, ...VALUES];
    const output = `${kubectlYaml()}\n`;
    expect(await storedHolders('kubectl get secret app -o yaml', output, secrets)).toEqual([]);
    expect(await storedHolders('kubectl get secret app -o json', kubectlJson, secrets)).toEqual([]);
  });

  it('ConfigMaps, Deployments, Helm values and other `data` maps stay as sent', () => {
    const configMap = kubectlYaml().replace('kind: Secret', 'kind: ConfigMap');
    for (const text of [
      configMap,
      kubectlJson.replace('"Secret"', '"ConfigMap"'),
      JSON.stringify(JSON.parse(kubectlJson.replace('"Secret"', '"ConfigMap"'))),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  API_URL: https://api.example.com/v2\n`,
      // A Secret, then a ConfigMap in the same List: the ConfigMap's data is its own.
      `items:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: a\n- apiVersion: v1\n  data:\n` +
        `    CACHE_KEY_PREFIX: ${b64('cache-prefix-v2')}\n  kind: ConfigMap\n`,
      `---\nkind: Secret\nmetadata:\n  name: a\n---\nkind: ConfigMap\ndata:\n  MODE: ${b64('mode-production')}\n`,
      // Helm values and application config with `data:` keys.
      `chart:\n  data:\n    retention: 30d\n    bucket: metrics-archive-2026\n  kind: StatefulSet\n`,
      `spec:\n  template:\n    spec:\n      volumes:\n      - name: data\n        emptyDir: {}\n`,
      `{"kind": "SecretProviderClass", "data": {"objectName": "db-password-ref-2026"}}`,
      `kind: SecretStore\ndata:\n  region: eu-west-1-prod-2026\n`,
      `{"data": {"id": 42, "name": "cluster-prod-2026"}, "kind": "Page"}`,
      `kind: Secret is what the chart makes; data: the map below is a ConfigMap's`,
      `data:\n  kind: Secret\n`,
    ])
      expect(redact(text)).toBe(text);
  });
});
