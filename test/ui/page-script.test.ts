import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import * as client from '../../lib/ui/client.js';
import { PAGE_FUNCTIONS, pageScript } from '../../lib/ui/index.js';

describe('the session browser script', () => {
  it('lists every function lib/ui/client.ts exports, besides the entry', () => {
    // The list is by name (lib/ui/index.ts): an export left out of it is missing in the browser.
    const exported = Object.entries(client)
      .filter(([name, f]) => typeof f === 'function' && name !== 'sessionBrowser')
      .map(([name]) => name)
      .sort();
    expect(PAGE_FUNCTIONS.map((f) => f.name).sort()).toEqual(exported);
  });

  it('declares a function a minifier turned into an expression, so the script still parses and runs', () => {
    // terser moved a function whose calls it had inlined into the list, as `function(){…}`: its text
    // alone is no statement (the Worker-served page then never ran).
    const named = function greet(): string {
      return 'hi';
    };
    const anonymous = [
      function () {
        return 1;
      },
    ][0]!;
    const arrow = [() => 2][0]!;
    const entry = (): void => {
      (globalThis as unknown as { out: string }).out = `${greet()}`;
    };
    const script = pageScript([named, anonymous, arrow], entry);
    const sandbox: { out?: string } = {};
    runInNewContext(script, sandbox);
    expect(sandbox.out).toBe('hi');
  });
});

declare function greet(): string;
