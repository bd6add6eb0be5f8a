import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import type { Rule } from '../../lib/pipeline/rule.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { rules } from '../../lib/pipeline/rules.js';
import { mulberry32 } from '../support/prng.js';

// ---------------------------------------------------------------------------------------------------------
// Fake secrets: format-valid, built deterministically from a seeded PRNG (never copied from anywhere).
// ---------------------------------------------------------------------------------------------------------

const random = mulberry32(0x5a7c4e1);
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const LETTERS = UPPER + LOWER;
const B62 = UPPER + LOWER + DIGITS;
const B64 = B62 + '+/';
const B64URL = B62 + '-_';
const HEX = '0123456789abcdef';
const HEX_UPPER = '0123456789ABCDEF';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const UPPER_NUM = UPPER + DIGITS;
const LOWER_NUM = LOWER + DIGITS;
const BECH32_UPPER = 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L';

/** `n` characters from `alphabet`; a string from an alphabet with digits always holds at least one digit. */
function fake(alphabet: string, n: number): string {
  for (;;) {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(random() * alphabet.length)];
    if (!/[0-9]/.test(alphabet) || /[0-9]/.test(s) || n < 8) return s;
  }
}
const digits = (n: number) => String(1 + Math.floor(random() * 9)) + fake(DIGITS, n - 1);
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const uuid = () =>
  [fake(HEX, 8), fake(HEX, 4), '4' + fake(HEX, 3), 'a' + fake(HEX, 3), fake(HEX, 12)].join('-');
const password = () => fake(B62, 6) + fake('!#%^*-_.', 2) + fake(B62, 6) + fake(DIGITS, 2);

function jwt(): string {
  const header = b64url({ alg: 'HS256', typ: 'JWT' });
  const payload = b64url({
    sub: fake(DIGITS, 10),
    name: 'Satchel Agent',
    iat: 1700000000 + Math.floor(random() * 1e7),
  });
  return `${header}.${payload}.${fake(B64URL, 43)}`;
}

function pemBody(lines: number, sep = '\n'): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(fake(B64, 64));
  return out.join(sep);
}

function pem(label: string, sep = '\n'): string {
  return `-----BEGIN ${label}-----${sep}${pemBody(8, sep)}${sep}${fake(B64, 20)}==${sep}-----END ${label}-----`;
}

// ---------------------------------------------------------------------------------------------------------
// Positives: for every rule, realistic text around a fake secret. `secret` is exactly what the rule must
// replace with the placeholder; `before` and `after` must survive.
// ---------------------------------------------------------------------------------------------------------

interface Positive {
  rule: string;
  before: string;
  secret: string;
  after: string;
}

const positives: Positive[] = [];
function pos(rule: string, before: string, secret: string, after: string): void {
  positives.push({ rule, before, secret, after });
}

// AI providers
pos(
  'openai-project-key',
  'export OPENAI_API_KEY=',
  `sk-proj-${fake(B64URL, 74)}T3BlbkFJ${fake(B64URL, 74)}`,
  ' and restart the agent',
);
pos('openai-project-key', '{"model": "gpt-4o", "apiKey": "', `sk-proj-${fake(B62, 48)}`, '"}');
pos(
  'openai-service-account-key',
  'OPENAI_KEY: ',
  `sk-svcacct-${fake(B64URL, 60)}T3BlbkFJ${fake(B64URL, 60)}`,
  '\nmodel: gpt-4.1',
);
pos(
  'openai-admin-key',
  'Admin key for usage export: ',
  `sk-admin-${fake(B64URL, 64)}`,
  ' (rotate monthly)',
);
pos(
  'openai-legacy-key',
  'openai.api_key = "',
  `sk-${fake(B62, 20)}T3BlbkFJ${fake(B62, 20)}`,
  '"\nprint(openai.Model.list())',
);
pos('sk-prefixed-key', 'DEEPSEEK_API_KEY=', `sk-${fake(HEX, 32)}`, '\n');
pos('sk-prefixed-key', 'the gateway accepted ', `sk-${fake(B62, 48)}`, ' as a bearer key');
pos(
  'anthropic-api-key',
  'ANTHROPIC_API_KEY=',
  `sk-ant-api03-${fake(B64URL, 93)}AA`,
  ' claude --print hi',
);
pos(
  'anthropic-api-key',
  'client = Anthropic(api_key="',
  `sk-ant-admin01-${fake(B64URL, 93)}AA`,
  '")',
);
pos('groq-api-key', 'Groq key: ', `gsk_${fake(B62, 52)}`, ', expires never');
pos('xai-api-key', 'XAI_API_KEY="', `xai-${fake(B62, 80)}`, '"');
pos(
  'openrouter-api-key',
  'Authorization header uses ',
  `sk-or-v1-${fake(HEX, 64)}`,
  ' for OpenRouter',
);
pos(
  'huggingface-token',
  'huggingface-cli login --token ',
  `hf_${fake(LETTERS, 34)}`,
  ' --add-to-git-credential',
);
pos('huggingface-token', 'HF_TOKEN=', `hf_${fake(LETTERS, 34)}`, '\n');
pos('replicate-api-token', 'export REPLICATE_API_TOKEN=', `r8_${fake(B62, 37)}`, '\n');
pos('perplexity-api-key', 'PERPLEXITY_KEY: ', `pplx-${fake(B62, 48)}`, '\n');
pos('langsmith-api-key', 'LANGCHAIN_KEY=', `lsv2_pt_${fake(HEX, 32)}_${fake(HEX, 10)}`, '\n');
pos('pinecone-api-key', 'pc = Pinecone(key="', `pcsk_${fake(B62, 6)}_${fake(B62, 60)}`, '")');

