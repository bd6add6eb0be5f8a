import { PARTS_FIELD, textFieldOf, type ContentPart } from '../model/parts.js';
import type { Message } from '../model/session.js';

/**
 * Provenance flags. `untrusted_ingested`: some content carries an untrusted-content wrapper whose label
 * is not one the engine itself produces. `episode_untrusted`: the episode crossed the trust boundary
 * (MCP, network or delegation tools, shell commands with a network effect, or wrappers in non-tool
 * messages). Both are sticky; the save pipeline ORs what is stored, what the client sends, and this scan.
 */

const OPENING = /<untrusted_content_([0-9a-f]{16}) source="([^"\n]{0,256})">/g;
const CLOSING = /<\/untrusted_content_([0-9a-f]{16})>/g;

const ENGINE_LABELS = new Set([
  'compaction',
  'plan',
  'plan_remaining',
  'memory',
  'persisted_system',
  'progress_summary',
  'completed_effects',
  'skill',
  'extended_memory',
  'return_after_break',
]);

const NETWORK_TOOLS = new Set([
  'browser',
  'http_request',
  'http_batch',
  'web_search',
  'session_search',
  'vision',
  'transcribe',
  'delegate_tasks',
  'artifact_read',
]);

const SHELL_TOOLS =
  /^(shell|bash|sh|zsh|exec|execute|run|run_command|run_shell|terminal|command|cmd|powershell|process)$/i;
const NETWORK_COMMAND =
  /(?:^|[\s;&|(`$])(?:curl|wget|ssh|scp|sftp|rsync|nc|ncat|netcat|telnet|ftp|httpie|http|aria2c|git\s+(?:push|pull|clone|fetch|ls-remote|submodule\s+update)|npm\s+(?:install|i|ci|publish|update)|npx|pnpm\s+(?:install|add|i)|yarn(?:\s+(?:install|add))?|pip3?\s+(?:install|download)|uv\s+(?:pip\s+install|add|sync)|poetry\s+(?:install|add)|cargo\s+(?:install|add|fetch|publish)|go\s+(?:get|install|mod\s+download)|gem\s+install|apt(?:-get)?\s+(?:install|update)|brew\s+install|docker\s+(?:pull|push|login)|kubectl|gh|aws|gcloud|az)(?=$|[\s;&|)`])/;

/** Labels of the untrusted-content wrappers in `text` (only well-formed wrappers with a matching end tag). */
export function wrapperLabels(text: string): string[] {
  if (!text.includes('<untrusted_content_')) return [];
  // Linear: until 2026-12-07 one regex took opening, lazy body and closing tag, so from each opening
  // without a closing tag the body scanned to the end of the text (32,000 of them took 13 s to save,
  // review s60a). Each nonce's last closing tag is found first; an opening after it is skipped.
  const lastClose = new Map<string, number>();
  CLOSING.lastIndex = 0;
  for (let m = CLOSING.exec(text); m; m = CLOSING.exec(text)) lastClose.set(m[1]!, m.index);
  const out: string[] = [];
  OPENING.lastIndex = 0;
  for (let m = OPENING.exec(text); m; m = OPENING.exec(text)) {
    if ((lastClose.get(m[1]!) ?? -1) < OPENING.lastIndex) continue;
    const close = `</untrusted_content_${m[1]}>`;
    OPENING.lastIndex = text.indexOf(close, OPENING.lastIndex) + close.length;
    out.push(m[2]!);
  }
  return out;
}

/** True for labels that the engine derives itself (never untrusted ingestion). */
export function isEngineLabel(label: string): boolean {
  return ENGINE_LABELS.has(label) || label.startsWith('pure_tool:');
}

/** Labels that do not make a non-tool message cross the episode's trust boundary. */
function isEpisodeLocalLabel(label: string): boolean {
  return (
    label === 'episode' ||
    label === 'bg' ||
    label.startsWith('tool:') ||
    label.startsWith('project:') ||
    isEngineLabel(label)
  );
}

export interface TaintScan {
  untrustedIngested: boolean;
  episodeUntrusted: boolean;
  /** Labels of ingested untrusted content, for the audit record. */
  sources: string[];
}

/** Scans messages for both flags. */
export function scanTaint(messages: Message[]): TaintScan {
  const sources = new Set<string>();
  let untrustedIngested = false;
  let episodeUntrusted = false;
  for (const m of messages) {
    for (const text of textsOf(m)) {
      for (const label of wrapperLabels(text)) {
        if (!isEngineLabel(label)) {
          untrustedIngested = true;
          sources.add(label);
        }
        if (m.role !== 'tool' && !isEpisodeLocalLabel(label)) episodeUntrusted = true;
      }
    }
    for (const call of m.tool_calls ?? []) {
      if (crossesTrustBoundary(call.function.name, call.function.arguments))
        episodeUntrusted = true;
    }
  }
  return { untrustedIngested, episodeUntrusted, sources: [...sources] };
}

/**
 * The texts of a message a wrapper can be in: `content`, `reasoning_content`, and the text of its reasoning
 * parts (the AI SDK's `{type: "reasoning", text}`), which since 2026-12-05 is not in `content` (docs/api.md
 * "Parts"); until review s52f a wrapper there set neither flag.
 */
function textsOf(m: Message): string[] {
  const texts = [m.content, m.reasoning_content ?? ''];
  const parts = (m as Record<string, unknown>)[PARTS_FIELD];
  if (!Array.isArray(parts)) return texts;
  for (const p of parts as unknown[]) {
    if (!p || typeof p !== 'object') continue;
    const part = p as ContentPart;
    if (
      typeof part.type === 'string' &&
      textFieldOf(part) === null &&
      typeof part['text'] === 'string'
    )
      texts.push(part['text']);
  }
  return texts;
}

/** MCP tools (`server__tool`), network and delegation tools, and shell commands with a network effect. */
export function crossesTrustBoundary(name: string, args: string): boolean {
  if (name.includes('__')) return true;
  if (NETWORK_TOOLS.has(name)) return true;
  if (SHELL_TOOLS.test(name)) {
    let command = args;
    try {
      const parsed = JSON.parse(args) as Record<string, unknown>;
      const value = parsed.command ?? parsed.cmd ?? parsed.script ?? parsed.input ?? parsed.args;
      command = Array.isArray(value) ? value.join(' ') : typeof value === 'string' ? value : args;
    } catch {
      // not JSON: the arguments are the command line
    }
    return NETWORK_COMMAND.test(command);
  }
  return false;
}
