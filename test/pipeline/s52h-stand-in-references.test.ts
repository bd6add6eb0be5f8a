// Review s52h (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// Review s52h. c26bda7 replaced isPlaceholder by isStandIn for values under secret-sounding names
// (lib/pipeline/save.ts redactJson). isStandIn keeps only `${X}`, `$X`, `{{ }}`, `%X%`, `<…>`, code
// references; it lost every whole-value reference REFERENCE (lib/pipeline/redact.ts) knew: GitHub Actions
// `${{ secrets.X }}`, 1Password `op://`, AWS Secrets Manager ARNs, CloudFormation `!Ref`, Azure Key Vault
// references, `vault:` paths, Ruby/Octopus `#{X}`. docs/api.md "Before every write" 1: "a value under a
// secret-sounding name goes whole unless it is wholly a reference or placeholder". These are wholly
// references, not secrets: the session an agent resumes now shows `{"token": "[REDACTED]"}` in the
// workflow it wrote, and the receipt counts a redaction for each. isPlaceholder (still exported) kept them.
import { expect, it } from 'vitest';
import { createRedactor, isPlaceholder } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import type { Message } from '../../lib/model/session.js';
import { saveOne } from '../../test/pipeline/sessions.js';

const redactor = createRedactor(rules);
const REFERENCES: [string, string][] = [
  ['token', '${{ secrets.GH_TOKEN }}'],
  ['GITHUB_TOKEN', '${{ secrets.GITHUB_TOKEN }}'],
  ['password', 'op://Personal/prod-db/password'],
  ['api_key', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/openai-AbCdEf'],
  ['MasterUserPassword', '!Ref DbPassword'],
  ['password', '@Microsoft.KeyVault(SecretUri=https://v.vault.azure.net/secrets/db/)'],
  ['password', 'vault:secret/data/db#password'],
  ['deploy_token', '#{DeployToken}'],
];

it.each(REFERENCES)('{"%s": "%s"} is a reference and stays', (name, value) => {
  expect(isPlaceholder(value)).toBe(true); // as before c26bda7
  const args = JSON.stringify({ name: 'ci', [name]: value });
  const out = saveOne(redactor, {
    role: 'assistant',
    content: '',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'write_config', arguments: args } },
    ],
  } as Message);
  expect(out.session.messages[0]!.tool_calls![0]!.function.arguments).toBe(args);
  expect(out.redactions).toBe(0);
});
