// Review s63f, finding 7. In a Markdown table, a password made of capitalised words and digits was read as
// a type's name and kept (`| DB_PASSWORD | Winter2025 |`, `| DB_PASSWORD | hunter2Quux77Zed |`). A type's
// name has one number, and not right after a lower-case letter at its end: those two are passwords now.
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';
import { PW, redact } from './review-s63f-stored.js';

describe('a table cell shaped like capitalised words and digits', () => {
  it.each([
    `| DB_PASSWORD | ${PW} |`,
    '| DB_PASSWORD | Winter2025 |',
    '| password | Company2024 |',
  ])('is not stored: %s', async (row) => {
    const app = await makeApp();
    const content = `| name | value |\n|---|---|\n${row}`;
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'user', content }] },
    });
    expect(res.status).toBe(201);
    await settleAll(app);
    expect(holders(app.dir, [PW, 'Winter2025', 'Company2024'])).toEqual([]);
  });

  it("types' names stay", () => {
    for (const text of [
      '| token | Uint8Array |',
      '| api_key | Base64String |',
      '| secret | OAuth2Token |',
      '| password | uint8Array |',
      '| secret | HmacSHA256 |',
      'token\tInt32Array\n',
    ])
      expect(redact(text)).toBe(text);
  });
});