// cloud
pos(
  'aws-access-key-id',
  '[default]\naws_access_key_id = ',
  `AKIA${fake(BASE32, 16)}`,
  '\nregion = eu-west-1',
);
pos('aws-access-key-id', 'temporary creds ', `ASIA${fake(BASE32, 16)}`, ' expire in 1h');
pos('aws-access-key-id', 'id=', `ABIA${fake(BASE32, 16)}`, ';');
pos(
  'aws-secret-access-key',
  '[default]\naws_secret_access_key = ',
  fake(B64, 40),
  '\nregion = us-east-1',
);
pos('aws-secret-access-key', 'export AWS_SECRET_ACCESS_KEY=', fake(B62, 40), ' && aws s3 ls');
pos(
  'aws-secret-access-key',
  '{"Credentials": {"SecretAccessKey": "',
  fake(B64, 40),
  '", "Expiration": "2030-01-01"}}',
);
pos(
  'aws-sigv4-signature',
  'Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=',
  fake(HEX, 64),
  '\nHost: bucket.s3.amazonaws.com',
);
pos(
  'google-api-key',
  'const firebaseConfig = { apiKey: "',
  `AIza${fake(B64URL, 35)}`,
  '", projectId: "satchel" };',
);
pos(
  'google-api-key',
  'GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=',
  `AIza${fake(B62, 35)}`,
  ' HTTP/1.1',
);
pos(
  'google-oauth-access-token',
  '{"access_token": "',
  `ya29.a0${fake(B64URL, 150)}`,
  '", "expires_in": 3599}',
);
pos('google-oauth-client-secret', 'GOOGLE_CLIENT_SECRET=', `GOCSPX-${fake(B64URL, 28)}`, '\n');
pos(
  'google-oauth-refresh-token',
  '{"refresh_token": "',
  `1//0${fake(B64URL, 100)}`,
  '", "scope": "email"}',
);
pos(
  'firebase-fcm-key',
  'FCM_SERVER_KEY=',
  `AAAA${fake(B64URL, 7)}:APA91b${fake(B64URL, 134)}`,
  '\n',
);
pos(
  'azure-storage-account-key',
  'DefaultEndpointsProtocol=https;AccountName=satcheldev;AccountKey=',
  `${fake(B64, 86)}==`,
  ';EndpointSuffix=core.windows.net',
);
pos(
  'azure-shared-access-key',
  'Endpoint=sb://satchel.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=',
  `${fake(B64, 43)}=`,
  ';EntityPath=events',
);
pos(
  'azure-ad-client-secret',
  'AZURE_CLIENT_SECRET=',
  `${fake(B62, 3)}8Q~${fake(B62 + '_~.-', 33)}A`,
  '\nAZURE_TENANT_ID=common',
);
pos(
  'azure-ad-client-secret',
  'client secret value ',
  `${fake(B62, 3)}7Q~${fake(B62, 34)}`,
  ' copied from the portal',
);
pos('digitalocean-token', 'doctl auth init -t ', `dop_v1_${fake(HEX, 64)}`, '');
pos('digitalocean-token', 'refresh: ', `dor_v1_${fake(HEX, 64)}`, '\n');
pos('alibaba-access-key-id', 'ALIBABA_CLOUD_ACCESS_KEY_ID=', `LTAI${fake(B62, 20)}`, '\n');
pos(
  'databricks-token',
  'DATABRICKS_HOST=https://adb.example.net\nDATABRICKS_TOKEN=',
  `dapi${fake(HEX, 32)}`,
  '\n',
);
pos('vault-token', 'VAULT_TOKEN=', `hvs.${fake(B64URL, 90)}`, ' vault kv get secret/db');
pos('vault-token', 'batch token ', `hvb.${fake(B64URL, 120)}`, ' issued');
pos(
  'terraform-cloud-token',
  '{"credentials": {"app.terraform.io": {"token": "',
  `${fake(B62, 14)}.atlasv1.${fake(B64URL, 67)}`,
  '"}}}',
);
pos('pulumi-access-token', 'PULUMI_ACCESS_TOKEN=', `pul-${fake(HEX, 40)}`, '\n');
pos('flyio-token', 'FLY_API_TOKEN=', `fo1_${fake(B64URL, 43)}`, '\n');
pos('flyio-token', 'Authorization: FlyV1 ', `fm2_${fake(B64, 200)}`, '\n');
pos('heroku-api-key', 'HEROKU_API_KEY=', `HRKU-${fake(B64URL, 60)}`, '\n');
pos('netlify-token', 'netlify deploy --auth ', `nfp_${fake(B62, 36)}`, ' --prod');
pos('supabase-token', 'supabase login --token ', `sbp_${fake(HEX, 40)}`, '');
pos('supabase-token', 'SUPABASE_SERVICE_KEY: ', `sb_secret_${fake(B64URL, 40)}`, '\n');
pos('planetscale-token', 'PLANETSCALE_SERVICE_TOKEN=', `pscale_tkn_${fake(B64URL, 43)}`, '\n');
pos('doppler-token', 'DOPPLER_TOKEN=', `dp.pt.${fake(B62, 43)}`, ' doppler run -- npm start');
pos('doppler-token', 'service token ', `dp.st.prd.${fake(B62, 40)}`, ' for production');
pos(
  'tailscale-key',
  'tailscale up --authkey=',
  `tskey-auth-k${fake(B62, 11)}-${fake(B62, 32)}`,
  ' --ssh',
);
pos(
  'dynatrace-token',
  'DT_API_TOKEN=',
  `dt0c01.${fake(UPPER_NUM, 24)}.${fake(UPPER_NUM, 64)}`,
  '\n',
);
pos('newrelic-key', 'NEW_RELIC_API_KEY=', `NRAK-${fake(UPPER_NUM, 27)}`, '\n');
pos(
  'onepassword-service-account-token',
  'OP_SERVICE_ACCOUNT_TOKEN=',
  `ops_eyJ${fake(B64, 300)}`,
  '\nop read op://vault/item',
);

// code hosting, CI, registries
pos('github-pat', 'Run `export GITHUB_TOKEN=', `ghp_${fake(B62, 36)}`, '` before pushing.');
pos('github-pat', 'X-GitHub-Event: push', `ghp_${fake(B62, 36)}`, '\n'); // glued to a word (review s61b)
pos(
  'github-pat',
  'git clone https://x-access-token:',
  `ghp_${fake(B62, 36)}`,
  '@github.com/org/repo.git',
);
pos('github-oauth-token', 'oauth_token: ', `gho_${fake(B62, 36)}`, '\nuser: octocat');
pos('github-app-token', 'GITHUB_TOKEN (installation): ', `ghs_${fake(B62, 36)}`, '.');
pos('github-app-token', 'user-to-server ', `ghu_${fake(B62, 36)}`, ' granted');
pos('github-refresh-token', 'refresh with ', `ghr_${fake(B62, 76)}`, ' before expiry');
pos(
  'github-fine-grained-pat',
  'GH_TOKEN=',
  `github_pat_${fake(B62, 22)}_${fake(B62, 59)}`,
  ' gh pr list',
);
pos('gitlab-pat', 'PRIVATE-TOKEN: ', `glpat-${fake(B64URL, 20)}`, '\n');
pos('gitlab-pat', 'token ', `glpat-${fake(B64URL, 27)}.01.${fake(LOWER_NUM, 9)}`, ' created');
pos(
  'gitlab-runner-token',
  'gitlab-runner register --token ',
  `glrt-${fake(B64URL, 20)}`,
  ' --url https://gitlab.example.com',
);
pos('gitlab-deploy-token', 'deploy token ', `gldt-${fake(B64URL, 20)}`, ' for registry pulls');
pos('gitlab-token', 'curl -X POST -F token=', `glptt-${fake(HEX, 40)}`, ' -F ref=main');
pos(
  'gitlab-token',
  'CI_JOB_TOKEN is like ',
  `glcbt-${fake(HEX, 2)}_${fake(B64URL, 20)}`,
  ' in the job log',
);
pos('gitlab-token', 'oauth app secret ', `gloas-${fake(HEX, 64)}`, '');
pos('gitlab-token', 'feed: ', `glft-${fake(B64URL, 20)}`, ', scim: ok');
pos('npm-token', '//registry.npmjs.org/:_authToken=', `npm_${fake(B62, 36)}`, '\n');
pos(
  'npmrc-auth',
  '//registry.npmjs.org/:_auth=',
  b64(`satchel:${fake(B62, 24)}`),
  '\nalways-auth=true',
);
pos(
  'pypi-token',
  '[pypi]\n  username = __token__\n  password = ',
  `pypi-AgEIcHlwaS5vcmc${fake(B64URL, 150)}`,
  '\n',
);
pos('pypi-token', 'twine upload -p ', `pypi-AgENdGVzdC5weXBpLm9yZw${fake(B64URL, 120)}`, ' dist/*');
pos('rubygems-api-key', ':rubygems_api_key: ', `rubygems_${fake(HEX, 48)}`, '\n');
pos(
  'nuget-api-key',
  'dotnet nuget push pkg.nupkg -k ',
  `oy2${fake(LOWER_NUM, 43)}`,
  ' -s https://api.nuget.org/v3/index.json',
);
pos(
  'dockerhub-token',
  'echo ',
  `dckr_pat_${fake(B64URL, 27)}`,
  ' | docker login -u satchel --password-stdin',
);
pos(
  'docker-config-auth',
  '{"auths": {"https://index.docker.io/v1/": {"auth": "',
  b64(`satchel:${fake(B62, 24)}`),
  '"}}}',
);
pos('buildkite-token', 'BUILDKITE_API_TOKEN=', `bkua_${fake(HEX, 40)}`, '\n');
pos('sourcegraph-token', 'SRC_ACCESS_TOKEN=', `sgp_${fake(HEX, 16)}_${fake(HEX, 40)}`, '\n');
pos('postman-api-key', 'X-Api-Key: ', `PMAK-${fake(HEX, 24)}-${fake(HEX, 34)}`, '\n');
pos('prefect-api-key', 'prefect cloud login -k ', `pnu_${fake(B62, 36)}`, '');
pos(
  'atlassian-api-token',
  'JIRA_API_TOKEN=',
  `ATATT3xFfGF0${fake(B64URL, 170)}=${fake(HEX_UPPER, 8)}`,
  '\n',
);
pos('linear-api-key', 'LINEAR_API_KEY=', `lin_api_${fake(B62, 40)}`, '\n');
pos('figma-token', 'X-Figma-Token: ', `figd_${fake(B64URL, 40)}`, '\n');
pos('contentful-token', 'contentful login --management-token ', `CFPAT-${fake(B64URL, 43)}`, '');
pos(
  'sentry-org-token',
  'SENTRY_AUTH_TOKEN=',
  `sntrys_${b64(JSON.stringify({ iat: 1700000000, url: 'https://sentry.io', org: 'satchel' })).replace(/=+$/, '')}_${fake(B64, 43)}`,
  '\n',
);
pos('sentry-user-token', 'sentry-cli --auth-token ', `sntryu_${fake(HEX, 64)}`, ' releases list');
pos('grafana-cloud-token', 'GRAFANA_CLOUD_TOKEN=', `glc_${fake(B64, 120)}==`, '\n');
pos(
  'grafana-service-account-token',
  'Authorization header value: ',
  `glsa_${fake(B62, 32)}_${fake(HEX, 8)}`,
  ' (grafana)',
);

