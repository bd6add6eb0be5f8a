// Review s57f, finding 3. The text rule for a name/value pair (`- name: X` then `value: …`) read every
// name ending in token/auth/…key/secret/pass like a password (4 characters, no other check), while the
// same name written directly (`SMTP_AUTH: login`, `ENABLE_TOKEN=enabled`) keeps a setting's word. Ordinary
// Kubernetes env entries lost their settings (a mail relay's `SMTP_AUTH: login`), corrupting the manifest
// an agent was editing. Names of tokens, auth settings and keys now take token-like values only
// (`name-value-pair-token`, as `generic-token`); names of passwords and secrets are as before.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);
const env = (name: string, value: string) =>
  `        env:\n        - name: ${name}\n          value: ${value}\n`;

const SETTINGS: [string, string][] = [
  ['SMTP_AUTH', 'login'],
  ['PROXY_AUTH', 'basic'],
  ['ENABLE_TOKEN', 'enabled'],
  ['OAUTH_TOKEN_TYPE_AUTH', 'bearer'],
];

describe('a setting under an auth/token-sounding env name', () => {
  it('control: written directly, it stays', () => {
    for (const [name, value] of SETTINGS)
      for (const t of [`${name}: ${value}`, `${name}=${value}`, `export ${name}="${value}"`])
        expect(redact(t)).toBe(t);
  });

  for (const [name, value] of SETTINGS)
    it(`stays as a Kubernetes env entry: ${name}=${value}`, () => {
      expect(redact(env(name, value))).toBe(env(name, value));
      const json = `[{"name": "${name}", "value": "${value}"}]`;
      expect(redact(json)).toBe(json);
    });

  it('tokens, keys and passwords in pairs still go', () => {
    const token = 'Hq7Zk2LmP9xWv4Rt8Ny3';
    expect(redact(env('GITHUB_TOKEN', token))).not.toContain(token);
    expect(redact(env('SMTP_AUTH', token))).not.toContain(token);
    expect(redact(`[{"name": "X_API_KEY", "value": "${token}"}]`)).not.toContain(token);
    expect(redact(env('DB_PASSWORD', 'hunter22'))).not.toContain('hunter22');
    expect(redact(env('SMTP_PASS', 'tulip'))).not.toContain('tulip');
  });
});
