import { describe, expect, it } from 'vitest';
import { spawnEntry } from '../support/node-entry.js';

// Review s66g: the README's "many devices" command (SATCHEL_TOKENS with short example tokens, no HOST) put the
// server on every interface without a word; a one-character token was taken silently. The start banner now
// says the server is reachable from other machines and warns of plain tokens under 16 characters and of the
// docs' example tokens (review s66o: they are 16 to 21 characters).

/** The start banner's JSON log record (SATCHEL_LOG=json), read from functions/node.ts run as `npm start`. */
function banner(env: Record<string, string>): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawnEntry(env);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('listening on'));
      if (line) {
        child.kill('SIGTERM');
        resolve(JSON.parse(line) as Record<string, string>);
      }
    });
    child.stderr.on('data', (d: Buffer) => void (err += d.toString()));
    child.on('exit', () => reject(new Error(`no banner: ${out}${err}`)));
  });
}

describe('functions/node.ts banner: reachable from the network (review s66g)', () => {
  it('says so on every interface, and warns of short plain tokens without naming them', async () => {
    const b = await banner({
      HOST: '0.0.0.0',
      SATCHEL_TOKENS:
        `default/laptop=tok_laptop_5Rw,default/ci=x:ro,alice=${'k'.repeat(32)},` +
        'alice/phone=tok_alice_phone_9Xk4',
    });
    expect(b.network).toMatch(
      /reachable from other machines \(HOST 0\.0\.0\.0\); HOST=127\.0\.0\.1/,
    );
    expect(b.warning).toMatch(/^3 of the tokens are under 16 characters or the docs' examples/);
    expect(JSON.stringify(b)).not.toContain('tok_laptop_5Rw');
    expect(JSON.stringify(b)).not.toContain('9Xk4');
  }, 60_000);

  it('says nothing of the kind on loopback, or with only long or sha256: tokens', async () => {
    // Loopback in any spelling (review s66h: the IPv4-mapped and the long IPv6 forms were called reachable).
    for (const HOST of ['127.0.0.1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) {
      const loop = await banner({ HOST, SATCHEL_TOKENS: 'default=x' });
      expect(loop.network, HOST).toBeUndefined();
      expect(loop.warning, HOST).toBeUndefined();
    }
    const long = await banner({
      HOST: '0.0.0.0',
      SATCHEL_TOKENS: `default=${'k'.repeat(16)},b=sha256:${'a'.repeat(64)}`,
    });
    expect(long.network).toBeDefined();
    expect(long.warning).toBeUndefined();
  }, 60_000);
});
