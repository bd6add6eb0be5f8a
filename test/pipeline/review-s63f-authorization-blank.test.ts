// Review s63f, finding 6. `Authorization "Basic <base64>"` with blanks alone before the quoted value (nginx
// `proxy_set_header`, Apache `RequestHeader set`) was stored: `authorization-header` needed `:` or `=`
// after the name. A quote and a scheme word after blanks now count as the value's start.
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

const BASIC = Buffer.from('admin:' + PW).toString('base64');

describe('an Authorization header written without ":" or "="', () => {
  it.each([
    `proxy_set_header Authorization "Basic ${BASIC}";`,
    `RequestHeader set Authorization "Basic ${BASIC}"`,
  ])('is not stored: %s', async (line) =>
    expect(await storedHolders('cat /etc/nginx/conf.d/app.conf', line, [PW, BASIC])).toEqual([]),
  );

  it('prose about the header stays', () => {
    for (const text of [
      'the Authorization "Bearer" scheme',
      'set the Authorization header to the token',
      "proxy_set_header Authorization '';",
    ])
      expect(redact(text)).toBe(text);
  });
});
