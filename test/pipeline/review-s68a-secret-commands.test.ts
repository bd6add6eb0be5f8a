// Review s68a, F1: values handed to secret-setting commands (`gh secret set --body`, `aws secretsmanager
// --secret-string`, `echo -n … | wrangler secret put`, `npm config set …:_authToken`, `az login
// --service-principal -p`, `setx API_KEY`) were stored in clear, in the session and the search index.
import { describe, expect, it } from 'vitest';
import { PW, redact } from './review-s63f-stored.js';
import { bashCalls, storedSecrets } from './review-s68a-stored.js';

// Random values as `openssl rand` makes them: no provider prefix, so only the command's shape tells.
const V = {
  gh: 'q9ZkT3vR8mW2xY7nB4cL1pD6sF0gH5jK',
  aws: '3f8a9c2e1b8d4f6a0c5e9b2d7a1f3c8e',
  wrangler: 'Hk7qPz2mWx9Lr4TnQx7Lm2Pz',
  npm: 'Zq8vR3kP9mLw2TzB7nYc4HdF',
  az: 'Tn4rL9xLm2Wz7pQ8kY3vB6cD',
  setx: 'Wk4Rt8Yb3Nc6Vd1Fh5Gj0Ab',
};

describe('secret-setting commands', () => {
  it('their values reach no stored object', async () => {
    const commands = [
      `gh secret set DEPLOY_TOKEN --body "${V.gh}" --repo acme/api`,
      `aws secretsmanager create-secret --name prod/db --secret-string '${V.aws}'`,
      `echo -n '${V.wrangler}' | npx wrangler secret put API_KEY`,
      `npm config set //npm.acme.internal/:_authToken ${V.npm}`,
      `az login --service-principal -u 1f0c3a5e-0000-4000-8000-000000000001 -p ${V.az} --tenant acme.onmicrosoft.com`,
      `setx OPENAI_API_KEY ${V.setx}`,
    ];
    const body = {
      task: 'deploy secrets',
      messages: [{ role: 'user', content: 'set up the deploy secrets' }, ...bashCalls(commands)],
    };
    expect(await storedSecrets(body, Object.values(V))).toEqual([]);
  });

  it('the general forms: a secret-setting flag, a pipe into a secret command, a secret name set', () => {
    for (const text of [
      `gh variable set X -b ${PW}`,
      `echo ${PW} | gh secret set DEPLOY_TOKEN`,
      `echo -n "${PW}" | gcloud secrets versions add db --data-file=-`,
      `printf x; echo '${PW}' | docker secret create db_pw -`,
      `aws secretsmanager put-secret-value --secret-id prod/db --secret-string=${PW}`,
      `yarn config set npmAuthToken ${PW}`,
      `poetry config pypi-token.pypi ${PW}`,
      `git config --global github.token ${PW}`,
      `set -x DB_PASSWORD ${PW}`,
      `doppler secrets set API_KEY ${PW}`,
    ])
      expect(redact(text), text).not.toContain(PW);
  });

  it('near-misses keep their words', () => {
    for (const text of [
      'aws secretsmanager get-secret-value --secret-id prod/db/password',
      'gh secret set DEPLOY_TOKEN < token.txt',
      'gh secret set DEPLOY_TOKEN --body "$DEPLOY_TOKEN" --repo acme/api',
      'echo building | grep secret',
      'echo -n $TOKEN | npx wrangler secret put API_KEY',
      'git config --get github.token',
      'npm config set registry https://npm.acme.internal/',
      'setx PATH "%PATH%;C:\\tools"',
      'set -x GITHUB_TOKEN (gh auth token)',
      'The config token parameter is described below.',
      'docker run --name mongo -p 27017:27017 mongo',
    ])
      expect(redact(text)).toBe(text);
  });
});
