import { exactNumbers } from '../model/json-numbers.js';
import { text as decode, utf8 } from '../model/bytes.js';
import { utf8Length } from '../pipeline/cap.js';
import { PLACEHOLDER } from '../model/session.js';
import { jsonText, redactJsonValue } from '../pipeline/save.js';
/**
 * Turns a webhook payload into text an agent can read: a short account of GitHub's common events
 * (`workflow_run`, `check_run`, `issue_comment`, `push`, named by `X-GitHub-Event`), the JSON otherwise,
 * cut to a byte budget with a visible note. Pure functions; the payload is untrusted and only read.
 * Redaction runs before any cut: a secret cut in two no longer matches its rule, and part is kept.
 */

/** Bytes of summary text kept per delivery; the rest is cut with a note saying so. */
export const SUMMARY_MAX_BYTES = 16 * 1024;

/** Characters of the one-line title (the task of a session a hook creates). */
export const TITLE_MAX_CHARS = 200;

/** A few kilobytes of a comment or check output are enough to act on; the payload stays the bound. */
const FIELD_MAX_CHARS = 4000;
const PUSH_COMMITS_SHOWN = 20;

/** What a payload says: a title and a text. */
export interface Described {
  /** One line naming the event, e.g. `GitHub workflow_run: CI failed on main`. */
  title: string;
  /** The message text, at most the byte budget. */
  text: string;
}

/** A delivery's title and text, redacted. */
export interface EventSummary extends Described {
  /**
   * Secrets replaced with `[REDACTED]` on the way: in the payload's strings (the value whole), then in
   * the title and text made from them (a secret only their joins form). A delivery's receipt and audit
   * record count them, since the save pipeline then finds nothing left to redact.
   */
  redactions: number;
}

export interface PayloadInput {
  /** The hook's configured name. */
  hook: string;
  /** `X-GitHub-Event`, when GitHub sent it. */
  event?: string | undefined;
  /** The parsed payload, or undefined when the body is neither JSON nor GitHub's form encoding. */
  value: unknown;
  /** The body as text (invalid UTF-8 replaced; a GitHub form's `payload` decoded), shown when it does not parse. */
  raw: string;
  /** Puts back numbers a parse would change (past 2^53, `1.50`), which `value` holds as markers. */
  restore?: (text: string) => string;
}

/**
 * Reads a body as a payload: JSON, or GitHub's `application/x-www-form-urlencoded` form whose `payload`
 * field holds the JSON. A body that is neither is kept as text (`value` undefined).
 */
