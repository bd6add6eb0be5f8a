// Review s52f: `aws configure set aws_secret_access_key <key>` (the AWS CLI's own way to store a key, an
// everyday agent command) kept the 40-character secret access key in the stored session: the rule
// `aws-secret-access-key` needed `=` or `:` after the name (KEY_SEP). Blanks alone now separate the name
// from a value of a key's shape (both cases), for the session token's AWS names too; prose keeps the name.
import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { makeApp } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const SECRET = 'q7Jz2Lm9Xw4Rt8Vb3Nk6Hp1Ds5Fg0Ya+Ce/Ui2Ko'; // 40 chars, the shape of an AWS secret key
const TOKEN =
  'AgoJb3JpZ2luX2VjEHsaCXVzLWVhc3QtMSJGMEQCIHx9k2Lq7Vw3Rt8Nb5Pm1Zs4Xc6Yd0Fg9Ha2Jk7Lm3Qn8Wr5Tv1Uy6Io4Pe0Kd9Sf2Gh7Jl3Mz8Xb5Cv1Bn6';
const redactor = createRedactor(rules);
const redact = (text: string) => redactor.redact(text).text;

describe('aws configure set', () => {
  it('the secret access key is redacted in a bash call and its output (reviewer repro)', async () => {
    const app = await makeApp();
    const command = `aws configure set aws_secret_access_key ${SECRET} --profile ci`;
    const r = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'set up the ci profile',
        messages: [
          { role: 'user', content: 'configure the ci profile' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'c1',
                type: 'function',
                function: { name: 'bash', arguments: JSON.stringify({ command }) },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: `$ ${command}\n` },
        ],
      },
    });
    expect(r.status).toBe(201);
    await app.sessions.settled();
    expect(holders(app.dir, [SECRET.slice(0, 20)])).toEqual([]);
  });

  it.each([
    [`aws configure set aws_secret_access_key ${SECRET}`, SECRET],
    [`aws configure set aws_secret_access_key ${SECRET} --profile ci`, SECRET],
    [`aws configure set profile.ci.aws_secret_access_key "${SECRET}"`, SECRET],
    [`aws configure set default.aws_secret_access_key\t${SECRET}`, SECRET],
    [`AWS_SECRET_ACCESS_KEY ${SECRET}`, SECRET],
    [
      `rclone config create s3 s3 provider AWS secret_access_key ${SECRET} region eu-west-1`,
      SECRET,
    ],
    [`some-tool --secret-access-key ${SECRET} --region eu-west-1`, SECRET],
    [`aws configure set aws_session_token ${TOKEN} --profile ci`, TOKEN],
    [`aws configure set aws_security_token ${TOKEN}`, TOKEN],
  ])('%s', (text, secret) => {
    const out = redact(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(PLACEHOLDER);
  });

  it.each([
    'Set the aws_secret_access_key field in ~/.aws/credentials before running the deploy.',
    'aws configure set aws_secret_access_key $AWS_SECRET_ACCESS_KEY --profile ci',
    'aws configure set aws_secret_access_key "${AWS_SECRET_ACCESS_KEY}"',
    'aws configure get aws_secret_access_key --profile ci',
    // The documented example key, and lower-case hex of a key's length (a git SHA) after the name.
    'aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'git log -S secret_access_key 3f9c2a7d1e8b4c6f0a5d9e2b7c1f4a8d6e3b0c9f',
    'the secret_access_key ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMN is upper case only',
    'aws configure set aws_session_token AQoDYXdzEJr...<remainder of session token>',
    'session_token ' + 'Ab1'.repeat(40) + ' without the aws_ name',
  ])('kept: %s', (text) => {
    expect(redact(text)).toBe(text);
  });
});
