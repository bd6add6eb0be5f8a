import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import type { Rule } from '../../lib/pipeline/rule.js';
import { createSavePipeline, redactArguments } from '../../lib/pipeline/save.js';
import type { Message, StoredSession } from '../../lib/model/session.js';
import { bareSession } from './sessions.js';

// A small rule table, so that these tests are about the pipeline, not about the rules.
const testRules: Rule[] = [
  { id: 'gh', keywords: ['ghp_'], pattern: /ghp_[A-Za-z0-9]{36}/y, boundary: true },
  {
    id: 'pw',
    keywords: ['password'],
    pattern: /password["']?\s*[:=]\s*(["']?)([^\s"',;]+)\1/iy,
    group: 2,
    placeholders: true,
  },
];
const GH = 'ghp_' + 'A1b2C3d4E5'.repeat(3) + 'f6G7h8';
const redactor = createRedactor(testRules);
const pipeline = (max = 1_000_000) =>
  createSavePipeline({ redactor, rulesVersion: 't1', maxSessionBytes: max });

const session = (messages: Message[], extra: Partial<StoredSession> = {}): StoredSession =>
  bareSession(messages, { satchel: { writes: [] }, ...extra });

describe('save pipeline', () => {
  it('redacts content, reasoning, tool arguments, tool results, task and ref uris, on copies', () => {
    const call: Message = {
      role: 'assistant',
      content: '',
      reasoning_content: `use ${GH}`,
      tool_calls: [
        {
          id: 'c',
          type: 'function',
          function: { name: 'sh', arguments: JSON.stringify({ token: GH, note: 'x' }) },
        },
      ],
    };
    const result: Message = { role: 'tool', content: `printed ${GH}`, tool_call_id: 'c' };
    const input = session([{ role: 'user', content: `my key ${GH}` }, call, result], {
      task: `deploy with ${GH}`,
      external_refs: [
        {
          kind: 'url',
          uri: `https://x.test/?t=${GH}`,
          created_by: 'api',
          read_only: false,
          created_at: '',
        },
      ],
    });
    const frozen = JSON.stringify(input.messages);
    const out = pipeline().apply({ next: input, previous: null });
    const stored = JSON.stringify(out.session);
    expect(stored).not.toContain(GH);
    expect(out.redactions).toBe(6);
    expect(JSON.parse(out.session.messages[1]!.tool_calls![0]!.function.arguments)).toEqual({
      token: PLACEHOLDER,
      note: 'x',
    });
    expect(JSON.stringify(call) + JSON.stringify(result)).toContain(GH); // the client's objects are untouched
    expect(frozen).toContain(GH);
  });

  it('JSON arguments: a value under a secret-sounding key goes even without a known format', () => {
    const args = JSON.stringify({
      db: { password: 'hunter2', user: 'me' },
      api_key: 'abc',
      max_tokens: '100',
      auth: null,
    });
    const out = JSON.parse(redactArguments(args, (s) => redactor.redact(s).text));
    expect(out).toEqual({
      db: { password: PLACEHOLDER, user: 'me' },
      api_key: PLACEHOLDER,
      max_tokens: '100',
      auth: null,
    });
  });

  it('JSON arguments: every string under a secret-sounding key goes, in arrays and objects', () => {
    const args = JSON.stringify({ password: ['Tr0ub4dor-and-3'], token: { value: 'Qx7-mellon' } });
    const out = JSON.parse(redactArguments(args, (s) => redactor.redact(s).text));
    expect(out).toEqual({ password: [PLACEHOLDER], token: { value: PLACEHOLDER } });
  });

  it('JSON arguments: a __proto__ key stays a key, and keys that redact alike are numbered (review)', () => {
    const GH2 = 'ghp_' + 'Z9y8X7w6V5'.repeat(3) + 'u4T3s2';
    const args = `{"__proto__":{"keep":"me"},"${GH}":"first","${GH2}":"second","password":"hunter2x"}`;
    const text = redactArguments(args, (s) => redactor.redact(s).text);
    expect(text).not.toContain(GH);
    expect(text).not.toContain(GH2);
    const out = JSON.parse(text);
    expect(Object.keys(out)).toEqual(['__proto__', PLACEHOLDER, `${PLACEHOLDER} 2`, 'password']);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ keep: 'me' });
    expect(out[PLACEHOLDER]).toBe('first');
    expect(out[`${PLACEHOLDER} 2`]).toBe('second');
    expect(out.password).toBe(PLACEHOLDER);
  });

  it('tool calls: type and unknown fields, on the call and on its function, are redacted', () => {
    const call = {
      id: 'c',
      type: GH,
      extra: `x ${GH}`,
      function: { name: 'sh', arguments: '{}', extra: { deep: GH } },
    };
    const out = pipeline().apply({
      next: session([{ role: 'assistant', content: '', tool_calls: [call] } as Message]),
      previous: null,
    });
    expect(JSON.stringify(out.session)).not.toContain(GH);
    expect(out.session.messages[0]!.tool_calls![0]).toEqual({
      id: 'c',
      type: PLACEHOLDER,
      extra: `x ${PLACEHOLDER}`,
      function: { name: 'sh', arguments: '{}', extra: { deep: PLACEHOLDER } },
    });
    expect(out.redactions).toBe(3);
  });

  it('unknown message fields: names are redacted; a secret-sounding one loses its value', () => {
    const m = { role: 'user', content: 'hi', [GH]: 'x', password: 'zz-99-kk', note: ['a'] };
    const out = pipeline().apply({ next: session([m as Message]), previous: null });
    expect(out.session.messages[0]).toEqual({
      role: 'user',
      content: 'hi',
      [PLACEHOLDER]: 'x',
      password: PLACEHOLDER,
      note: ['a'],
    });
  });

  it('non-JSON arguments: redacted as text; {"redacted":true} if that is not JSON; untouched when clean', () => {
    const text = (s: string) => redactor.redact(s).text;
    expect(redactArguments(`echo ${GH}`, text)).toBe('{"redacted":true}');
    expect(redactArguments('ls -la {', text)).toBe('ls -la {');
    expect(redactArguments('{"a": 1,   "b": "spaced"}', text)).toBe('{"a": 1,   "b": "spaced"}');
  });

  it('property: redacting any JSON arguments gives valid JSON, and redaction is idempotent', () => {
    const secretish = fc.constantFrom(GH, 'password=abc123', 'plain', '', 'ghp_short');
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        secretish,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(
          fc.oneof(fc.string(), fc.constantFrom('password', 'token', 'api_key')),
          tie('v'),
          { maxKeys: 4 },
        ),
      ),
    })).v;
    const text = (s: string) => redactor.redact(s).text;
    fc.assert(
      fc.property(value, (v) => {
        const once = redactArguments(JSON.stringify(v), text);
        JSON.parse(once);
        expect(redactArguments(once, text)).toBe(once);
        expect(once).not.toContain(GH);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const once = redactor.redact(`${a} ${GH} ${b} password=${b}x`).text;
        expect(redactor.redact(once).text).toBe(once);
      }),
    );
  });

  it('scans only what is new when the stored prefix is unchanged, everything when it changed', () => {
    const p = pipeline();
    const first = p.apply({
      next: session([{ role: 'user', content: 'hello' }]),
      previous: null,
    }).session;
    const appended = {
      ...first,
      messages: [...first.messages, { role: 'user' as const, content: `new ${GH}` }],
      satchel: { ...first.satchel!, writes: [] },
    };
    const second = p.apply({ next: appended, previous: first, previousBytes: 500 });
    expect(second.scanned).toBe(1);
    expect(JSON.stringify(second.session.messages)).not.toContain(GH);
    // An earlier message changed (a replace that edits history): everything is scanned again.
    const edited = {
      ...second.session,
      messages: [
        { role: 'user' as const, content: `edited ${GH}` },
        ...second.session.messages.slice(1),
      ],
    };
    const third = p.apply({ next: edited, previous: second.session });
    expect(third.scanned).toBe(2);
    expect(JSON.stringify(third.session.messages)).not.toContain(GH);
    // Equal content in new objects (a client sending back what it read): proven by the digest.
    const copy = {
      ...third.session,
      messages: JSON.parse(JSON.stringify(third.session.messages)) as Message[],
    };
    expect(p.apply({ next: copy, previous: third.session }).scanned).toBe(0);
    // The same copies sent with request secrets (a PUT with Satchel-Secrets) are scanned for them.
    const known = p.apply({
      next: {
        ...third.session,
        messages: [
          { role: 'user', content: 'db pass is vault-pass-55xq' },
          third.session.messages[1]!,
        ],
      },
      previous: third.session,
    }).session;
    const resent = { ...known, messages: JSON.parse(JSON.stringify(known.messages)) as Message[] };
    const put = p.apply({ next: resent, previous: known, knownValues: ['vault-pass-55xq'] });
    expect(put.scanned).toBe(2);
    expect(JSON.stringify(put.session.messages)).not.toContain('vault-pass-55xq');
    // A different rule version rescans everything.
    const other = createSavePipeline({ redactor, rulesVersion: 't2', maxSessionBytes: 1_000_000 });
    expect(other.apply({ next: { ...third.session }, previous: third.session }).scanned).toBe(2);
  });

  it('a pop keeps what is left as scanned, the same objects, with the digest of the shorter prefix', () => {
    const p = pipeline();
    const three = ['one', 'two', `three ${GH}`].map((content) => ({
      role: 'user' as const,
      content,
    }));
    const first = p.apply({ next: session(three), previous: null }).session;
    const popped = p.apply({
      next: { ...first, messages: first.messages.slice(0, 2) },
      previous: first,
    });
    expect(popped.scanned).toBe(0);
    expect(popped.session.messages[0]).toBe(first.messages[0]);
    expect(popped.session.satchel!.scan).toMatchObject({ n: 2 });
    // Another process, holding copies, proves the shorter prefix by its digest and scans only the new one.
    const copy = JSON.parse(JSON.stringify(popped.session)) as typeof popped.session;
    const next = {
      ...copy,
      messages: [...copy.messages, { role: 'user' as const, content: 'four' }],
    };
    expect(p.apply({ next, previous: copy }).scanned).toBe(1);
    // A pop that registers a request secret scans what is left again, so the secret leaves the history.
    const secretive = p.apply({
      next: {
        ...first,
        messages: [
          first.messages[0]!,
          { role: 'user', content: 'x hunter2xyz' },
          first.messages[1]!,
        ],
      },
      previous: first,
    }).session;
    const scrubbed = p.apply({
      next: { ...secretive, messages: secretive.messages.slice(0, 2) },
      previous: secretive,
      knownValues: ['hunter2xyz'],
    });
    expect(scrubbed.scanned).toBe(2);
    expect(JSON.stringify(scrubbed.session.messages)).not.toContain('hunter2xyz');
  });

  it('flags are sticky and derived; episode_taint_tracked is set; old objects get flags from history', () => {
    const hex = '0123456789abcdef';
    const wrapped = `<untrusted_content_${hex} source="webhook:ci">x</untrusted_content_${hex}>`;
    const old = session([{ role: 'user', content: wrapped }], { episode_taint_tracked: false });
    const out = pipeline().apply({
      next: { ...old, messages: [...old.messages, { role: 'user', content: 'more' }] },
      previous: old,
    });
    expect(out.session).toMatchObject({
      untrusted_ingested: true,
      episode_untrusted: true,
      episode_taint_tracked: true,
    });
    const cleared = pipeline().apply({
      next: { ...out.session, untrusted_ingested: false, sandbox: false },
      previous: { ...out.session, sandbox: true },
    });
    expect(cleared.session.untrusted_ingested).toBe(true);
    expect(cleared.session.sandbox).toBe(true);
    expect(out.sources).toEqual(['webhook:ci']);
  });

  it('keeps the serialised session under the cap and reports dropped groups', () => {
    const p = pipeline(4000);
    const messages: Message[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'first' },
    ];
    for (let i = 0; i < 40; i++) messages.push({ role: 'assistant', content: 'x'.repeat(200) });
    const bytes = (s: unknown) => new TextEncoder().encode(JSON.stringify(s)).byteLength;
    const out = p.apply({ next: session(messages), previous: null });
    expect(out.dropped_groups).toBeGreaterThan(0);
    // Under the cap, and no group dropped that would have fitted (one more is 215 bytes with its comma).
    expect(bytes(out.session)).toBeLessThanOrEqual(4000);
    expect(bytes(out.session)).toBeGreaterThan(4000 - 215);
    // What the caller adds after the pipeline is kept free, exactly.
    const reserved = p.apply({ next: session(messages), previous: null, reserve: () => 1000 });
    expect(bytes(reserved.session)).toBeLessThanOrEqual(3000);
    expect(bytes(reserved.session)).toBeGreaterThan(3000 - 215);
  });

  it('an append that also grows the refs is measured: never over the cap (review)', () => {
    const max = 120_000;
    const p = pipeline(max);
    const bytes = (s: unknown) => new TextEncoder().encode(JSON.stringify(s)).byteLength;
    const messages: Message[] = [{ role: 'user', content: 'first' }];
    for (let i = 0; i < 8; i++) messages.push({ role: 'user', content: 'x'.repeat(10_000) + i });
    const stored = p.apply({ next: session(messages), previous: null }).session;
    const refs = Array.from({ length: 24 }, (_, i) => ({
      kind: 'doc',
      uri: `https://example.com/${i}/` + 'a'.repeat(1980),
      created_by: 'api',
      read_only: false,
      created_at: '2026-01-01T00:00:00.000Z',
    }));
    const next = {
      ...stored,
      messages: [...stored.messages, { role: 'user' as const, content: 'one more' }],
      external_refs: refs,
    };
    const out = p.apply({ next, previous: stored, previousBytes: bytes(stored), newMessages: 1 });
    expect(out.dropped_groups).toBeGreaterThan(0);
    expect(bytes(out.session)).toBeLessThanOrEqual(max);
  });

  it('refuses (413) a write whose system prompt and task alone are over the cap; never cuts them', () => {
    const p = pipeline(2000);
    const next = session([
      { role: 'system', content: 's'.repeat(2500) },
      { role: 'user', content: 'hi' },
    ]);
    expect(() => p.apply({ next, previous: null })).toThrow(/system prompt and task/);
    const small = p.apply({
      next: session([
        { role: 'system', content: 's'.repeat(1500) },
        { role: 'user', content: 'u'.repeat(900) },
      ]),
      previous: null,
    });
    expect(small.head_dropped).toBe(true);
    expect(small.session.messages[0]!.content).toBe('s'.repeat(1500));
  });

  it('external refs: a raw uri whose redacted form is already stored is the same ref', () => {
    const ref = (uri: string) => ({
      kind: 'ci',
      uri,
      created_by: 'api',
      read_only: false,
      created_at: '2026-01-01T00:00:00Z',
    });
    const first = pipeline().apply({
      next: session([], { external_refs: [ref(`https://ci.test/run?t=${GH}`)] }),
      previous: null,
    }).session;
    expect(first.external_refs[0]!.uri).toBe('https://ci.test/run?t=[REDACTED]');
    const again = pipeline().apply({
      next: {
        ...first,
        external_refs: [...first.external_refs, ref(`https://ci.test/run?t=${GH}`)],
      },
      previous: first,
    }).session;
    expect(again.external_refs).toHaveLength(1);
  });

  it('known values are redacted literally and encoded', () => {
    const secret = 'correct horse battery staple';
    const r = createRedactor([], { knownValues: [secret] });
    const b64 = Buffer.from(`prefix:${secret}:suffix`).toString('base64');
    const hex = Buffer.from(secret).toString('hex');
    for (const text of [secret, `a ${encodeURIComponent(secret)} b`, `blob ${b64} end`, hex]) {
      const out = r.redact(text);
      expect(out.count, text).toBeGreaterThan(0);
      expect(out.text).not.toContain(secret);
      expect(out.text).not.toContain(hex);
    }
    const decoded = Buffer.from(r.redact(b64).text.replace(PLACEHOLDER, ''), 'base64').toString(
      'latin1',
    );
    expect(decoded).not.toContain('battery');
  });

  it('known values are redacted inside JSON text, escaped once or twice', () => {
    const secret = 'Pa"ss\\w0rd-Zk9';
    const r = createRedactor([], { knownValues: [secret] });
    const once = JSON.stringify({ db: { pw: secret } });
    const twice = JSON.stringify({ out: once });
    for (const text of [once, twice]) {
      const out = r.redact(text);
      expect(out.count, text).toBe(1);
      expect(JSON.parse(out.text)).toBeTruthy();
      expect(out.text).not.toContain('w0rd');
    }
  });
});

