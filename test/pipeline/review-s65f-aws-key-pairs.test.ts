// Review s65f, F6. The AWS CLI's `--output table` and `--output text` and a key pair told in prose kept the
// secret access key (the half that matters) while the key id beside it was redacted: the secret's rule
// wanted `=`, `:` or blanks after its name (the table has ` |  `), and nothing read the unnamed field next
// to an `AKIA`/`ASIA` id (the CLI's `ACCESSKEY` and `CREDENTIALS` lines, or after `Secret key:`).
import { describe, expect, it } from 'vitest';
import { redact, storedHolders } from './review-s63f-stored.js';

const ID = 'ASIA7OYHN32JR3WDSCWM';
const SECRET = 'sQYZa8bBQIqASRaNzei2nsBjcgqSf9Mh6nAopZzr';

describe('an AWS secret access key beside its key id', () => {
  it.each([
    [
      'sts --output table',
      '||                       Credentials                       ||\n' +
        '|+------------------+--------------------------------------+|\n' +
        `||  AccessKeyId     |  ${ID}                    ||\n` +
        '||  Expiration      |  2026-12-08T02:00:00+00:00            ||\n' +
        `||  SecretAccessKey |  ${SECRET}    ||\n`,
    ],
    [
      'iam create-access-key --output text',
      `ACCESSKEY\tAKIA7OYHN32JR3WDSCWM\t2026-12-07T10:00:00+00:00\t${SECRET}\tActive\tdeploy-bot`,
    ],
    ['prose', `Access key: AKIA7OYHN32JR3WDSCWM\nSecret key: ${SECRET}\nRegion: eu-west-1`],
    [
      'sts assume-role --output text',
      `CREDENTIALS\t${ID}\t2026-12-08T02:00:00+00:00\t${SECRET}\tIQoJb3JpZ2luX2VjEHcaCXVz\n` +
        'ASSUMEDROLEUSER\tarn:aws:sts::123456789012:assumed-role/deploy/ci\tAROA3XFRBF23:ci',
    ],
  ])('%s: neither is stored', async (_, output) =>
    expect(await storedHolders('aws iam create-access-key', output, [ID, SECRET])).toEqual([]),
  );

  it('other 40-character fields near a key id stay', () => {
    for (const text of [
      // A commit SHA (lower-case hex), and the documented example pair.
      `AKIA7OYHN32JR3WDSCWM rotated in 4b825dc642cb6eb9a060e54bf8d69288fbee4904`,
      'ACCESSKEY\tAKIAIOSFODNN7EXAMPLE\t2026-12-07\twJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\tActive',
      'ACCESSKEYMETADATA\tAKIA7OYHN32JR3WDSCWM\t2026-12-07T10:00:00+00:00\tActive\tdeploy-bot',
      'The secret key is rotated every 90 days; the secret key: see the vault.',
    ])
      expect(redact(text)).toBe(text.replace('AKIA7OYHN32JR3WDSCWM', '[REDACTED]'));
  });
});