// messaging, payments, SaaS
pos(
  'slack-bot-token',
  'SLACK_BOT_TOKEN=',
  `xoxb-${digits(12)}-${digits(13)}-${fake(B62, 24)}`,
  ' node bot.js',
);
pos(
  'slack-user-token',
  'user token ',
  `xoxp-${digits(12)}-${digits(12)}-${digits(13)}-${fake(HEX, 32)}`,
  ' has admin scope',
);
pos('slack-legacy-token', 'legacy: ', `xoxs-${digits(12)}-${digits(12)}-${fake(HEX, 64)}`, '');
pos('slack-legacy-token', 'workspace app ', `xoxa-2-${digits(12)}-${fake(B62, 40)}`, ' revoked');
pos('slack-config-token', 'config token ', `xoxe.xoxp-1-${fake(B62, 150)}`, ' rotated');
pos('slack-config-token', 'refresh token ', `xoxe-1-${fake(B62, 140)}`, ' rotated');
pos(
  'slack-app-token',
  'SLACK_APP_TOKEN=',
  `xapp-1-A${fake(UPPER_NUM, 10)}-${digits(13)}-${fake(HEX, 64)}`,
  '\n',
);
pos(
  'slack-webhook-url',
  'curl -X POST https://hooks.slack.com/services/',
  `T${fake(UPPER_NUM, 8)}/B${fake(UPPER_NUM, 8)}/${fake(B62, 24)}`,
  ' -d \'{"text":"deployed"}\'',
);
pos(
  'discord-webhook-url',
  'WEBHOOK=https://discord.com/api/webhooks/' + digits(18) + '/',
  fake(B64URL, 68),
  '\n',
);
pos(
  'discord-bot-token',
  'DISCORD_BOT_TOKEN=',
  `MT${fake(B64URL, 24)}.${fake(B64URL, 6)}.${fake(B64URL, 38)}`,
  '\n',
);
pos('discord-bot-token', '{"discordClientSecret": "', fake(B64URL, 32), '"}');
pos(
  'teams-webhook-url',
  'Teams: https://satchel.webhook.office.com/webhookb2/',
  `${uuid()}@${uuid()}/IncomingWebhook/${fake(HEX, 32)}/${uuid()}`,
  ' (channel #ops)',
);
pos(
  'telegram-bot-token',
  'curl https://api.telegram.org/bot',
  `${digits(10)}:AA${fake(B64URL, 33)}`,
  '/getMe',
);
pos('telegram-bot-token', 'TELEGRAM_BOT_TOKEN=', `${digits(9)}:AA${fake(B64URL, 33)}`, '\n');
pos('twilio-api-key', 'TWILIO_API_KEY=', `SK${fake(HEX, 32)}`, '\nTWILIO_API_SECRET_NAME=x');
pos('twilio-api-key', 'key sid ', `SK${fake(HEX, 32)}`, ' created');
pos('twilio-auth-token', 'TWILIO_AUTH_TOKEN=', fake(HEX, 32), '\n');
pos('twilio-auth-token', '{"twilioAuthToken": "', fake(HEX, 32), '"}');
pos('sendgrid-api-key', 'SENDGRID_API_KEY=', `SG.${fake(B64URL, 22)}.${fake(B64URL, 43)}`, '\n');
pos(
  'mailgun-api-key',
  "curl -s --user 'api:",
  `key-${fake(HEX, 32)}`,
  "' https://api.mailgun.net/v3/domains",
);
pos('mailchimp-api-key', 'MAILCHIMP_KEY=', `${fake(HEX, 32)}-us12`, '\n');
pos('stripe-secret-key', 'stripe.api_key = "', `sk_live_${fake(B62, 99)}`, '"');
pos('stripe-secret-key', 'test mode key ', `sk_test_${fake(B62, 24)}`, ' in CI');
pos('stripe-restricted-key', 'STRIPE_RK=', `rk_live_${fake(B62, 99)}`, '\n');
pos('stripe-webhook-secret', 'STRIPE_WEBHOOK_SECRET=', `whsec_${fake(B64, 32)}`, '\n');
pos('square-access-token', 'SQUARE_TOKEN=', `sq0atp-${fake(B64URL, 22)}`, '\n');
pos('square-oauth-secret', 'square app secret ', `sq0csp-${fake(B64URL, 43)}`, '');
pos('shopify-token', 'X-Shopify-Access-Token: ', `shpat_${fake(HEX, 32)}`, '\n');
pos('shopify-token', 'shared secret ', `shpss_${fake(HEX, 32)}`, '');
pos('notion-token', 'NOTION_TOKEN=', `ntn_${digits(11)}${fake(B62, 35)}`, '\n');
pos('notion-token', 'integration secret ', `secret_${fake(B62, 43)}`, ' (internal)');
pos(
  'mapbox-secret-token',
  'MAPBOX_SECRET=',
  `sk.${b64url({ u: 'satchel', a: fake(LOWER_NUM, 25) })}.${fake(B64URL, 22)}`,
  '\n',
);
pos('adobe-client-secret', 'ADOBE_CLIENT_SECRET=', `p8e-${fake(B64URL, 32)}`, '\n');

// formats
pos(
  'age-secret-key',
  '# created: 2024-01-01\n# public key: age1example\n',
  `AGE-SECRET-KEY-1${fake(BECH32_UPPER, 58)}`,
  '\n',
);
pos('jwt', 'Authorization: Bearer ', jwt(), '\nAccept: application/json');
pos('jwt', 'Cookie: session=', jwt(), '; theme=dark');
pos(
  'private-key-block',
  'Here is the deploy key:\n',
  pem('RSA PRIVATE KEY'),
  '\nUse it carefully.',
);
pos(
  'private-key-block',
  '{"type": "service_account", "private_key": "',
  pem('PRIVATE KEY', '\\n'),
  '\\n", "client_email": "a@b.iam"}',
);
pos('private-key-block', 'id_ed25519:\n', pem('OPENSSH PRIVATE KEY'), '\n');
pos('private-key-block', 'gpg --export-secret-keys output:\n', pem('PGP PRIVATE KEY BLOCK'), '\n');
pos(
  'private-key-block-truncated',
  '{"key": "',
  `-----BEGIN RSA PRIVATE KEY-----\\n${pemBody(5, '\\n')}\\n${fake(B64, 30)}`,
  '"}',
);
pos(
  'private-key-block-truncated',
  'the tool output was cut:\n',
  `-----BEGIN EC PRIVATE KEY-----\n${pemBody(3)}\n${fake(B64, 12)}`,
  '',
);

