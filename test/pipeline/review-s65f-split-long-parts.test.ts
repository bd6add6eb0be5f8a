// Review s65f, F3. A secret cut between two text parts was half stored when neither part was a short
// middle part: a tool output sent as two parts of 3.5 KB each, cut inside a key, or two short parts of
// which the second is the last. The check that cuts a key's tail out of the next part (`keysRunOn`) looked
// only next to a short middle part, and only when the next part's own redaction had changed nothing.
import { describe, expect, it } from 'vitest';
import { roundTrip, t } from '../support/inline-files.js';

const SK =
  'sk-proj-Rx9eLjp1jqF5FPcxT1OxZaATrzx9k1TAPgoqpeo4qIjNpbTqT3BlbkFJWXPUHh8rgzxTddI3VAlYGIHHvsrVNd5TF2W8NPk8PtSyRgtg';
const PW = 'Tq7vLm2pXz9wQe4R';
const GHP = 'ghp_Zq8xW3vN5bPzR7tK2mYc4LdH9sF6jA1eQ0uB';
const FILLER = Array.from({ length: 120 }, (_, i) => `LOG_LINE_${i}=value number ${i}`).join('\n');
const ENV = `${FILLER}\nOPENAI_API_KEY=${SK}\nDB_PASSWORD=${PW}\n${FILLER}`;

describe('a secret split between two text parts, neither a short middle part', () => {
  it.each([
    ['OpenAI key', SK],
    ['password', PW],
  ])('%s cut inside, in two parts of 3.5 KB: no piece is stored', async (_, secret) => {
    for (const at of [3, secret.length >> 1, secret.length - 4]) {
      const cut = ENV.indexOf(secret) + at;
      const r = await roundTrip([t(ENV.slice(0, cut)), t(ENV.slice(cut))]);
      expect(r.stored, `cut at ${at}`).not.toContain(secret.slice(at));
      expect(r.stored).not.toContain(PW);
      expect(r.stored).toContain('LOG_LINE_119=value number 119');
    }
  });

  it('two short parts, the last one the token’s tail: the tail goes with the placeholder', async () => {
    const r = await roundTrip([t(`GITHUB_TOKEN=${GHP.slice(0, 20)}`), t(GHP.slice(20))]);
    expect(r.stored).not.toContain(GHP.slice(20));
    expect(r.content).toEqual([t('GITHUB_TOKEN=[REDACTED]'), t('')]);
  });

  it('a word after a redacted part is kept when it is no piece of the key', async () => {
    const r = await roundTrip([t(`DB_PASSWORD=${PW}`), t(' and then'), t('more text')]);
    expect(r.content).toEqual([t('DB_PASSWORD=[REDACTED]'), t(' and then'), t('more text')]);
  });
});
