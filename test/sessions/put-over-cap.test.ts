// A PUT whose only change the size cap would drop answers 413 and writes nothing (review s50e): only the
// session's last message counted as new, so an edit in the middle that could not fit answered 200 with the
// edit replaced by the cap's marker. A PUT that sends messages as stored does not count them as new.
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

describe('PUT over the size cap', () => {
  it('a PUT whose only change cannot be stored is 413 and writes nothing', async () => {
    const { call, sessions } = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '6000' } });
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'u2' },
    ];
    await call('POST', '/v1/sessions', { body: { id: 'p', task: 'cap', messages } });
    const edited = [
      messages[0],
      messages[1],
      { role: 'assistant', content: 'A'.repeat(7000) },
      messages[3],
    ];
    const put = await call('PUT', '/v1/sessions/p', {
      body: { task: 'cap', messages: edited },
      headers: { 'if-match': '"1"' },
    });
    expect(put.status).toBe(413);
    expect(put.json.detail).toMatch(/the new message \(\d+ bytes\) cannot be stored/);
    expect(put.headers.get('content-type')).toContain('application/problem+json');
    const now = await call('GET', '/v1/sessions/p');
    expect(now.json.revision).toBe(1);
    expect(now.json.messages).toEqual(messages);
    await sessions.settled();
  });
});