pos(
  'private-key-block-tail',
  'read_file deploy.pem (offset 14):\n',
  `${pemBody(6)}\n${fake(B64, 20)}==`,
  '\n-----END RSA PRIVATE KEY-----\n',
);
pos(
  'private-key-block-tail',
  '{"content": "',
  `${pemBody(4, '\\n')}\\n${fake(B64, 24)}`,
  '\\n-----END PRIVATE KEY-----"}',
);
pos(
  'name-value-pair',
  '        env:\n        - name: DB_PASSWORD\n          value: ',
  `${fake(B62, 12)}#${fake(B62, 6)}`,
  '\n        - name: LOG_LEVEL\n          value: info\n',
);
pos(
  'name-value-pair',
  '"environment": [{"name": "STRIPE_API_KEY", "value": "',
  fake(B62, 28),
  '"}]',
);

pos('name-value-pair', '{"key": "api_key", "val": "', fake(B62, 24), '"}'); // review s59l
// Review s59l: a table's cells, a Terraform variable's default, Markdown bold names (full-width forms:
// review-s59l-full-width.test.ts).
pos('table-cell-secret', '| Name | Value |\n|---|---|\n| DB_PASSWORD | ', 'Xk9mQ2vLp7zR4t', ' |\n');
pos('table-cell-secret', '| **Password** | `', 'Qw7eRt5yUi3o', '` |');
pos('table-cell-secret', '| DB_PASSWORD | "', 'Xk9mQ2vLp7zR4t', '" |'); // quoted (review s61f)
pos('table-cell-secret', 'NAME\tTYPE\nDB_PASSWORD\t', 'Zx8cVb6nMa4s', '\tOpaque\n');
pos(
  'terraform-variable-default',
  'variable "db_password" {\n  type      = string\n  sensitive = true\n  default   = "',
  'P4ss#w0rd-Xk9m',
  '"\n}\n',
);
// Blocks before the default (review s61f).
pos(
  'terraform-variable-default',
  'variable "admin_password" {\n  type = object({ a = string })\n  description = "see ${path.module}"\n' +
    '  validation {\n    condition = length(var.admin_password) >= 12\n    error_message = "{12}"\n  }\n' +
    '  default = "',
  'Zq8#wE3rT6yU',
  '"\n}\n',
);
pos('generic-password', '- **Username**: admin\n- **Password**: ', 'Xk9mQ2vLp7zR', '\n');
pos('generic-password', '**Password:** ', 'Xk9mQ2vLp7zR', '\n');

// URLs and HTTP
pos(
  'url-credentials',
  'DATABASE_URL=postgres://satchel:',
  `${fake(B62, 12)}%21${fake(B62, 4)}`,
  '@db.internal:5432/sessions',
);
pos(
  'url-credentials',
  'mongodb+srv://admin:',
  fake(B62, 16),
  '@cluster0.example.net/test?retryWrites=true',
);
pos('url-credentials', 'REDIS_URL=redis://:', fake(B62, 20), '@cache:6379/0');
pos('url-credentials', 'amqp://guest:', fake(B62, 12), '@rabbit.internal:5672/');
pos(
  'url-credentials',
  'git remote add origin https://deploy:',
  fake(B62, 18),
  '@git.example.com/repo.git',
);
pos(
  'url-query-secret',
  'GET https://api.example.com/v1/files?access_token=',
  fake(B64URL, 40),
  '&page=2 HTTP/1.1',
);
pos(
  'url-query-secret',
  'https://blob.example.net/c/f.txt?sv=2021-08-06&se=2030-01-01&sp=r&sig=',
  `${fake(B62, 30)}%2B${fake(B62, 10)}%3D`,
  '',
);
pos(
  'url-query-secret',
  'https://example.com/login?user=bob&password=',
  `${fake(B62, 10)}%23${fake(B62, 4)}`,
  '&next=%2Fhome',
);
pos(
  'url-query-secret',
  'https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Security-Token=',
  fake(B64URL, 300),
  '&X-Amz-Expires=300',
);
pos(
  'url-query-secret',
  'callback?code=abc&client_secret=',
  fake(B64URL, 32),
  '&grant_type=authorization_code',
);
pos(
  'url-query-key',
  'https://www.googleapis.com/youtube/v3/search?part=snippet&key=',
  fake(B62, 32),
  ' returned 403',
);
pos(
  'authorization-header',
  'curl -H "Authorization: Bearer ',
  fake(B64URL, 40),
  '" https://api.example.com/v1/me',
);
pos(
  'authorization-header',
  '{"headers": {"Authorization": "Basic ',
  b64(`admin:${fake(B62, 16)}`),
  '"}}',
);
pos(
  'authorization-header',
  "requests.get(url, headers={'Authorization': 'token ",
  fake(B62, 40),
  "'})",
);
pos(
  'authorization-header',
  'Authorization: Bot ',
  `${fake(B64URL, 26)}.${fake(B64URL, 6)}.${fake(B64URL, 38)}`,
  '\n',
);
pos('authorization-header-bare', 'Authorization: ', fake(B62, 40), '\nAccept: */*');
pos('bearer-token', 'the request sent Bearer ', fake(B64URL, 48), ' and got 401');
pos('bearer-token', 'token_type=bearer, value: Bearer ', `${fake(B62, 30)}.${fake(B62, 20)}`, '.');

// command lines and config files
pos('curl-user-credentials', 'curl -u deploy:', password(), ' https://ci.example.com/api/json');
pos(
  'curl-user-credentials',
  'curl --user "admin:',
  fake(B62, 16),
  '" -X POST https://registry.example.com',
);
pos('cli-secret-flag', 'mysqldump --user backup --password ', password(), ' --all-databases');
pos('cli-secret-flag', 'mycli --api-token=', fake(B62, 32), ' list');
pos('cli-secret-flag', "tool deploy --client-secret '", fake(B64URL, 32), "' --region eu");
pos('netrc-password', 'machine api.example.com login bot password ', password(), '\n');
pos('netrc-password', 'machine git.example.com\n  login deploy\n  password ', fake(B62, 20), '\n');
pos(
  'generic-xml-secret',
  '<server><id>releases</id><username>deploy</username><password>',
  password(),
  '</password></server>',
);
pos('generic-xml-secret', '<add key="x"/><ApiKey>', fake(B62, 32), '</ApiKey>');
pos('generic-password', 'DB_HOST=db\nDB_PASSWORD=', password(), '\nDB_PORT=5432');
pos('generic-password', 'database:\n  user: app\n  password: ', password(), '\n  pool: 5');
pos('generic-password', '{"username": "app", "password": "', password(), '", "remember": true}');
pos('generic-password', 'passwd: ', fake(B62, 12), '\n');
pos('generic-password', 'PGPASSWORD=', fake(B62, 14), ' psql -h db -U app');
pos('generic-password', 'smtp_password = ', `${fake(LOWER, 6)}${fake(DIGITS, 3)}`, '\n');
pos('generic-password', 'passphrase := "', 'correct horse battery staple', '"');
pos('generic-password', 'const config = { dbPassword: "', password(), '", port: 5432 };');
pos('generic-secret', '{"clientSecret": "', fake(B64URL, 32), '"}');
pos('generic-secret', 'client_secret = "', fake(B64URL, 40), '"');
pos('generic-secret', 'JWT_SECRET=', fake(B62, 48), '\n');
pos('generic-secret-key', "SECRET_KEY = '", `django-insecure-${fake(B64URL, 40)}`, "'");
pos('generic-secret-key', 'secretKey: ', fake(B62, 32), '\n');
pos('generic-token', 'export FOO_TOKEN=', fake(B62, 32), ' && ./run.sh');
pos('generic-token', 'auth_token: ', fake(B64URL, 40), '\nretries: 3');
pos('generic-token', 'token = "', fake(B62, 40), '"');
pos('generic-token', '{"accessToken": "', fake(B64URL, 40), '", "tokenType": "bearer"}');
pos('generic-token', 'X-Auth-Token: ', uuid(), '\n');
pos('generic-api-key', '{"api_key": "', fake(B62, 32), '"}');
pos('generic-api-key', 'X-API-Key: ', fake(B62, 40), '\r\n');
pos('generic-api-key', 'OPENWEATHER_APIKEY=', fake(HEX, 32), '\n');
pos('generic-access-key', 'MINIO_SECRET_ACCESS_KEY=', fake(B62, 24), '\n');
pos('generic-access-key', '{"accessKey": "', fake(B62, 24), '"}');
pos('generic-private-key', 'PRIVATE_KEY=', `0x${fake(HEX, 64)}`, '\n');
pos('generic-private-key', '{"privateKey": "', fake(HEX, 64), '"}');