export function parsePayload(
  body: Uint8Array,
  contentType: string | undefined,
): { value: unknown; raw: string; restore: (text: string) => string } {
  const raw = decode(body);
  const isForm =
    (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
  if (!isForm) return parseJson(raw, raw);
  // GitHub's form: its `payload` field holds the JSON. Any other form (Slack's slash commands, Twilio, a
  // `payload` that is not JSON) is its fields, read as JSON is: until 2026-12-06 it was kept as its encoded
  // text, where `+` and `%0A` hid a private key from redaction (reviews s58i, s58j).
  const form = new URLSearchParams(raw);
  const payload = form.get('payload');
  // Its `raw` is the payload decoded, never the encoded body (review s59e: a payload the JSON walk could not
  // take was shown as that).
  const parsed = payload === null ? undefined : parseJson(payload, payload);
  if (parsed?.value !== undefined) return parsed;
  // `raw` (only its length counts then) is kept for a form read as fields, and dropped for one with none.
  if (form.size > 0) return { value: formFields(form), raw, restore: (text) => text };
  return { value: undefined, raw: '', restore: (text) => text };
}

/** `json` parsed (`raw`: its text as shown when it is not JSON, then `value` undefined). */
function parseJson(
  json: string,
  raw: string,
): { value: unknown; raw: string; restore: (text: string) => string } {
  try {
    // A 64-bit id would be shown rounded: numbers a parse would change stay as sent (exactNumbers).
    const exact = exactNumbers(json);
    return { value: JSON.parse(exact.json) as unknown, raw, restore: exact.restore };
  } catch {
    // Not JSON (or nested past what the parser takes): the text itself is the payload.
    return { value: undefined, raw, restore: (text) => text };
  }
}

/** A form's fields as an object (a name sent more than once: its values as a list), in the order sent. */
function formFields(form: URLSearchParams): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null) as Record<
    string,
    string | string[]
  >;
  for (const [name, value] of form) {
    const had = fields[name];
    fields[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return { ...fields };
}

/** The title and text for one delivery, redacted by `redact` (the save pipeline's rules). */
export function summarize(
  input: PayloadInput,
  redact: (text: string) => string,
  maxBytes = SUMMARY_MAX_BYTES,
): EventSummary {
  let redactions = 0;
  // `quiet`: what it finds is counted by the caller (redactJsonValue's hit).
  const counted = (text: string, quiet = false) => {
    const out = redact(text);
    if (out !== text && !quiet) redactions += placeholders(out) - placeholders(text);
    return out;
  };
  // Every string of the payload whole, before fields are cut; then the text built from them (the
  // raw body, a key and its value), before the budget cuts it.
  let value: unknown;
  try {
    value = redactJsonValue(input.value, counted, () => void redactions++);
  } catch {
    // Not expected (the walk takes any depth): the text is the payload, as for text that is not JSON. For a
    // GitHub form that is its decoded `payload`, never the encoded body.
    redactions = 0;
  }
  const described =
    input.event !== undefined && isObject(value) ? describeGitHub(input.event, value) : null;
  const shown = described ?? describeOther({ ...input, value }, maxBytes);
  const restore = input.restore ?? ((text: string) => text);
  const full = { title: restore(shown.title), text: restore(shown.text) };
  // Redacted up to the budget and a margin longer than any secret a rule matches, not whole: a body many
  // times the budget would cost its size in redaction for 16 KiB shown.
  const head = full.text.slice(0, maxBytes + REDACT_MARGIN);
  const total = head === full.text ? undefined : utf8Length(full.text);
  // A payload's `"\ud83d"` escape, or a cut between an emoji's halves, would be a lone surrogate (no
  // UTF-8 form; strict JSON readers refuse its escape): it becomes U+FFFD, as readJson's 400 explains.
  // The title is redacted as sent and again as one line (a secret whose name and value only its joined
  // lines put together), before it is cut: a cut secret may be too short for its rule (review s57d).
  return {
    title: oneLine(counted(oneLine(counted(full.title), Infinity)), TITLE_MAX_CHARS).toWellFormed(),
    text: truncateUtf8(counted(head), maxBytes, total).toWellFormed(),
    redactions,
  };
}

/** How many placeholders `text` holds. */
function placeholders(text: string): number {
  return text.split(PLACEHOLDER).length - 1;
}

/** Characters redacted past the budget, so that a secret across the cut is redacted whole. */
const REDACT_MARGIN = 64 * 1024;

/** GitHub's common events in words; other GitHub events as their JSON under a title. */
export function describeGitHub(event: string, p: Record<string, unknown>): Described {
  switch (event) {
    case 'workflow_run':
      return workflowRun(p);
    case 'check_run':
      return checkRun(p);
    case 'issue_comment':
      return issueComment(p);
    case 'push':
      return push(p);
    default: {
      const action = str(p, 'action');
      const repo = str(p, 'repository.full_name');
      const title = `GitHub ${event}${action ? ` ${action}` : ''}${repo ? ` in ${repo}` : ''}`;
      return { title, text: `${title}\n\n${prettyJson(p)}` };
    }
  }
}

function workflowRun(p: Record<string, unknown>): Described {
  const name = str(p, 'workflow_run.name') ?? str(p, 'workflow.name') ?? 'workflow';
  const branch = str(p, 'workflow_run.head_branch');
  const outcome = outcomeOf(str(p, 'workflow_run.status'), str(p, 'workflow_run.conclusion'));
  const runNumber = str(p, 'workflow_run.run_number');
  const attempt = Number(str(p, 'workflow_run.run_attempt') ?? 1);
  const trigger = str(p, 'workflow_run.event');
  const actor =
    str(p, 'workflow_run.triggering_actor.login') ??
    str(p, 'workflow_run.actor.login') ??
    str(p, 'sender.login');
  return {
    title: `GitHub workflow_run: ${name} ${outcome}${onBranch(branch)}`,
    text: lines(
      `Workflow "${name}"${runNumber ? ` run #${runNumber}` : ''} ${outcome}${onBranch(branch)}${inRepo(p)}.`,
      field(
        'Commit',
        joinWords(
          short(str(p, 'workflow_run.head_sha')),
          quoted(str(p, 'workflow_run.display_title')),
        ),
      ),
      field('Triggered by', joinWords(trigger, actor ? `from ${actor}` : undefined)),
      attempt > 1 ? `Attempt: ${attempt}` : undefined,
      field('URL', str(p, 'workflow_run.html_url')),
    ),
  };
}

function checkRun(p: Record<string, unknown>): Described {
  const name = str(p, 'check_run.name') ?? 'check';
  const branch = str(p, 'check_run.check_suite.head_branch');
  const outcome = outcomeOf(str(p, 'check_run.status'), str(p, 'check_run.conclusion'));
  return {
    title: `GitHub check_run: ${name} ${outcome}${onBranch(branch)}`,
    text: lines(
      `Check "${name}" ${outcome}${onBranch(branch)}${inRepo(p)}.`,
      field('Commit', short(str(p, 'check_run.head_sha'))),
      field('App', str(p, 'check_run.app.name')),
      field('Output', str(p, 'check_run.output.title')),
      block(str(p, 'check_run.output.summary')),
      block(str(p, 'check_run.output.text')),
      field('URL', str(p, 'check_run.html_url') ?? str(p, 'check_run.details_url')),
    ),
  };
}

function issueComment(p: Record<string, unknown>): Described {
  const who = str(p, 'comment.user.login') ?? str(p, 'sender.login') ?? 'someone';
  const action = str(p, 'action') ?? 'created';
  const verb =
    action === 'created'
      ? 'commented on'
      : action === 'edited'
        ? 'edited a comment on'
        : action === 'deleted'
          ? 'deleted a comment on'
          : `${action} a comment on`;
  const kind = get(p, 'issue.pull_request') !== undefined ? 'pull request' : 'issue';
  const number = str(p, 'issue.number');
  const issueTitle = str(p, 'issue.title');
  const target = `${kind}${number ? ` #${number}` : ''}`;
  return {
    title: `GitHub issue_comment: ${who} ${verb} ${target}${issueTitle ? ` ${issueTitle}` : ''}`,
    text: lines(
      `${joinWords(who, verb, target, quoted(issueTitle))}${inRepo(p)}:`,
      block(str(p, 'comment.body')),
      field('URL', str(p, 'comment.html_url') ?? str(p, 'issue.html_url')),
    ),
  };
}

function push(p: Record<string, unknown>): Described {
  const ref = str(p, 'ref') ?? '';
  const isTag = ref.startsWith('refs/tags/');
  const refName = ref.replace(/^refs\/(heads|tags)\//, '') || 'a ref';
  const where = isTag ? `tag ${refName}` : refName;
  const who = str(p, 'pusher.name') ?? str(p, 'sender.login') ?? 'someone';
  const commits = Array.isArray(p.commits) ? p.commits : [];
  const n = commits.length;
  let headline: string;
  if (get(p, 'deleted') === true)
    headline = `${who} deleted ${isTag ? `tag ${refName}` : `branch ${refName}`}`;
  else if (get(p, 'created') === true && n === 0)
    headline = `${who} created ${isTag ? `tag ${refName}` : `branch ${refName}`}`;
  else
    headline =
      `${who} ${get(p, 'forced') === true ? 'force-pushed' : 'pushed'} ` +
      `${n} commit${n === 1 ? '' : 's'} to ${where}`;
  const shown = commits.slice(0, PUSH_COMMITS_SHOWN).map((c) => {
    const author = str(c, 'author.username') ?? str(c, 'author.name');
    return `- ${joinWords(short(str(c, 'id')), firstLine(str(c, 'message')), author ? `(${author})` : undefined)}`;
  });
  return {
    title: `GitHub push: ${headline}`,
    text: lines(
      `${headline}${inRepo(p)}.`,
      field(
        'Range',
        str(p, 'before') && str(p, 'after')
          ? `${short(str(p, 'before'))}..${short(str(p, 'after'))}`
          : undefined,
      ),
      ...shown,
      n > shown.length ? `- … and ${n - shown.length} more` : undefined,
      field('Compare', str(p, 'compare')),
    ),
  };
}

/** Anything that is not one of GitHub's events: the JSON (pretty when small), or the body's text. */
function describeOther(input: PayloadInput, maxBytes: number): Described {
  const kind = isObject(input.value)
    ? (str(input.value, 'type') ?? str(input.value, 'event'))
    : undefined;
  const label = input.event !== undefined ? `GitHub ${input.event}` : `Webhook ${input.hook}`;
  const title = `${label}${kind ? `: ${kind}` : ''}`;
  // Pretty-printing a body many times the budget would only be cut away again; compact JSON is as
  // readable. Either is made from the value (redacted), never from the raw body.
  const body =
    input.value === undefined
      ? input.raw
      : input.raw.length <= 4 * maxBytes
        ? prettyJson(input.value)
        : jsonText(input.value);
  return { title, text: `${title}\n\n${body}` };
}

/** In words: a conclusion when there is one (`failed`, `succeeded`, …), else the status. */
export function outcomeOf(status: string | undefined, conclusion: string | undefined): string {
  const conclusions: Record<string, string> = {
    success: 'succeeded',
    failure: 'failed',
    cancelled: 'was cancelled',
    timed_out: 'timed out',
    action_required: 'needs action',
    skipped: 'was skipped',
    neutral: 'finished (neutral)',
    stale: 'went stale',
    startup_failure: 'failed to start',
  };
  if (conclusion)
    return Object.hasOwn(conclusions, conclusion)
      ? conclusions[conclusion]!
      : `finished (${conclusion})`;
  if (status) return status.replaceAll('_', ' ');
  return 'reported';
}

/**
 * Cuts text to `maxBytes` of UTF-8 (never inside a character), ending with a note that says how much was
 * kept, so a reader knows the payload was longer.
 */
export function truncateUtf8(text: string, maxBytes: number, totalBytes?: number): string {
  const bytes = utf8(text);
  if (bytes.byteLength <= maxBytes) return text;
  // `totalBytes`: the size of the whole text when `text` is only its beginning.
  const total = totalBytes ?? bytes.byteLength;
  const note = (kept: number) =>
    `\n\n[satchel] truncated: the first ${kept} of ${total} bytes are shown.`;
  let cut = Math.max(0, maxBytes - utf8(note(maxBytes)).byteLength);
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
  return decode(bytes.subarray(0, cut)) + note(cut);
}

/** One line (whitespace and control characters collapsed), at most `max` characters. */
export function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length <= max ? flat : flat.slice(0, max - 1).trimEnd() + '…';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at a dotted path of own properties, or undefined. */
function get(v: unknown, path: string): unknown {
  let at: unknown = v;
  for (const part of path.split('.')) {
    if (!isObject(at) || !Object.hasOwn(at, part)) return undefined;
    at = at[part];
  }
  return at;
}

/** A non-empty string (or a number, as text) at a dotted path. */
function str(v: unknown, path: string): string | undefined {
  const found = get(v, path);
  if (typeof found === 'number' && Number.isFinite(found)) return String(found);
  return typeof found === 'string' && found !== '' ? found : undefined;
}

function prettyJson(v: unknown): string {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    // Nested past what JSON.stringify takes (a few thousand levels): compact.
    return jsonText(v);
  }
}

function lines(...parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p !== '').join('\n');
}

function field(label: string, value: string | undefined): string | undefined {
  return value ? `${label}: ${value}` : undefined;
}

function block(value: string | undefined): string | undefined {
  if (!value) return undefined;
  return value.length <= FIELD_MAX_CHARS
    ? `\n${value}\n`
    : `\n${value.slice(0, FIELD_MAX_CHARS)}…\n`;
}

function joinWords(...parts: (string | undefined)[]): string | undefined {
  const kept = parts.filter((p): p is string => Boolean(p));
  return kept.length ? kept.join(' ') : undefined;
}

function quoted(value: string | undefined): string | undefined {
  return value ? `"${oneLine(value, 120)}"` : undefined;
}

function short(sha: string | undefined): string | undefined {
  return sha ? sha.slice(0, 7) : undefined;
}

function firstLine(message: string | undefined): string | undefined {
  return message ? oneLine(message.split('\n')[0]!, 120) : undefined;
}

function onBranch(branch: string | undefined): string {
  return branch ? ` on ${branch}` : '';
}

function inRepo(p: Record<string, unknown>): string {
  const repo = str(p, 'repository.full_name');
  return repo ? ` in ${repo}` : '';
}
