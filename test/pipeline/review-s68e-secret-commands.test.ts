// Review s68e, F4: the secret-setting command rules of review s68a took ordinary values: a GitHub
// variable's, a public key id or path under `signingkey`, fish's `SSH_AUTH_SOCK`, a gcloud service account,
// and a word echoed into `tee` before `&& wrangler secret put`. Secrets in the same shapes stay redacted.
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';
import { PW, redact } from './review-s63f-stored.js';
import { bashCalls } from './review-s68a-stored.js';

/** Stores a bash call per command over HTTP on a local store; answers the stored commands and holders. */
async function stored(commands: string[], secrets: string[]) {
  const app = await makeApp();
  const made = await app.call('POST', '/v1/sessions', {
    body: {
      task: 'setup',
      messages: [{ role: 'user', content: 'set it up' }, ...bashCalls(commands)],
    },
  });
  expect(made.status).toBe(201);
  await settleAll(app);
  const got = JSON.parse((await app.call('GET', `/v1/sessions/${JSON.parse(made.text).id}`)).text);
  const calls = (got.messages as { tool_calls?: { function: { arguments: string } }[] }[]).filter(
    (m) => m.tool_calls,
  );
  return {
    commands: calls.map((m) => JSON.parse(m.tool_calls![0]!.function.arguments).command as string),
    held: holders(app.dir, secrets),
  };
}

const ORDINARY = [
  'gh variable set AWS_REGION --body eu-west-1',
  'gh variable set APP_VERSION --body "v2.14.0"',
  'git config --global user.signingkey 3AA5C34371567BD2',
  'git config --global user.signingkey ~/.ssh/id_ed25519.pub',
  'git config --global http.sslKey /etc/ssl/private/client2.key',
  'set -x SSH_AUTH_SOCK /run/user/1000/gnupg/S.gpg-agent.ssh',
  'gcloud config set auth/impersonate_service_account deployer@acme-prod-42.iam.gserviceaccount.com',
  'echo "Deploying v1.2.3" | tee -a deploy.log && wrangler secret put API_KEY < key.txt',
];

describe('ordinary values given to setting commands', () => {
  it('are stored unchanged', async () => {
    const { commands } = await stored(ORDINARY, []);
    expect(commands).toEqual(ORDINARY);
  });

  it('more near-misses keep their words', () => {
    for (const text of [
      'gpg config keyid 0xDEADBEEF12345678',
      'set -x KEYMAP us-intl2024',
      'gh variable set ENVIRONMENT -b production2 --repo acme/api',
      'gh variable set NODE_VERSION --body 20.11.1',
      'echo v1.2.3 | tee -a log; docker secret create ver -',
      'echo started2 | grep x || gh secret set DEPLOY_TOKEN < token.txt',
    ])
      expect(redact(text)).toBe(text);
  });

  it('secrets in the same shapes reach no stored object', async () => {
    const V = [
      'Wk4Rt8Yb3Nc6Vd1Fh5Gj0Ab',
      'Zq8vR3kP9mLw2TzB7nYc4HdF',
      'Tn4rL9xLm2Wz7pQ8kY3vB6cD',
      PW,
    ];
    const { held } = await stored(
      [
        `gh variable set NPM_TOKEN --body ${V[0]}`,
        `setx AWS_SECRET_ACCESS_KEY ${V[1]}`,
        `set -x GPG_PASSPHRASE ${V[2]}`,
        `echo '${PW}' | tr -d '\\n' | wrangler secret put API_KEY`,
      ],
      V,
    );
    expect(held).toEqual([]);
  });
});
