import { describe, expect, it } from 'vitest';
import {
  oneLine,
  outcomeOf,
  parsePayload,
  summarize,
  SUMMARY_MAX_BYTES,
  TITLE_MAX_CHARS,
  truncateUtf8,
} from '../../lib/hooks/summary.js';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { githubPayloads } from './payloads.js';

const enc = (s: string) => new TextEncoder().encode(s);
const redactor = createRedactor(rules);
const redact = (s: string) => redactor.redact(s).text;
const gh = (event: string, value: unknown) =>
  summarize({ hook: 'ci', event, value, raw: JSON.stringify(value) }, redact);

describe('webhook summaries: GitHub events', () => {
  it('workflow_run: the outcome, branch, commit, trigger and link', () => {
    const s = gh('workflow_run', githubPayloads.workflowRunFailed);
    expect(s.title).toBe('GitHub workflow_run: CI failed on main');
    expect(s.text).toBe(
      [
        'Workflow "CI" run #42 failed on main in octo/satchel.',
        'Commit: 7d1c2e9 "Fix the flaky upload test"',
        'Triggered by: push from alice',
        'Attempt: 2',
        'URL: https://github.com/octo/satchel/actions/runs/9001',
      ].join('\n'),
    );
  });

  it.each([
    ['completed', 'success', 'succeeded'],
    ['completed', 'cancelled', 'was cancelled'],
    ['completed', 'timed_out', 'timed out'],
    ['completed', 'something_new', 'finished (something_new)'],
    ['in_progress', undefined, 'in progress'],
    ['queued', null, 'queued'],
    [undefined, undefined, 'reported'],
  ])('outcome of status %s, conclusion %s: %s', (status, conclusion, want) => {
    expect(outcomeOf(status, conclusion ?? undefined)).toBe(want);
  });

  it('check_run: name, outcome, output and link', () => {
    const s = gh('check_run', githubPayloads.checkRun);
    expect(s.title).toBe('GitHub check_run: lint failed on feature/x');
    expect(s.text).toContain('Check "lint" failed on feature/x in octo/satchel.');
    expect(s.text).toContain('Commit: abcdef1');
    expect(s.text).toContain('Output: 3 problems');
    expect(s.text).toContain('lib/a.ts:1 unused import');
    expect(s.text).toContain('URL: https://github.com/octo/satchel/runs/77');
  });

  it('issue_comment: who said what on which issue or pull request', () => {
    const s = gh('issue_comment', githubPayloads.issueComment);
    expect(s.title).toBe('GitHub issue_comment: bob commented on pull request #12 Add webhooks');
    expect(s.text).toBe(
      [
        'bob commented on pull request #12 "Add webhooks" in octo/satchel:',
        '',
        'Please rebase.\nThanks!',
        '',
        'URL: https://github.com/octo/satchel/pull/12#issuecomment-1',
      ].join('\n'),
    );
    const onIssue = gh('issue_comment', {
      ...githubPayloads.issueComment,
      action: 'edited',
      issue: { number: 3, title: 'Bug' },
    });
    expect(onIssue.title).toBe('GitHub issue_comment: bob edited a comment on issue #3 Bug');
  });

  it('push: commits listed (at most 20, then a count), range and compare link', () => {
    const s = gh('push', githubPayloads.push(2));
    expect(s.title).toBe('GitHub push: alice pushed 2 commits to main');
    expect(s.text).toBe(
      [
        'alice pushed 2 commits to main in octo/satchel.',
        'Range: 1111111..2222222',
        '- c000000 commit 0 (alice)',
        '- c000001 commit 1 (alice)',
        'Compare: https://github.com/octo/satchel/compare/1111111...2222222',
      ].join('\n'),
    );
    const big = gh('push', githubPayloads.push(25));
    expect(big.text.match(/^- c/gm)).toHaveLength(20);
    expect(big.text).toContain('- … and 5 more');
    expect(
      gh('push', { ...githubPayloads.push(0), ref: 'refs/tags/v1.0', created: true }).title,
    ).toBe('GitHub push: alice created tag v1.0');
    expect(gh('push', { ...githubPayloads.push(0), deleted: true }).title).toBe(
      'GitHub push: alice deleted branch main',
    );
    expect(gh('push', { ...githubPayloads.push(1), forced: true }).title).toBe(
      'GitHub push: alice force-pushed 1 commit to main',
    );
  });

  it('another GitHub event: its name, action and repository, then the JSON', () => {
    const value = { action: 'opened', repository: { full_name: 'octo/satchel' }, number: 5 };
    const s = gh('pull_request', value);
    expect(s.title).toBe('GitHub pull_request opened in octo/satchel');
    expect(s.text).toBe(
      `GitHub pull_request opened in octo/satchel\n\n${JSON.stringify(value, null, 2)}`,
    );
  });

  it('fields of the wrong type are skipped, never shown as [object Object]', () => {
    const s = gh('workflow_run', {
      workflow_run: { name: { evil: true }, head_branch: ['x'], conclusion: 'failure' },
    });
    expect(s.title).toBe('GitHub workflow_run: workflow failed');
    expect(s.text).not.toContain('[object');
  });
});

