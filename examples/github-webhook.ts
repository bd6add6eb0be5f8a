// A GitHub webhook delivery stored as a Satchel session, end to end: what GitHub sends (the payload signed
// with the hook's secret in X-Hub-Signature-256), then reading the session it made with the client.
// The server needs the hook configured, e.g.
//   SATCHEL_HOOKS='{"github":{"secret":"<secret>","namespace":"default","session":"new"}}' npm start
//   SATCHEL_URL=http://127.0.0.1:8787 HOOK_SECRET=<secret> npx tsx github-webhook.ts
import { SatchelApiError, SatchelClient, type Session } from 'satchel';

const url = process.env.SATCHEL_URL ?? 'http://127.0.0.1:8787';
const secret = process.env.HOOK_SECRET ?? '';
const delivery = process.argv[2] ?? crypto.randomUUID();

// An issue opened, as GitHub's "issues" event carries it (shortened).
const body = JSON.stringify({
  action: 'opened',
  issue: { number: 1347, title: 'Flaky test in CI', body: 'Fails one run in ten on main.' },
  repository: { full_name: 'octo-org/octo-repo' },
  sender: { login: 'octocat' },
});

/** GitHub's signature: `sha256=` and the hex HMAC-SHA256 of the raw body with the hook's secret. */
async function sign(payload: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    'raw',
    enc.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(payload)));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const response = await fetch(`${url}/v1/hooks/github`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'x-github-event': 'issues',
    'x-github-delivery': delivery,
    'x-hub-signature-256': await sign(body),
  },
  body,
});
const accepted = (await response.json()) as { accepted: boolean; session: string };
if (response.status !== 202) throw new Error(`hook answered ${response.status}`);

// 202: accepted; the message is stored right after the answer, so wait for it (a few ms, usually).
const client = new SatchelClient({ url, token: process.env.SATCHEL_TOKEN });
let session: Session | undefined;
for (let waited = 0; waited < 10_000 && !session?.messages.length; waited += 100) {
  try {
    session = (await client.get(accepted.session)).session;
  } catch (err) {
    if (!(SatchelApiError.is(err) && err.status === 404)) throw err;
  }
  if (!session?.messages.length) await new Promise((r) => setTimeout(r, 100));
}
if (!session) throw new Error(`session ${accepted.session} did not appear`);
console.log(
  JSON.stringify({
    status: response.status,
    session: session.id,
    task: session.task,
    untrusted: session.untrusted_ingested,
    message: session.messages.at(-1)?.content,
  }),
);
