// Review s63f, finding 2. PowerShell's `ConvertTo-SecureString "<pw>" -AsPlainText` kept the password, and
// `$securePass = ConvertTo-SecureString …` lost the cmdlet's name instead (`generic-pass` read it as the
// `…Pass` value). The literal after `ConvertTo-SecureString` (or its `-String`) is now redacted, and a
// `ConvertTo-…` cmdlet is no password value.
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('ConvertTo-SecureString -AsPlainText', () => {
  it.each([
    `$securePass = ConvertTo-SecureString "${PW}" -AsPlainText -Force`,
    `ConvertTo-SecureString -String '${PW}' -AsPlainText -Force`,
    `$cred = New-Object PSCredential('admin', (ConvertTo-SecureString '${PW}' -AsPlainText -Force))`,
  ])('is not stored: %s', async (command) => expect(await storedHolders(command)).toEqual([]));

  it("the literal goes, the cmdlet's name stays", () => {
    const line = `$securePass = ConvertTo-SecureString "${PW}" -AsPlainText -Force`;
    expect(redact(line)).toBe(line.replace(PW, PLACEHOLDER));
  });

  it('variables, pipes and expressions stay', () => {
    for (const text of [
      '$pw | ConvertTo-SecureString -AsPlainText -Force',
      '$sec = ConvertTo-SecureString $env:DB_PASSWORD -AsPlainText -Force',
      '$sec = ConvertTo-SecureString (Get-Content pw.txt) -AsPlainText -Force',
    ])
      expect(redact(text)).toBe(text);
  });
});