// more provider formats (issue 11)
pos('langfuse-secret-key', 'LANGFUSE_SECRET_KEY=', `sk-lf-${uuid()}`, '\n');
pos('elevenlabs-api-key', 'xi-api-key header: ', `sk_${fake(HEX, 48)}`, ' (ElevenLabs)');
pos(
  'aws-session-token',
  'temporary session ',
  `IQoJb3JpZ2luX2Vj${fake(B64, 400)}`,
  ' expires at 12:00',
);
pos('aws-session-token-assignment', '[prod]\naws_session_token = ', fake(B64, 300), '\n');
pos('tencent-secret-id', 'SecretId: ', `AKID${fake(B62, 32)}`, '\n');
pos(
  'cloudflare-origin-ca-key',
  'origin CA key ',
  `v1.0-${fake(HEX, 24)}-${fake(HEX, 146)}`,
  ' for the API',
);
pos(
  'azure-storage-keys-list',
  '[{"keyName": "key1", "permissions": "FULL", "value": "',
  b64(fake(B62, 64)),
  '"}]',
);
pos('launchdarkly-key', 'ldClient = init("', `sdk-${uuid()}`, '")');
pos(
  'sonarqube-token',
  'sonar-scanner -Dsonar.token=',
  `squ_${fake(HEX, 40)}`,
  ' -Dsonar.host.url=https://sonar.acme.io',
);
pos('scaleway-access-key', 'SCW access key ', `SCW${fake(UPPER_NUM, 17)}`, ' created');
pos('render-api-key', 'render key ', `rnd_${fake(B62, 32)}`, '.');
pos(
  'jfrog-token',
  'jf config add --access-token ',
  `cmVmdGtuOjAxOj${fake(B62, 50)}`,
  ' --url https://acme.jfrog.io',
);
pos('hubspot-private-app-token', 'hubspot token ', `pat-na1-${uuid()}`, ' in use');
pos(
  'airtable-pat',
  'Authorization header value ',
  `pat${fake(B62, 14)}.${fake(HEX, 64)}`,
  ' for Airtable',
);
pos(
  'twitter-bearer-token',
  'bearer for X: ',
  `AAAAAAAAAAAAAAAAAAAAA${fake(B62, 30)}%3D${fake(B62, 50)}`,
  '\n',
);
pos('clickup-api-token', 'ClickUp ', `pk_${digits(8)}_${fake(UPPER_NUM, 32)}`, ' token');
pos(
  'dropbox-access-token',
  'dropbox short-lived token ',
  `sl.${fake(B64URL, 140)}`,
  ' expires in 4h',
);
pos(
  'circleci-token',
  'circleci setup --token ',
  `CCIPAT_${fake(B62, 22)}_${fake(HEX, 40)}`,
  ' --host https://circleci.com',
);
pos(
  'braintree-access-token',
  'gateway = Gateway(access_token="',
  `access_token$production$${fake(LOWER_NUM, 16)}$${fake(HEX, 32)}`,
  '")',
);
pos(
  'bitbucket-app-password',
  'git clone https://me:',
  `ATBB${fake(B62, 32)}${fake(HEX_UPPER, 8)}`,
  '@bitbucket.org/acme/repo.git',
);
pos('square-or-meta-access-token', 'square prod token ', `EAAA${fake(B64URL, 60)}`, ' rotated');
pos(
  'discord-bot-token-format',
  "client.run('",
  `${b64(digits(19)).replace(/=+$/, '')}.${fake(B64URL, 6)}.${fake(B64URL, 38)}`,
  "')",
);
pos('laravel-app-key', '$ php artisan key:generate --show\n', `base64:${b64(fake(B62, 32))}`, '\n');
pos(
  'kubeconfig-client-key-data',
  '  user:\n    client-key-data: ',
  b64(pem('RSA PRIVATE KEY')),
  '\n',
);
pos('base64-private-key-block', 'tls.key: ', b64(pem('PRIVATE KEY')), '\n');
pos(
  'putty-private-key',
  'PuTTY-User-Key-File-3: ssh-rsa\nPrivate-Lines: 3\n',
  `${fake(B64, 64)}\n${fake(B64, 64)}\n${fake(B64, 40)}`,
  '\nPrivate-MAC: 00',
);
pos('http-cookie', 'GET / HTTP/1.1\r\nCookie: sessionid=', fake(LOWER_NUM, 32), '; theme=dark\r\n');
pos('curl-cookie', 'curl -b "csrftoken=', fake(B62, 64), '" https://app.acme.io/api/me');
pos('cookie-jar', '.acme.io\tTRUE\t/\tTRUE\t1767225600\tremember_token\t', fake(B64URL, 40), '\n');
pos(
  'http-secret-header',
  'curl -H "x-functions-key: ',
  `${fake(B64URL, 54)}==`,
  '" https://fn.acme.io/api/x',
);
pos('cli-key-flag', 'az storage blob list --account-key ', b64(fake(B62, 64)), ' -c logs');
pos(
  'url-query-code',
  'https://acme-fn.azurewebsites.net/api/ingest?code=',
  `${fake(B64URL, 54)}==`,
  ' returned 202',
);
pos('xml-key-value-secret', '<add key="ClearTextPassword" value="', password(), '" />');
pos('php-define-secret', "define('AUTH_KEY', '", fake(B62, 40), "');");
pos('mysql-password-flag', 'mysql -h db -u root -p', password(), ' app < dump.sql');
pos('cli-password-short-flag', 'redis-cli -h cache -a ', password(), ' INFO');
pos(
  'echo-piped-password',
  "echo '",
  password(),
  "' | docker login -u acme --password-stdin ghcr.io",
);
pos(
  'openssl-pass-argument',
  'openssl pkcs12 -export -in c.pem -out b.p12 -passout pass:',
  password(),
  ' -name x',
);
pos('redis-conf-password', 'bind 0.0.0.0\nrequirepass ', password(), '\n');
pos('pgpass-line', '# ~/.pgpass\ndb.internal:5432:app:app:', password(), '\n');
pos('cli-set-secret-name', 'npm config set //npm.acme.io/:_authToken ', fake(B62, 24), '\n');
pos('cookie-list', '{"cookies": [{"name": "sid", "value": "', fake(B62, 32), '", "path": "/"}]}');
pos(
  'seed-phrase',
  'MNEMONIC="',
  'orbit velvet lumber crisp naive dolphin shrug ankle wealth spoon fever cactus',
  '"',
);
pos('rpc-url-key', 'https://eth-mainnet.g.alchemy.com/v2/', fake(B62, 32), '\n');
pos('wifi-psk', 'network={\n  ssid="office"\n  psk="', password(), '"\n}');
pos(
  'env-password-assignment',
  'POSTGRES_USER=app\nPOSTGRES_PASSWORD=',
  `${fake(B62, 6)}*[~${fake(B62, 4)}{x}&${fake(DIGITS, 2)}`,
  '\n',
);
pos(
  'env-secret-assignment',
  'SESSION_SECRET=',
  `${fake(B62, 8)}#[${fake(B62, 8)}]{${fake(B62, 4)}`,
  '\n',
);
pos('env-key-assignment', 'ENCRYPTION_KEY=', `${fake(B62, 12)}*[~${fake(B62, 8)}`, '\n');
pos('generic-key', 'storage:\n  accountKey: ', b64(fake(B62, 64)), '\n');
pos('generic-pass', 'all:\n  vars:\n    ansible_become_pass: ', password(), '\n');
pos('generic-pat', '{"azureDevopsPat": "', fake('abcdefghijklmnopqrstuvwxyz234567', 52), '"}');
pos('generic-password', '2026-03-04 INFO admin password: ', 'abc,def,ghi!', ' was set');
// Commas in a row inside a typed password (left at stop 52: the value ended at `,,` and, an identifier
// before it, was kept whole).
pos('generic-password', 'password=', 'GDSqo,,[0PvUc', '');
pos('generic-pass', 'DB_PASS=', 'a1,,,b2', ' ok');
pos(
  'url-credentials',
  'CELERY_BROKER_URL=amqp://worker:',
  `${fake(B62, 6)}*#${fake(B62, 4)}$${fake(DIGITS, 2)}`,
  '@rabbit:5672//',
);
pos('authorization-header', 'Authorization: SSWS ', `00${fake(B64URL, 40)}`, '\n');
pos('password-in-prose', 'My staging db password is ', password(), ' if you need to log in.');
pos('secret-in-prose', 'the signing key is now ', fake(HEX, 32), '.');
pos('sql-identified-by', "CREATE USER 'app'@'%' IDENTIFIED BY '", password(), "';");
pos('sql-password-literal', "ALTER ROLE app WITH LOGIN PASSWORD '", password(), "';");
// Review s68e: a CRLF pgpass.conf entry past a blank line; a GitHub variable only when mixed-case as a key.
pos(
  'pgpass-line',
  'type pgpass.conf\r\n# prod\r\n\r\n# staging\r\nh2:5432:app:app:',
  password(),
  '\r\n',
);
pos(
  'cli-password-short-flag',
  'gh variable set NPM_TOKEN --body ',
  fake(B62, 24),
  ' --repo acme/api',
);