describe('content parts', () => {
  it('a secret split across text parts is redacted in the parts too, which then hold the content', async () => {
    const { defaultPipeline } = await import('../../lib/pipeline/default.js');
    const { messageInputSchema } = await import('../../lib/model/session.js');
    const { textOfParts } = await import('../../lib/model/parts.js');
    const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };
    const sent = messageInputSchema.parse({
      role: 'user',
      content: [
        { type: 'text', text: '-----BEGIN RSA PRIVATE KEY-----' },
        image,
        { type: 'text', text: 'MIIEowIBAAKCAQEA' },
        { type: 'text', text: '-----END RSA PRIVATE KEY-----' },
      ],
    });
    const out = defaultPipeline({ maxSessionBytes: 1 << 20 }).apply({
      next: session([sent]),
      previous: null,
    });
    const stored = out.session.messages[0] as Message & { content_parts: { type: string }[] };
    expect(JSON.stringify(stored)).not.toContain('MIIEowIBAAKCAQEA');
    expect(stored.content).toContain(PLACEHOLDER);
    expect(textOfParts(stored.content_parts as never)).toBe(stored.content);
    expect(stored.content_parts).toContainEqual(image);
    // The stored form goes back in as it is (an odek export, imported again).
    expect(messageInputSchema.safeParse(stored).success).toBe(true);
  });

  it('a key streamed in pieces across text parts, with no line break between them, is redacted (review)', async () => {
    const { defaultPipeline } = await import('../../lib/pipeline/default.js');
    const { messageInputSchema } = await import('../../lib/model/session.js');
    const { textOfParts } = await import('../../lib/model/parts.js');
    const key = 'sk-proj-' + 'Tq3vX9mK2pL7wN4rB8'.repeat(3);
    const pieces = [key.slice(0, 10), key.slice(10, 30), key.slice(30)];
    const sent = messageInputSchema.parse({
      role: 'user',
      content: [
        { type: 'text', text: 'my key is ' + pieces[0] },
        { type: 'text', text: pieces[1] },
        { type: 'text', text: pieces[2] + ' thanks' },
      ],
    });
    const out = defaultPipeline({ maxSessionBytes: 1 << 20 }).apply({
      next: session([sent]),
      previous: null,
    });
    const stored = out.session.messages[0] as Message & { content_parts: unknown[] };
    for (const piece of [key.slice(12, 30), key.slice(30)])
      expect(JSON.stringify(stored)).not.toContain(piece);
    expect(out.redactions).toBeGreaterThan(0);
    expect(stored.content).toBe(`my key is ${PLACEHOLDER} thanks`);
    expect(textOfParts(stored.content_parts as never)).toBe(stored.content);
    // Parts that only meet at a line break stay as they are.
    const plain = messageInputSchema.parse({
      role: 'user',
      content: [
        { type: 'text', text: 'first line' },
        { type: 'text', text: 'second line' },
      ],
    });
    const kept = defaultPipeline({ maxSessionBytes: 1 << 20 }).apply({
      next: session([plain]),
      previous: null,
    }).session.messages[0] as Message & { content_parts: unknown[] };
    expect(kept.content).toBe('first line\nsecond line');
    expect(kept.content_parts).toEqual(plain.content_parts);
  });

  it('a key cut short in one part does not take the next parts: they stay, and are the content (review)', async () => {
    const { defaultPipeline } = await import('../../lib/pipeline/default.js');
    const { messageInputSchema } = await import('../../lib/model/session.js');
    const { textOfParts } = await import('../../lib/model/parts.js');
    const truncated =
      '-----BEGIN OPENSSH PRIVATE KEY-----\n' +
      'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn\n' +
      'NhAAAAAwEAAQAAAYEAxQ7s8Zr5Kq2mT9vW1pL3nB6cY0hJdF4gR8eXaUoIiPkS2tVw';
    const image = { type: 'image_url', image_url: { url: 'https://example.com/d.png' } };
    const plan = {
      type: 'text',
      text: 'Please review the deploy plan for staging, step 3 onwards.',
      cache_control: { type: 'ephemeral' },
    };
    const sent = messageInputSchema.parse({
      role: 'user',
      content: [{ type: 'text', text: `tool output (truncated):\n${truncated}` }, image, plan],
    });
    const out = defaultPipeline({ maxSessionBytes: 1 << 20 }).apply({
      next: session([sent]),
      previous: null,
    });
    const stored = out.session.messages[0] as Message & { content_parts: { type: string }[] };
    expect(JSON.stringify(stored)).not.toContain('b3BlbnNzaC1rZXkt');
    expect(stored.content_parts).toEqual([
      { type: 'text', text: `tool output (truncated):\n${PLACEHOLDER}` },
      image,
      plan,
    ]);
    expect(stored.content).toBe(textOfParts(stored.content_parts as never));
  });
});

