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
