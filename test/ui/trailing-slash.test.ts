// Review s53e (2026-12-06), fixed the same day; this test failed on the code before the fix.
// GET /ui/ served the page itself (the router takes a trailing slash, and `/ui` was registered before the
// `/ui/` redirect), whose script, stylesheet and icon are named relative to it: from `/ui/` they were
// `/ui/ui/app.js`, and every one answered 404 (an unstyled page whose script never ran). The same for
// `/ui/sessions/{id}/`. Now both redirect, relative, so that a path prefix (an API Gateway stage) stays.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

it.each([
  ['/ui/', '../ui', '/ui'],
  ['/ui/?q=x', '../ui?q=x', '/ui?q=x'],
  ['/ui/sessions/abc/', '../abc', '/ui/sessions/abc'],
])('%s redirects to %s, and what it names there loads', async (path, location, target) => {
  const app = await makeApp({});
  const r = await app.call('GET', path, { token: null });
  expect(r.status).toBe(301);
  expect(r.headers.get('location')).toBe(location);
  expect(
    new URL(location, `http://h${path}`).pathname + new URL(location, `http://h${path}`).search,
  ).toBe(target);
  const page = await app.call('GET', target, { token: null });
  expect(page.status).toBe(200);
  const refs = [...page.text.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]!);
  expect(refs.length).toBeGreaterThan(0);
  for (const ref of refs.filter((x) => !/^[a-z]+:/.test(x))) {
    const url = new URL(ref, `http://h${target}`);
    const asset = await app.call('GET', url.pathname + url.search, { token: null });
    expect(asset.status, `${ref} from ${target}`).toBe(200);
  }
});
