import { exactJson } from '../model/exact-json.js';
import { textOfParts, type ContentPart } from '../model/parts.js';
import type { SearchHit, Session, SessionSummary } from '../client/types.js';

/**
 * Text for people: odek's session table, a readable transcript, search hits. Pure functions. What they
 * print is stored text (webhook payloads, tool output, imported files), so it goes through `inert`.
 */

/**
 * Control characters (C0 but line feed and tab, DEL, C1; a CR before a line feed goes) and bidirectional
 * overrides shown as `\u001b` escapes: stored text cannot move the cursor, clear or retitle the terminal,
 * write the clipboard (OSC 52) or reorder what is shown.
 */
export function inert(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .replace(
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

/** One line of a free text: newlines and runs of spaces collapsed, cut to `width` with an ellipsis. */
export function oneLine(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (width <= 1) return flat.slice(0, Math.max(0, width));
  return [...flat].length > width ? [...flat].slice(0, width - 1).join('') + '…' : flat;
}

/** Left-aligned columns; the last column gets what is left of `width`. */
export function table(headers: string[], rows: string[][], width: number): string {
  const widths = headers.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => [...(r[i] ?? '')].length)),
  );
  const fixed = widths.slice(0, -1).reduce((n, w) => n + w + 2, 0);
  const lastWidth = Math.max(10, width - fixed);
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1 ? oneLine(c, lastWidth) : c + ' '.repeat(widths[i]! - [...c].length),
      )
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** odek's `session list` table: ID, Turns, Model, Task. */
export function sessionTable(sessions: SessionSummary[], width: number): string {
  if (sessions.length === 0) return 'No sessions.\n';
  return table(
    ['ID', 'Turns', 'Model', 'Task'],
    sessions.map((s) => [s.id, String(s.turns), inert(s.model || '-'), inert(s.task)]),
    width,
  );
}

/** Search hits: id, score and task, with the snippet indented below. */
export function searchHits(hits: SearchHit[], width: number): string {
  if (hits.length === 0) return 'No matching sessions.\n';
  return hits
    .map(
      (h) =>
        `${h.id}  ${h.score.toFixed(3)}  ${oneLine(inert(h.task), Math.max(20, width - h.id.length - 9))}\n` +
        `    ${oneLine(inert(h.snippet), Math.max(20, width - 4))}\n`,
    )
    .join('');
}

const TOOL_RESULT_LINES = 20;

/**
 * A session as a transcript: a header, then each message under its role. Tool calls sit indented under
 * the assistant message that made them (`→ name #id` and the arguments); tool results are indented and
 * labelled with the call they answer, and cut to 20 lines unless `full`.
 */
export function transcript(session: Session, options: { full?: boolean } = {}): string {
  const out: string[] = [];
  out.push(`Session ${session.id}`);
  out.push(`Task:     ${session.task}`);
  const model = session.model
    ? `${session.model}${session.provider ? ` (${session.provider})` : ''}`
    : '-';
  out.push(`Model:    ${model}`);
  const messages = session.messages.length;
  out.push(
    `Turns:    ${session.turns} · ${messages} message${messages === 1 ? '' : 's'} · revision ${session.revision}`,
  );
  out.push(`Created:  ${session.created_at} · updated ${session.updated_at}`);
  const flags = (['sandbox', 'untrusted_ingested', 'episode_untrusted'] as const).filter(
    (f) => session[f],
  );
  if (flags.length) out.push(`Flags:    ${flags.join(', ')}`);
  for (const ref of session.external_refs) {
    out.push(
      `Ref:      ${ref.kind} ${ref.uri} (${ref.created_by}${ref.read_only ? ', read-only' : ''})`,
    );
  }
  const toolNames = new Map<string, string>();
  for (const m of session.messages) {
    out.push('');
    if (m.role === 'tool') {
      const name = m.name ?? (m.tool_call_id ? toolNames.get(m.tool_call_id) : undefined);
      out.push(
        `── tool result${name ? ` ${name}` : ''}${m.tool_call_id ? ` #${m.tool_call_id}` : ''} ──`,
      );
      out.push(
        indent(clip(textOf(m.content), options.full ? Infinity : TOOL_RESULT_LINES), '    '),
      );
      continue;
    }
    out.push(`── ${m.role}${m.name ? ` (${m.name})` : ''} ──`);
    if (m.reasoning_content) out.push(indent(`(reasoning) ${m.reasoning_content}`, '  '));
    if (m.content) out.push(textOf(m.content));
    for (const call of m.tool_calls ?? []) {
      toolNames.set(call.id, call.function.name);
      out.push(`  → tool call ${call.function.name} #${call.id}`);
      out.push(indent(prettyArguments(call.function.arguments), '      '));
    }
  }
  return inert(out.join('\n')) + '\n';
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => (l ? prefix + l : l))
    .join('\n');
}

function clip(text: string, lines: number): string {
  const all = text.split('\n');
  if (all.length <= lines) return text;
  return [...all.slice(0, lines), `… ${all.length - lines} more lines (--full shows all)`].join(
    '\n',
  );
}

/**
 * Tool-call arguments on one line when they are JSON that reads back exactly as stored, else as stored:
 * a JSON round trip would change numbers and keys (12345678901234567891, 1e400, 1.50, a repeated key).
 */
function prettyArguments(args: string): string {
  return exactJson(args) ?? args;
}

/** A message's text, whether its content is a string or parts. */
function textOf(content: string | readonly ContentPart[]): string {
  return typeof content === 'string' ? content : textOfParts(content);
}