// ---------------------------------------------------------------------------------------------------------
// Near-misses: must come back unchanged, with a count of 0.
// ---------------------------------------------------------------------------------------------------------

const nearMisses: string[] = [
  // Review s59l: tables whose cells are types, headers and words; a Terraform default that is a reference.
  '| password | string | The user password |',
  // Type names in a table (review s61f).
  '| token | Uint8Array |',
  '| api_key | Base64String |',
  '| secret | OAuth2Token |',
  'token\tInt32Array\n',
  '| password | uint8Array |',
  '| token | logprob |\n| Hello | -0.1 |',
  '| Token | Type | Count |',
  'token\tcount\nHello\t3',
  '| secret | `${{ secrets.DEPLOY_KEY }}` |',
  'variable "db_password" {\n  default = "${var.fallback}"\n}',
  'variable "password_length" {\n  default = "16"\n}',
  '{"key": "color", "val": "Xk9mQ2vLp7zRt4"}',
  '**password**: must be 8 characters',
  '- **Password**: the one from the vault',
  '\u30D1\u30B9\u30EF\u30FC\u30C9\u306F\u5909\u66F4\u3057\u307E\u3057\u305F\uFF1A\u78BA\u8A8D\u6E08\u307F',
  `request id ${uuid()} failed after 3 retries`,
  `commit ${fake(HEX, 40)} (HEAD -> main, origin/main)`,
  `"integrity": "sha512-${fake(B64, 86)}=="`,
  `image: ghcr.io/org/app@sha256:${fake(HEX, 64)}`,
  'pip install scikit-learn; import sklearn  # not sk-learn, that package is deprecated',
  'a risk-based approach for the task-runner and the desk-top build',
  'passwordless: true',
  'auth:\n  passwordless_login: enabled\n  password_reset_url: https://example.com/reset',
  'token_count: 12',
  'max_tokens=4096, temperature=0.2',
  '{"usage": {"prompt_tokens": 1200, "completion_tokens": 345, "total_tokens": 1545}}',
  'tokenizer = AutoTokenizer.from_pretrained("gpt2")',
  `ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ${fake(B64, 300)} dev@laptop`,
  `-----BEGIN PUBLIC KEY-----\n${pemBody(6)}\n-----END PUBLIC KEY-----`,
  `-----BEGIN CERTIFICATE-----\n${pemBody(10)}\n-----END CERTIFICATE-----`,
  'password=${DB_PASSWORD}',
  'api_key: "{{ secrets.API_KEY }}"',
  'token: ${{ secrets.GITHUB_TOKEN }}',
  'token = os.environ["TOKEN"]',
  'apiKey: process.env.API_KEY',
  'exports.getToken = function () {}',
  'const token = getToken();',
  'password: <your-password>',
  'secret=xxxx',
  '"password": null',
  'password = None',
  '{"token": true, "secret": false}',
  'token = request_token',
  'const session = { token: accessToken, user };',
  'interface Credentials { password: string; token?: string }',
  'if (password.length < 8) throw new Error("password too short");',
  'def login(user, password):\n    return check(user, password)',
  'The sk is short; hf_ and ghp_ are just prefixes, and xoxb- starts Slack bot tokens.',
  '/usr/local/share/tokens/secret_store.py',
  'https://example.com/path?page=2&sort=asc',
  'git@github.com:org/repo.git',
  'postgres://localhost:5432/db',
  'https://user@example.com/private',
  `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA${fake(B64, 800)}`,
  'Bearer tokens are sent in the Authorization header.',
  'Authorization: Bearer ${TOKEN}',
  'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com',
  'Authorization: Bearer <token>',
  'echo "$PW" | docker login --password-stdin -u satchel',
  'git push -u origin main',
  'docker run -u 1000:1000 node:20',
  'secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>',
  `eyJhbGciOiJIUzI1NiJ9 is just a base64 header`,
  'password = input("Password: ")',
  'print("token: " + token)',
  'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20240101T000000Z&X-Amz-Expires=300',
  'AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID}',
  'kind: Secret\nmetadata:\n  name: db-credentials',
  'password=%DB_PASSWORD%',
  'token: "[REDACTED]"',
  'Asia and Africa; the ACCA exam; AKIA is a prefix',
  '{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "[PAD]", "sep_token": "<|im_end|>"}',
  'tokenizer.pad_token = tokenizer.eos_token',
  'SELECT id FROM users WHERE name = :name AND password = :password',
  'const schema = z.object({ password: z.string().min(8), token: z.string() });',
  'secret = secrets.token_hex(32)',
  'api_key = "your-api-key-here"',
  'headers = {"Authorization": f"Bearer {api_key}"}',
  'headers["Authorization"] = "Bearer " + os.environ["TOKEN"]',
  'curl http://[::1]:8080/health',
  'MYSQL_ROOT_PASSWORD: example',
  'Password: hashedPassword,',
  '{"logprobs": [{"token": "Understanding", "logprob": -0.12}, {"token": "Hello, world", "logprob": -1.5}]}',
  'permissions:\n  id-token: write\n  contents: read',
  '{"usage": {"input_tokens": 1234, "cache_creation_input_tokens": 0}, "token": 50256}',
  // issue 11: placeholders, documented examples, references, base64 of ordinary text
  'STRIPE_SECRET_KEY=sk_test_your_key_here',
  'TELEGRAM_BOT_TOKEN=123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11',
  'aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  '[database]\npassword = %(DB_PASSWORD)s',
  'DB_PASSWORD=op://Engineering/db/password',
  `{"content": "${b64('The quick brown fox jumps over the lazy dog, then naps in the sun.')}", "encoding": "base64"}`,
  `GET /search?state=${b64url({ redirect: '/home', page: 2 })} HTTP/1.1`,
  '{"NextToken": "eyJ2IjoxLCJjIjoiNzU1MTg2In0=", "nextPageToken": "v6qJLOQEbaOAxFVxQbesNRp0"}',
  'Cookie: _ga=GA1.2.3788172769.4671521503; theme=dark; lang=en-US',
  'PUBLIC_KEY=MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE1234abcd\nSORT_KEY=created_at',
  '$ pwd\n/home/dev/project\n$ PWD=/tmp make build',
  'git checkout -b feature/cookie-banner',
  'password: z.string().min(8)',
  'The password is incorrect. The token is expired; the key is rotated every 90 days (8+ characters).',
  'The shortcut key is Ctrl+Shift+P; the cache key is user:1234:profile:v2.',
  '{"encryptionKey": "arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-4f50-4617-a829-3b4c5d6e7f80"}',
  `data:image/png;base64,${fake(B64, 60)}/EAAB${fake(B62, 70)}+${fake(B64, 20)}`,
  // Review s68e: ordinary values given to setting commands, prose under a cookies key.
  'gh variable set AWS_REGION --body eu-west-1',
  'git config --global user.signingkey 3AA5C34371567BD2',
  'set -x SSH_AUTH_SOCK /run/user/1000/gnupg/S.gpg-agent.ssh',
  'gcloud config set auth/impersonate_service_account deployer@acme-prod-42.iam.gserviceaccount.com',
  'echo "Deploying v1.2.3" | tee -a deploy.log && wrangler secret put API_KEY < key.txt',
  '{"cookies": {"description": "Functionality cookies remember your choices", "encoding": "base64url"}}',
];

