// Review s68h, a regression of 1570f7e (review s68e F4): cli-set-secret-name needed the setting's name to
// END in a secret word, so names with a part after it (SECRET_KEY_BASE, DB_PASSWORD_PROD, API_KEY_PROD,
// AUTH_TOKEN_V2) kept their values. Up to two parts may follow it now, but not one naming a file, path,
// id, socket, folder, URL, name or type.
import { expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { holders } from '../support/holders.js';
import { bashCalls } from './review-s68a-stored.js';

const V = [
  '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  'Wk4Rt8Yb3Nc6Vd1Fh5Gj0Ab',
  'Zq8vR3kP9mLw2TzB7nYc4HdF',
  'Tn4rL9xLm2Wz7pQ8kY3vB6cD',
  'Hc7pQ2wX9kLm4RtZ8vYb3Nd',
];

it('values set under secret names with a suffix reach no stored object', async () => {
  const app = await makeApp();
  const made = await app.call('POST', '/v1/sessions', {
    body: {
      task: 'setup',
      messages: [
        { role: 'user', content: 'set the env up' },
        ...bashCalls([
          `set -x SECRET_KEY_BASE ${V[0]}`,
          `setx DB_PASSWORD_PROD ${V[1]}`,
          `set -x API_KEY_PROD ${V[2]}`,
          `setx AUTH_TOKEN_V2 ${V[3]}`,
          `doppler secrets set STRIPE_SECRET_LIVE ${V[4]}`,
        ]),
      ],
    },
  });
  expect(made.status).toBe(201);
  await settleAll(app);
  expect(holders(app.dir, V)).toEqual([]);
});

it('names whose part after the secret word is a file, path, id or socket keep their values', () => {
  const redactor = createRedactor(rules);
  for (const line of [
    'set -x SSH_AUTH_SOCK /tmp/ssh-XXXX1234/agent.42',
    'setx API_KEY_FILE C:\\keys\\api2.txt',
    'set -x GPG_KEY_ID 3AA5C34371567BD2',
    'set -x SECRET_KEY_PATH /etc/app/secret2.key',
  ])
    expect(redactor.redact(line).text).toBe(line);
});
