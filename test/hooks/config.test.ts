import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseHooks } from '../../lib/server/config.js';

const secret = 'do-not-print-me-0123';

describe('SATCHEL_HOOKS', () => {
  it('unset or blank: no hooks', async () => {
    expect((await loadConfig({}, 'local')).hooks.size).toBe(0);
    expect(parseHooks('  ').size).toBe(0);
  });

  it('parses {name: {secret, namespace, session}} with an id, latest or new', () => {
    const hooks = parseHooks(
      JSON.stringify({
        ci: { secret, namespace: 'alice', session: 'new' },
        'alerts.prod': { secret, namespace: 'alice', session: 'latest' },
        log_1: { secret, namespace: 'bob', session: '20250101-0123456789abcdef0123456789abcdef' },
      }),
    );
    expect([...hooks.keys()]).toEqual(['ci', 'alerts.prod', 'log_1']);
    expect(hooks.get('log_1')).toEqual({
      secret,
      namespace: 'bob',
      session: '20250101-0123456789abcdef0123456789abcdef',
    });
  });

  it('looks names up as its own entries only', () => {
    const hooks = parseHooks(
      JSON.stringify({ ci: { secret, namespace: 'alice', session: 'new' } }),
    );
    expect(hooks.get('constructor')).toBeUndefined();
    expect(hooks.get('__proto__')).toBeUndefined();
  });

  it.each([
    ['not JSON', '{ci:', /must be a JSON object/],
    ['an array', '[]', /must be a JSON object/],
    [
      'a bad name',
      JSON.stringify({ '.hidden': { secret, namespace: 'a', session: 'new' } }),
      /hook name/,
    ],
    [
      'a name with a slash',
      JSON.stringify({ 'a/b': { secret, namespace: 'a', session: 'new' } }),
      /hook name/,
    ],
    ['no secret', JSON.stringify({ ci: { namespace: 'a', session: 'new' } }), /"ci": secret/],
    [
      'an empty secret',
      JSON.stringify({ ci: { secret: '', namespace: 'a', session: 'new' } }),
      /secret/,
    ],
    [
      'a bad namespace',
      JSON.stringify({ ci: { secret, namespace: 'a/b', session: 'new' } }),
      /namespace/,
    ],
    ['no session', JSON.stringify({ ci: { secret, namespace: 'a' } }), /session must be/],
    [
      'a reserved session id',
      JSON.stringify({ ci: { secret, namespace: 'a', session: 'index' } }),
      /session must be/,
    ],
    [
      'an invalid session id',
      JSON.stringify({ ci: { secret, namespace: 'a', session: '../x' } }),
      /session must be/,
    ],
    [
      'an unknown field',
      JSON.stringify({ ci: { secret, namespace: 'a', session: 'new', sessoin: 'x' } }),
      /unknown field "sessoin"/,
    ],
    ['a string entry', JSON.stringify({ ci: secret }), /secret must be/],
    [
      'a secret of 15 characters',
      JSON.stringify({ ci: { secret: 'x'.repeat(15), namespace: 'a', session: 'new' } }),
      /secret must be a string of 16 characters or more/,
    ],
  ])(
    '%s is a ConfigError naming SATCHEL_HOOKS, never the secret',
    async (_name, value, message) => {
      const load = loadConfig({ SATCHEL_HOOKS: value }, 'local');
      await expect(load).rejects.toBeInstanceOf(ConfigError);
      const err = (await load.catch((e: unknown) => e)) as Error;
      expect(err.message).toMatch(/SATCHEL_HOOKS/);
      expect(err.message).toMatch(message);
      expect(err.message).not.toContain(secret);
    },
  );
});