describe('incremental scan after a write with per-request secrets', () => {
  it('the next write scans only its new messages (a Satchel-Secrets write does not void the scan record)', async () => {
    const { defaultPipeline } = await import('../../lib/pipeline/default.js');
    const pipeline = defaultPipeline({ maxSessionBytes: 64 * 1024 * 1024 });
    const history: Message[] = Array.from({ length: 500 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i}`,
    }));
    const first: StoredSession = {
      id: 's',
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:00Z',
      model: '',
      provider: '',
      turns: 0,
      task: 't',
      sandbox: false,
      messages: history,
      external_refs: [],
      untrusted_ingested: false,
      episode_untrusted: false,
      episode_taint_tracked: false,
      revision: 1,
    };
    let cur = pipeline.apply({ next: first, previous: null }).session;
    const append = (knownValues?: string[]) => {
      const next = {
        ...cur,
        messages: [...cur.messages, { role: 'user' as const, content: 'more' }],
      };
      const out = pipeline.apply({
        next,
        previous: cur,
        previousBytes: 40_000,
        newMessages: 1,
        ...(knownValues ? { knownValues } : {}),
      });
      cur = out.session;
      return out.scanned;
    };
    expect(append(['per-request-secret-1'])).toBe(1);
    expect(append(['per-request-secret-1'])).toBe(1);
    expect(append()).toBe(1);
  });
});