describe('webhook summaries: other payloads', () => {
  it('JSON from another sender: pretty JSON under the hook name and its type', () => {
    const value = { type: 'deploy.finished', ok: false };
    const s = summarize({ hook: 'deploys', value, raw: JSON.stringify(value) }, redact);
    expect(s.title).toBe('Webhook deploys: deploy.finished');
    expect(s.text).toBe(`Webhook deploys: deploy.finished\n\n${JSON.stringify(value, null, 2)}`);
  });

  it('a lone surrogate (an escape in the payload, or a cut between the halves of an emoji) becomes U+FFFD', () => {
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    const body =
      '{"action":"created","comment":{"body":"half \\ud83d, \\ud83d\\ude00 whole"},"issue":{"number":7,"title":"t"}}';
    const { value, raw } = parsePayload(enc(body), 'application/json');
    const s = summarize({ hook: 'ci', event: 'issue_comment', value, raw }, redact);
    expect(s.text).toContain('half \uFFFD, \u{1F600} whole');
    expect(lone.test(s.text)).toBe(false);
    // Pretty JSON of other payloads writes such a string as its escape: ASCII, which stays as it is.
    const other = parsePayload(enc('{"type":"x","note":"half \\ud83d"}'), undefined);
    expect(summarize({ hook: 'd', ...other }, redact).text).toContain('"note": "half \\ud83d"');
    // The title is cut at TITLE_MAX_CHARS - 1 characters: here between the emoji's two halves.
    const type =
      'a'.repeat(TITLE_MAX_CHARS - 2 - 'Webhook deploys: '.length) + '\u{1F600} and more';
    const cut = summarize({ hook: 'deploys', value: { type }, raw: '' }, redact);
    expect(cut.title.endsWith('a\uFFFD…')).toBe(true);
    expect(lone.test(cut.title)).toBe(false);
  });

  it('a body that is not JSON is shown as text', () => {
    const { value, raw } = parsePayload(enc('build 17 failed'), 'text/plain');
    expect(value).toBeUndefined();
    expect(summarize({ hook: 'ci', value, raw }, redact)).toEqual({
      title: 'Webhook ci',
      text: 'Webhook ci\n\nbuild 17 failed',
      redactions: 0,
    });
  });

  it("GitHub's form encoding: the JSON is in the payload field", () => {
    const json = JSON.stringify(githubPayloads.workflowRunFailed);
    const { value } = parsePayload(
      enc(new URLSearchParams({ payload: json }).toString()),
      'application/x-www-form-urlencoded; charset=utf-8',
    );
    expect(value).toEqual(githubPayloads.workflowRunFailed);
  });

  it('a body many times the budget is summarised from its redacted value, not its raw text', () => {
    for (const pad of [10, 70_000]) {
      const value = { auth: { value: 'plainvalue123' }, note: 'x'.repeat(pad) };
      const out = summarize({ hook: 'h', value, raw: JSON.stringify(value) }, redact);
      expect(out.text, String(pad)).not.toContain('plainvalue123');
      expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
    }
  });

  it('a text body many times the budget is redacted near the budget, not whole; the note says its size', () => {
    let redacted = 0;
    const counting = (t: string) => ((redacted += t.length), redact(t));
    const token = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    // A secret across the budget's cut is redacted whole; the rest of 4 MB is never scanned.
    const raw = 'y'.repeat(SUMMARY_MAX_BYTES - 100) + ' ' + token + ' ' + 'z'.repeat(4_000_000);
    const out = summarize({ hook: 'h', value: undefined, raw }, counting);
    expect(out.text).not.toContain('ghp_');
    expect(out.text).not.toContain(token.slice(4, 12));
    expect(redacted).toBeLessThan(200_000);
    expect(out.text).toMatch(/truncated: the first \d+ of 40\d{5} bytes are shown\.$/);
  });

  it('secrets are redacted whole before any cut: field, quoted title, title, budget', () => {
    const token = (tag: string) => 'ghp_' + `${tag}Zq8xW3vN5`.repeat(4).slice(0, 36);
    const [t1, t2, t3, t4] = ['T1', 'T2', 'T3', 'T4'].map(token);
    const comment = gh('issue_comment', {
      issue: { number: 7, title: 'x'.repeat(110) + ' ' + t1 },
      comment: { user: { login: 'bob' }, body: 'y'.repeat(3980) + ' ' + t2 },
    });
    const titled = gh('workflow_run', { workflow_run: { name: 'n'.repeat(190) + ' ' + t3 } });
    const value = { type: 'alert', pad: 'z'.repeat(16_300), key: t4, password: 'Hunter2-Ocelot' };
    const other = summarize({ hook: 'ci', value, raw: JSON.stringify(value) }, redact);
    const all = [comment, titled, other].map((s) => s.title + '\n' + s.text).join('\n');
    expect(all).not.toContain('ghp_');
    expect(all).not.toContain('Hunter2');
    expect(comment.text).toContain('[REDACTED]');
  });

  it('counts the secrets it redacts: each string of the payload, a secret-named field, a text body', () => {
    const token = (tag: string) => 'ghp_' + `${tag}Zq8xW3vN5`.repeat(4).slice(0, 36);
    // Two tokens in strings, one value under a secret-sounding key, and a "[REDACTED]" that was sent as such.
    const value = {
      type: 'alert',
      a: token('A1'),
      b: `see ${token('B2')}`,
      password: 'Hunter2-Ocelot',
    };
    const sent = { ...value, c: '[REDACTED] already' };
    const s = summarize({ hook: 'ci', value: sent, raw: JSON.stringify(sent) }, redact);
    expect(s.text).not.toContain('ghp_');
    expect(s.text).not.toContain('Hunter2');
    expect(s.redactions).toBe(3);
    const raw = `deploy failed: token ${token('C3')} and ${token('D4')}`;
    expect(summarize({ hook: 'ci', value: undefined, raw }, redact).redactions).toBe(2);
    const clean = { type: 'note', text: 'nothing to hide [REDACTED]' };
    expect(summarize({ hook: 'ci', value: clean, raw: '' }, redact).redactions).toBe(0);
  });

  it('a large payload is cut to the budget with a visible note', () => {
    const value = { type: 'big', data: 'x'.repeat(100_000) };
    const s = summarize({ hook: 'ci', value, raw: JSON.stringify(value) }, redact);
    expect(enc(s.text).byteLength).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
    expect(s.text).toMatch(/\[satchel\] truncated: the first \d+ of \d+ bytes are shown\.$/);
  });
});

describe('webhook summaries: text helpers', () => {
  it.each([
    ['short', 100, 'short'],
    ['x'.repeat(200), 100, null],
    ['é'.repeat(200), 101, null],
    ['😀'.repeat(100), 130, null],
  ])('truncateUtf8(%j…, %i) stays within the budget and whole characters', (text, max, same) => {
    const out = truncateUtf8(text, max);
    if (same !== null) return expect(out).toBe(same);
    expect(enc(out).byteLength).toBeLessThanOrEqual(max);
    expect(out).not.toContain('\uFFFD');
    expect(out).toContain('[satchel] truncated');
  });

  it('titles are one line of at most TITLE_MAX_CHARS', () => {
    expect(oneLine('a\nb\t\u0000c  d', 50)).toBe('a b c d');
    const long = oneLine('word '.repeat(100), TITLE_MAX_CHARS);
    expect(long.length).toBe(TITLE_MAX_CHARS);
    expect(long.endsWith('…')).toBe(true);
    expect(
      gh('workflow_run', { workflow_run: { name: 'n'.repeat(500), conclusion: 'failure' } }).title
        .length,
    ).toBe(TITLE_MAX_CHARS);
  });
});
