import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { listeningUrl, spawnEntry } from '../support/node-entry.js';

// Review s52a: a SIGTERM of the Node server (functions/node.ts `stop`) waits 10 s for background work and
// then exits 0. A webhook delivery acknowledged with 202 whose model turn is still running is dropped
// without a line saying so: webhooks.md promises "A failure after the 202 is logged (`webhook delivery
// failed`, with the hook name); redeliver to retry", and the operator has nothing to redeliver from.

const SECRET = 'ops-hook-secret-0123456789';
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('SIGTERM with a webhook delivery in flight (review s52a)', () => {
  it('the abandoned delivery is logged, so the operator knows to redeliver', async () => {
    const chat = await startChatServer({ hang: true });
    servers.push(chat);
    const child = spawnEntry({
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
      SATCHEL_HOOKS: JSON.stringify({
        ops: { secret: SECRET, namespace: 'default', session: 'ops-log' },
      }),
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => void (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => void (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    const url = await listeningUrl(child);
    const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
    const t = Math.floor(Date.now() / 1000);
    const sig = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
    const res = await fetch(`${url}/v1/hooks/ops`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-satchel-signature': `t=${t},v1=${sig}`,
        'x-satchel-delivery': 'deploy-7',
      },
      body,
    });
    expect(res.status).toBe(202);
    while (chat.requests.length === 0) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string; hook?: string; error?: string });
    // The line an operator watches for: the hook, the delivery id to redeliver, and why.
    const failed = lines.filter((l) => l.msg === 'webhook delivery failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 'warn', hook: 'ops', delivery: 'deploy-7' });
    expect(failed[0]!.error).toMatch(/server stopping.*redeliver/);
  }, 60_000);
});
