import { describe, expect, it } from 'vitest';
import { satchel } from './run.js';

describe('SATCHEL_URL without its scheme', () => {
  // A host that starts with a digit is no URL scheme: `new URL('127.0.0.1:8787')` throws, so the hint
  // is given before the URL is parsed.
  it.each(['127.0.0.1:8787', '10.0.0.5:8787'])(
    'SATCHEL_URL=%s is named with its scheme',
    async (url) => {
      const r = await satchel(['session', 'list'], { SATCHEL_URL: url });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`SATCHEL_URL needs its scheme: http://${url}`);
    },
  );
});

describe('SATCHEL_URL with the API path', () => {
  // The API's paths start with /v1: `…/v1` answered "Not Found: no route for GET /v1/v1/sessions" (review).
  it.each([
    ['http://127.0.0.1:9/v1', 'http://127.0.0.1:9'],
    ['https://example.com/satchel/v1/', 'https://example.com/satchel'],
  ])('SATCHEL_URL=%s is refused, naming the root', async (url, root) => {
    const r = await satchel(['session', 'list'], { SATCHEL_URL: url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`SATCHEL_URL is the server's root, without /v1: ${root}`);
  });
});
