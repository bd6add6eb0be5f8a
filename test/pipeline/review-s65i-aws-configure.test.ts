// Review s65i, F4. `aws configure`'s prompt on a machine not yet configured (`AWS Secret Access Key [None]:
// <key>`) and `aws iam create-access-key --output text` with its tabs expanded to blanks (copied from a
// terminal, `column -t`, `expand`) kept the secret access key: the rule wanted the separator right after
// the name, and tabs between the text output's fields.
import { describe, expect, it } from 'vitest';
import { redact, storedHolders } from './review-s63f-stored.js';

const ID = 'AKIA7OYHN32JR3WDSCWM';
const SECRET = 'Kq7vLm2pXz9wQe4RtY8uIo0PaSdFgHjKl1ZxCvBn';

describe("the AWS CLI's secret access key", () => {
  it.each([
    `$ aws configure\nAWS Access Key ID [None]: ${ID}\nAWS Secret Access Key [None]: ${SECRET}\n` +
      'Default region name [None]: eu-west-1\nDefault output format [None]: json',
    `AWS Secret Access Key [****************EKEY]: ${SECRET}`,
    `ACCESSKEY  ${ID}  2024-01-01T00:00:00+00:00  ${SECRET}  Active  bob`,
    `ACCESSKEY    ${ID}\t2024-01-01T00:00:00+00:00    ${SECRET}    Active    bob`,
    `CREDENTIALS  ASIA7OYHN32JR3WDSCWM  2026-12-08T02:00:00+00:00  ${SECRET}  IQoJb3JpZ2luX2VjEHcaCXVz`,
  ])('is not stored: %s', async (output) =>
    expect(await storedHolders('aws configure', output, [ID, SECRET])).toEqual([]),
  );

  it('other lines stay', () => {
    for (const text of [
      'AWS Secret Access Key [None]: ',
      'Secret access key [optional]: see the vault',
      'ACCESSKEYMETADATA  AKIA7OYHN32JR3WDSCWM  2026-12-07T10:00:00+00:00  Active  deploy-bot',
      `ACCESSKEY  AKIA7OYHN32JR3WDSCWM  rotated in 4b825dc642cb6eb9a060e54bf8d69288fbee4904`,
      'ACCESSKEY  AKIAIOSFODNN7EXAMPLE  2026-12-07  wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  Active',
    ])
      expect(redact(text)).toBe(text.replace('AKIA7OYHN32JR3WDSCWM', '[REDACTED]'));
  });
});
