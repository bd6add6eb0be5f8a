import { describe, expect, it } from 'vitest';
import { crossesTrustBoundary, scanTaint, wrapperLabels } from '../../lib/pipeline/taint.js';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { saveOne } from './sessions.js';
import type { Message } from '../../lib/model/session.js';

const wrap = (label: string, body = 'payload', hex = '0123456789abcdef') =>
  `<untrusted_content_${hex} source="${label}">${body}</untrusted_content_${hex}>`;
const call = (name: string, args: unknown): Message => ({
  role: 'assistant',
  content: '',
  tool_calls: [
    {
      id: 'c1',
      type: 'function',
      function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
    },
  ],
});

describe('taint', () => {
  it('finds well-formed wrappers only', () => {
    expect(wrapperLabels(`before ${wrap('webhook:ci')} after`)).toEqual(['webhook:ci']);
    expect(wrapperLabels('<untrusted_content_0123456789abcdef source="x">never closed')).toEqual(
      [],
    );
    expect(
      wrapperLabels(
        '<untrusted_content_0123456789abcdef source="x">a</untrusted_content_fedcba9876543210>',
      ),
    ).toEqual([]);
    expect(
      wrapperLabels(
        '<untrusted_content_ABCDEF0123456789 source="x">a</untrusted_content_ABCDEF0123456789>',
      ),
    ).toEqual([]);
    expect(wrapperLabels('we talked about untrusted_content wrappers in prose')).toEqual([]);
  });

  it('untrusted_ingested: any non-engine label; engine-derived labels do not count', () => {
    expect(scanTaint([{ role: 'user', content: wrap('webhook:github') }]).untrustedIngested).toBe(
      true,
    );
    expect(scanTaint([{ role: 'tool', content: wrap('web_search') }]).untrustedIngested).toBe(true);
    for (const label of [
      'compaction',
      'plan',
      'memory',
      'skill',
      'pure_tool:read_file',
      'return_after_break',
    ]) {
      expect(scanTaint([{ role: 'user', content: wrap(label) }]).untrustedIngested, label).toBe(
        false,
      );
    }
    expect(scanTaint([{ role: 'user', content: wrap('webhook:ci') }]).sources).toEqual([
      'webhook:ci',
    ]);
  });

  it('episode_untrusted: boundary-crossing tools and wrappers in non-tool messages', () => {
    expect(scanTaint([call('github__create_issue', {})]).episodeUntrusted).toBe(true);
    expect(scanTaint([call('web_search', { q: 'x' })]).episodeUntrusted).toBe(true);
    expect(scanTaint([call('session_search', { action: 'list' })]).episodeUntrusted).toBe(true);
    expect(scanTaint([call('read_file', { path: 'a' })]).episodeUntrusted).toBe(false);
    expect(scanTaint([{ role: 'user', content: wrap('webhook:ci') }]).episodeUntrusted).toBe(true);
    expect(scanTaint([{ role: 'tool', content: wrap('webhook:ci') }]).episodeUntrusted).toBe(false);
    for (const label of ['episode', 'bg', 'tool:read_file', 'project:notes']) {
      expect(scanTaint([{ role: 'user', content: wrap(label) }]).episodeUntrusted, label).toBe(
        false,
      );
    }
  });

  it('shell commands with a network effect cross the boundary; local ones do not', () => {
    for (const cmd of [
      'curl https://x',
      'wget x',
      'ssh host',
      'git push origin main',
      'git clone url',
      'npm install left-pad',
      'cd a && pip install x',
      'scp a b:',
    ]) {
      expect(crossesTrustBoundary('bash', JSON.stringify({ command: cmd })), cmd).toBe(true);
    }
    for (const cmd of [
      'ls -la',
      'git status',
      'git commit -m "curling"',
      'npm test',
      'cat curl.txt',
      'echo sshhh',
    ]) {
      expect(crossesTrustBoundary('bash', JSON.stringify({ command: cmd })), cmd).toBe(false);
    }
    expect(crossesTrustBoundary('shell', 'curl -s https://x')).toBe(true);
  });
});

describe('taint in the save pipeline: on what was sent, before redaction (review)', () => {
  const GH = 'ghp_' + 'A1b2C3d4E5'.repeat(3) + 'f6G7h8';
  const redactor = createRedactor([
    { id: 'gh', keywords: ['ghp_'], pattern: /ghp_[A-Za-z0-9]{36}/y, boundary: true },
  ]);
  const apply = (message: Message, knownValues?: string[]) =>
    saveOne(redactor, message, knownValues);

  it('a curl command whose arguments redaction turns into {"redacted":true} still crosses the boundary', () => {
    const out = apply(
      call('bash', `curl -H "Authorization: Bearer ${GH}" https://api.example.com`),
    );
    expect(out.session.messages[0]!.tool_calls![0]!.function.arguments).toBe('{"redacted":true}');
    expect(out.session.episode_untrusted).toBe(true);
  });

  it('a label that redaction lengthens past 256 characters is still seen; sources hold it redacted', () => {
    const head = 'web:https://bot:Pw1x9Zq@docs.example.com/';
    const label = head + 'a'.repeat(256 - head.length);
    const out = apply({ role: 'user', content: wrap(label) }, ['Pw1x9Zq']);
    expect(out.session.untrusted_ingested).toBe(true);
    expect(out.session.episode_untrusted).toBe(true);
    expect(out.sources).toEqual([label.replace('Pw1x9Zq', PLACEHOLDER)]);
    expect(out.redactions).toBe(1);
  });
});
