// Review s63f, finding 5. HTTP basic auth written as a Python tuple or call kept its password:
// `requests.get(url, auth=("admin", "<pw>"))`, `HTTPBasicAuth('admin', '<pw>')`, `aiohttp.BasicAuth(…)`.
// No rule read a value after a bracket and a first literal. The second literal is now redacted.
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('HTTP basic auth as a code tuple', () => {
  it.each([
    `requests.get(url, auth=("admin", "${PW}"))`,
    `httpx.Client(auth=('admin', '${PW}'))`,
    `HTTPBasicAuth('admin', '${PW}')`,
    `aiohttp.BasicAuth("admin", "${PW}")`,
  ])('is not stored: %s', async (code) =>
    expect(await storedHolders(`python - <<'EOF'\n${code}\nEOF`)).toEqual([]),
  );

  it('references to a password stay', () => {
    for (const text of [
      'HTTPBasicAuth(user, password)',
      'HTTPBasicAuth("admin", password)',
      'requests.get(url, auth=("admin", os.environ["API_PASSWORD"]))',
      'auth=("admin", "${PASSWORD}")',
    ])
      expect(redact(text)).toBe(text);
  });
});