// ---------------------------------------------------------------------------------------------------------

const byId = new Map(rules.map((r) => [r.id, r]));
const redactor = createRedactor(rules);
const textOf = (p: Positive) => p.before + p.secret + p.after;
const label = (p: Positive) => `${p.rule}: ${JSON.stringify(textOf(p)).slice(0, 90)}`;

/** What a rule's pattern captures at each occurrence of its keywords (no engine: the table alone). */
function captures(rule: Rule, text: string): string[] {
  const lower = text.toLowerCase();
  const found: string[] = [];
  for (const keyword of rule.keywords) {
    for (let k = lower.indexOf(keyword); k !== -1; k = lower.indexOf(keyword, k + 1)) {
      rule.pattern.lastIndex = k;
      const m = rule.pattern.exec(text);
      const value = m?.[rule.group ?? 0];
      if (value !== undefined) found.push(value);
    }
  }
  return found;
}

describe('rule table', () => {
  it('has at least 70 rules with unique ids', () => {
    expect(rules.length).toBeGreaterThanOrEqual(70);
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
    for (const r of rules) expect(r.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  });

  it('every pattern is sticky and every keyword is non-empty lowercase ASCII', () => {
    for (const r of rules) {
      expect(r.pattern.sticky, r.id).toBe(true);
      expect(r.pattern.global, r.id).toBe(false);
      expect(r.keywords.length, r.id).toBeGreaterThan(0);
      for (const k of r.keywords) {
        expect(k.length, r.id).toBeGreaterThan(0);
        expect(k, r.id).toMatch(/^[\t\x20-\x7e]+$/);
        expect(k, r.id).toBe(k.toLowerCase());
      }
      if (r.group !== undefined) {
        // The capture group exists in the pattern.
        const groups = new RegExp(`${r.pattern.source}|`).exec('')!.length - 1;
        expect(r.group, r.id).toBeLessThanOrEqual(groups);
      }
      if (r.extendBack) expect(r.extendBackMax, r.id).toBeGreaterThan(0);
    }
  });

  it('every rule has at least one positive example', () => {
    const covered = new Set(positives.map((p) => p.rule));
    const missing = rules.map((r) => r.id).filter((id) => !covered.has(id));
    expect(missing).toEqual([]);
    for (const p of positives) expect(byId.has(p.rule), p.rule).toBe(true);
  });

  it('each positive is captured by its own rule at one of its keywords', () => {
    for (const p of positives) {
      const rule = byId.get(p.rule)!;
      const got = captures(rule, textOf(p));
      // Rules with extendBack capture the tail (the engine extends it back over the prefix); rules with
      // `each` capture a region holding several secrets.
      const ok = got.some((g) =>
        rule.extendBack
          ? p.secret.endsWith(g) && g.length > 0
          : rule.each
            ? g.includes(p.secret)
            : g === p.secret,
      );
      expect(ok, `${label(p)} captured ${JSON.stringify(got)}`).toBe(true);
    }
  });

  it('no pattern backtracks catastrophically on adversarial input', () => {
    const fillers = [
      'a',
      'A1',
      '=',
      ' ',
      '-',
      '_',
      '.',
      ':',
      '/',
      '"a ',
      "'",
      '\\n',
      '0',
      '@',
      'x:',
      'Q~',
    ];
    for (const r of rules) {
      const started = performance.now();
      for (const k of r.keywords) {
        const inputs = [
          ...fillers.map((f) => k + f.repeat(Math.ceil(20_000 / f.length))),
          ...fillers.map((f) => k + '=' + f.repeat(Math.ceil(20_000 / f.length)) + '!'),
          (k + ' ').repeat(2_000),
          (k + '="').repeat(2_000),
          k + ': "' + 'a b '.repeat(5_000),
        ];
        for (const input of inputs) {
          // at the start, and at a keyword in the middle (for lookbehinds)
          for (const at of [0, input.toLowerCase().indexOf(k, 10_000)]) {
            if (at < 0) continue;
            r.pattern.lastIndex = at;
            r.pattern.exec(input);
          }
        }
      }
      expect(performance.now() - started, r.id).toBeLessThan(1_000);
    }
  });
});

describe('positives: each rule alone', () => {
  it.each(positives.map((p) => [label(p), p] as const))('%s', (_name, p) => {
    const out = createRedactor([byId.get(p.rule)!]).redact(textOf(p));
    expect(out.text).toBe(p.before + PLACEHOLDER + p.after);
    expect(out.count).toBe(1);
  });
});

describe('positives: all rules', () => {
  it.each(positives.map((p) => [label(p), p] as const))('%s', (_name, p) => {
    const out = redactor.redact(textOf(p));
    expect(out.text).not.toContain(p.secret);
    expect(out.text).toContain(PLACEHOLDER);
    expect(out.text.startsWith(p.before), out.text).toBe(true);
    expect(out.text.endsWith(p.after), out.text).toBe(true);
    expect(out.count).toBeGreaterThanOrEqual(1);
    // Nothing of the secret is left between the two (overlapping rules merge into one placeholder).
    expect(out.text).toBe(p.before + PLACEHOLDER + p.after);
  });

  it('redacts every secret when all the examples are in one text', () => {
    const text = positives.map(textOf).join('\n\n');
    const out = redactor.redact(text);
    for (const p of positives) expect(out.text, p.rule).not.toContain(p.secret);
    expect(out.count).toBeGreaterThanOrEqual(positives.length * 0.9);
  });
});

describe('near-misses come back unchanged', () => {
  it.each(nearMisses.map((s) => [JSON.stringify(s).slice(0, 90), s] as const))('%s', (_name, s) => {
    const out = redactor.redact(s);
    expect(out.text).toBe(s);
    expect(out.count).toBe(0);
  });
});

describe('idempotency', () => {
  it.each(positives.map((p) => [label(p), p] as const))('%s', (_name, p) => {
    const once = redactor.redact(textOf(p));
    const twice = redactor.redact(once.text);
    expect(twice.text).toBe(once.text);
    expect(twice.count).toBe(0);
  });

  it('the placeholder itself is never redacted, in any common form', () => {
    for (const s of [
      PLACEHOLDER,
      `password=${PLACEHOLDER}`,
      `"api_key": "${PLACEHOLDER}"`,
      `Authorization: Bearer ${PLACEHOLDER}`,
      `postgres://app:${PLACEHOLDER}@db/x`,
      `https://x.example/?token=${PLACEHOLDER}&a=1`,
      `curl -u user:${PLACEHOLDER} https://x.example`,
      `--password ${PLACEHOLDER}`,
    ]) {
      const out = redactor.redact(s);
      expect(out.text, s).toBe(s);
      expect(out.count, s).toBe(0);
    }
  });
});

describe('escaped forms: JSON `\\/` and percent escapes, nested (review)', () => {
  const pass = 'Vq7#mZ2pL9xR4wT8';
  const awsSecret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Tk3Lm5N';
  const token = 'ya29.a0AfH6SMBq7xK2mP9vL4wR8tN3cZ5jD1gF';
  it.each([
    [
      'url credentials in JSON text',
      `{"url":"https:\\/\\/deploy:${pass}@git.example.com\\/r.git"}`,
      pass,
    ],
    [
      'aws secret with escaped slashes',
      `"aws_secret_access_key": "${awsSecret.replaceAll('/', '\\/')}"`,
      'bPxRfiCYzq8Tk3Lm5N',
    ],
    [
      'credentials in a URL inside a URL',
      `https://sso.example/login?next=https%3A%2F%2Fci%3A${encodeURIComponent(pass)}%40build.example%2F`,
      'mZ2pL9xR4wT8',
    ],
    [
      'a query token inside a URL',
      `https://a.example/cb?redirect=https%3A%2F%2Fb.example%2F%3Faccess_token%3D${token}`,
      token,
    ],
    [
      'a bearer header, percent-encoded',
      `https://proxy.example/?h=Authorization%3A%20Bearer%20${token}`,
      token,
    ],
    [
      'encoded twice',
      `https://a.example/?u=https%253A%252F%252Fci%253A${pass.replace('#', '%2523')}%2540b.example`,
      'mZ2pL9xR4wT8',
    ],
  ])('%s', (_name, text, secret) => {
    const out = redactor.redact(text);
    expect(out.text).not.toContain(secret);
    expect(out.text).toContain(PLACEHOLDER);
    expect(out.count).toBe(1);
    // Idempotent, and the text around the secret stays.
    expect(redactor.redact(out.text).count).toBe(0);
    expect(out.text.slice(0, 8)).toBe(text.slice(0, 8));
  });

  it('inside long text: only the escaped runs are decoded, each with the words before it', () => {
    const prose = 'The deploy log says nothing unusual here. '.repeat(400);
    const text =
      `${prose}clone https:\\/\\/ci:${pass}@git.example.com\\/r.git then ` +
      `${prose}"aws_secret_access_key": "${awsSecret.replaceAll('/', '\\/')}" and ` +
      `${prose}next=https%3A%2F%2Fb.example%2F%3Faccess_token%3D${token} end`;
    const out = redactor.redact(text);
    for (const secret of ['mZ2pL9xR4wT8', 'bPxRfiCYzq8Tk3Lm5N', token])
      expect(out.text).not.toContain(secret);
    expect(out.count).toBe(3);
    expect(out.text.startsWith(prose)).toBe(true);
    expect(out.text.endsWith(' end')).toBe(true);
  });

  it('a long token after the last escape is redacted whole, and a secret at an escape megabytes later too', () => {
    // A JWT of about 3 KB right after a percent-encoded header, megabytes from the next escape: the view
    // around each escape reaches past the token, and the text between them is never decoded.
    const b64 = (n: number) => 'eyJ' + 'aB3dE5fG7h'.repeat(n / 10);
    const jwt = `${b64(40)}.${b64(2900)}.${'Zk9_x-Qw7r'.repeat(4)}`;
    const filler = 'plain words with no escapes at all. '.repeat(60_000);
    const text = `h=Authorization%3A%20Bearer%20${jwt} ${filler}u=https%3A%2F%2Fci%3A${encodeURIComponent(pass)}%40b.example`;
    const out = redactor.redact(text);
    expect(out.text).not.toContain(jwt.slice(-200));
    expect(out.text).not.toContain(jwt.slice(1000, 1200));
    expect(out.text).not.toContain('mZ2pL9xR4wT8');
    expect(out.count).toBe(2);
    expect(out.text).toContain(filler);
  });

  it('escapes alone change nothing', () => {
    for (const s of [
      'https:\\/\\/example.com\\/a\\/b',
      'a%20b%2Fc%3Fd%3De',
      '100% sure, 50%3 off',
      '%E2%82%AC',
    ]) {
      expect(redactor.redact(s)).toEqual({ text: s, count: 0 });
    }
  });
});

describe('the scan record fingerprint (review)', () => {
  // What a stored session was scanned under: a release that changes any field of a rule (a lower entropy
  // threshold finds secrets the old table let through) rescans stored sessions on their next save.
  const version = (): string => {
    const out = defaultPipeline({ maxSessionBytes: 1 << 20 }).apply({
      next: {
        ...{
          id: 's',
          created_at: '',
          updated_at: '',
          model: '',
          provider: '',
          turns: 0,
          task: 't',
        },
        ...{ sandbox: false, messages: [{ role: 'user', content: 'x' }], external_refs: [] },
        ...{ untrusted_ingested: false, episode_untrusted: false, episode_taint_tracked: false },
        revision: 1,
      },
      previous: null,
    });
    return (out.session.satchel!.scan as { v: string }).v;
  };

  it('is stable, and changes with every field of a rule', () => {
    const before = version();
    expect(version()).toBe(before);
    const rule = rules.find((r) => r.entropy !== undefined && r.group !== undefined)!;
    const changes: Partial<Rule>[] = [
      { entropy: rule.entropy! - 0.5 },
      { minLength: (rule.minLength ?? 8) + 1 },
      { not: /^never$/ },
      { placeholders: !rule.placeholders },
      { group: (rule.group ?? 0) + 1 },
      { after: '?&' },
      { boundary: !rule.boundary },
      { extendBack: /[0-9]/ },
      {
        pattern: new RegExp(
          rule.pattern.source,
          rule.pattern.flags.replace(/i|$/, (i) => (i ? '' : 'i')),
        ),
      },
    ];
    for (const change of changes) {
      const saved = { ...rule };
      Object.assign(rule, change);
      try {
        expect(version(), JSON.stringify(Object.keys(change))).not.toBe(before);
      } finally {
        for (const key of Object.keys(rule) as (keyof Rule)[]) delete rule[key];
        Object.assign(rule, saved);
      }
      expect(version()).toBe(before);
    }
  });
});
