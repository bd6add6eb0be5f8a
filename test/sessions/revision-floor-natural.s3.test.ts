/**
 * Review s54a (2026-12-06): revision-floor-races.test.ts without any slowed request: on radosgw, an agent
 * appends in a loop (each append acknowledged with its revision) while another process deletes the
 * session; then the id is created again. The new session must start above every revision the old one
 * acknowledged (docs/api.md sync loop step 5: "starts above the highest revision any session deleted
 * under that id reached").
 */
import { describe, expect, it } from 'vitest';
import { openTestS3 } from '../support/s3.js';
import { makeApp, TOKENS } from '../http/helpers.js';

describe('a delete racing an appending agent (radosgw, no injected delay)', () => {
  it('leaves a floor above every acknowledged revision', async () => {
    const inner = openTestS3('floor-natural');
    const laptop = await makeApp({ objects: inner });
    const agent = await makeApp({ objects: inner });
    const as = { token: TOKENS.phone };
    const say = (content: string) => ({ messages: [{ role: 'user', content }] });
    const reused: string[] = [];
    for (let round = 0; round < 8; round++) {
      const id = `floor-nat-${Date.now()}-${round}`;
      await agent.call('POST', '/v1/sessions', { ...as, body: { id, task: 'one' } });
      let acked = 1;
      let stop = false;
      const appending = (async () => {
        while (!stop) {
          const r = await agent.call('POST', `/v1/sessions/${id}/messages`, {
            ...as,
            body: say('x'),
          });
          if (r.status !== 200) break;
          acked = Math.max(acked, r.json.revision as number);
        }
      })();
      await new Promise((r) => setTimeout(r, 30 + round * 10));
      const del = await laptop.call('DELETE', `/v1/sessions/${id}`);
      expect(del.status).toBe(204);
      stop = true;
      await appending;
      await laptop.background.drain();
      await agent.background.drain();
      const again = await agent.call('POST', '/v1/sessions', { ...as, body: { id, task: 'two' } });
      if (again.status === 201 && (again.json.revision as number) <= acked)
        reused.push(`${id}: acknowledged ${acked}, created again at ${again.json.revision}`);
    }
    expect(reused).toEqual([]);
  }, 120_000);
});
