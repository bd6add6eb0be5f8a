import {
  refKind,
  refUri,
  type ExternalRef,
  type Message,
  type StoredSession,
} from '../model/session.js';
import { badRequest, NeedsWholeSession, payloadTooLarge } from '../model/errors.js';
import {
  bytesOf,
  fromUtf16,
  spacedGroups,
  strictText,
  text as lenientText,
  toBase64,
  toUtf16,
  utf8,
} from '../model/bytes.js';
import {
  BASE64_FIELDS,
  metadataSchema,
  PARTS_FIELD,
  textOfParts,
  textFieldOf,
  textsOfParts,
  type ContentPart,
} from '../model/parts.js';
import { capMessages, jsonBytes } from './cap.js';
import { exactNumbers } from '../model/json-numbers.js';
import { textNestedPast } from '../model/json-depth.js';
import { refKey } from '../model/refs.js';
import { isStandIn, PLACEHOLDER, type Redactor } from './redact.js';
import { scanTaint } from './taint.js';

/**
 * The save pipeline: the one place every session write passes through on its way to storage, after the
 * operation has built the next state and before it is serialised. In order: redaction (on copies; the
 * client's objects are never changed), taint flags, sticky fields, the size cap. It remembers how much
 * of the session it has scanned, so an append scans only the new messages.
 */
export interface SaveInput {
  /** The state the operation wants to store (a fresh top-level object the pipeline may change). */
  next: StoredSession;
  /** The stored state it replaces, or null on create. */
  previous: StoredSession | null;
  /** Size in bytes of the stored previous object, when known (lets an append skip measuring the session). */
  previousBytes?: number;
  /** Secret values registered for this request only. */
  knownValues?: string[];
  /**
   * How many trailing messages of `next` are new in this write (an append, a replace): if the size cap
   * would drop the newest of them, nothing new could be stored and the write is refused (413) instead.
   */
  newMessages?: number;
  /**
   * A PUT or an import (not an append): the write is refused when the cap would drop every message it
   * changed or added, wherever they lie, not only its newest message.
   */
  replaced?: boolean;
  /**
   * Set when `next` and `previous` are partial copies: their messages before this index are absent
   * (undefined), unchanged from what is stored. The pipeline then works from the scan record, the stored
   * flags and `previousBytes` alone, and throws `NeedsWholeSession` when it cannot (a rescan, the cap's
   * measured path, a session not yet taint-tracked).
   */
  held?: number;
  /**
   * At most how many bytes the caller adds to the object after the pipeline (its write records' receipts
   * and audit fields), given the state the cap is about to measure and the labels of untrusted content
   * this write brings in: the cap keeps room for exactly that, so the stored object stays under it.
   */
  reserve?: (at: ReserveInput) => number;
}

/** What the cap is about to fit, for `SaveInput.reserve`. */
export interface ReserveInput {
  /** The state after redaction and taint flags, before the cap. */
  session: StoredSession;
  /** Labels of untrusted content this write brings in. */
  sources: string[];
  /** Secrets redacted so far by this write (the cap redacts nothing more). */
  redactions: number;
  /** The cap: no receipt counts more bytes. */
  maxBytes: number;
}

export interface SaveOutput {
  session: StoredSession;
  redactions: number;
  dropped_groups: number;
  /** True when the head alone was over the cap and the first user message was dropped (create only). */
  head_dropped: boolean;
  /** Labels of untrusted content this write brought in (for the audit record). */
  sources: string[];
  /** Messages scanned by this write (the rest were proven unchanged). */
  scanned: number;
  /**
   * Of `redactions`, those in each message (by its index in `next` as sent; unset for messages not
   * scanned): a group commit's members each count their own (lib/sessions/write-loop.ts).
   */
  byMessage: number[];
}

export interface SavePipeline {
  apply(input: SaveInput): SaveOutput;
  /** The size cap it holds sessions to (unset: none): the store keeps its bookkeeping well under it. */
  readonly maxSessionBytes?: number;
  /**
   * Redacts a free-form string with the same rules, as a message's text (the files in its `data:` URLs
   * too; audit records, ids), and a request's own secret values (`Satchel-Secrets`) when given.
   */
  redactText(text: string, knownValues?: string[]): string;
}

/** Proof of what was scanned: the first `n` messages, whose chained digest is `d`, under rule set `v`. */
export interface ScanRecord {
  v: string;
  n: number;
  d: string;
}

export interface PipelineOptions {
  redactor: Redactor;
  /** Identifies the rule table and configured secrets: a change rescans stored sessions on their next save. */
  rulesVersion: string;
  maxSessionBytes: number;
}

/** Growth of times and counters tolerated on the fast path of an append (other fields are measured). */
const FAST_PATH_SLACK = 16 * 1024;

/**
 * Core rules: `untrusted_ingested`, `episode_untrusted` and `sandbox` never go back to false; `turns` is
 * derived (on partial copies, from the stored count and the messages held: the absent ones are unchanged).
 */
export function applyCoreRules(
  next: StoredSession,
  previous: StoredSession | null,
  held = 0,
): StoredSession {
  next.untrusted_ingested = next.untrusted_ingested || (previous?.untrusted_ingested ?? false);
  next.episode_untrusted = next.episode_untrusted || (previous?.episode_untrusted ?? false);
  next.sandbox = next.sandbox || (previous?.sandbox ?? false);
  next.turns =
    held > 0 && previous
      ? previous.turns - userTurns(previous.messages, held) + userTurns(next.messages, held)
      : userTurns(next.messages, 0);
  return next;
}

function userTurns(messages: readonly Message[], from: number): number {
  let n = 0;
  for (let i = from; i < messages.length; i++) if (messages[i]!.role === 'user') n++;
  return n;
}

/**
 * The pipeline's redaction of a string, inline files in it included (a `data:` URL in a message's text,
 * a ref's uri: `inlineText`), counting what it finds unless `quiet` (it was counted already: the same
 * text elsewhere).
 */
function redactingText(redactor: Redactor, count: (n: number) => void): TextFn {
  const text: TextFn = (s, quiet) => {
    const r = redactor.redact(/;base64,/i.test(s) ? inlineUrls(s, (t) => text(t, quiet)) : s);
    if (!quiet) count(r.count);
    return r.text;
  };
  return text;
}

/** A line break in a URL's base64, also escaped as JSON text has it (`\\n`, `\\r\\n`). */
const LINE_BREAK = String.raw`(?:(?:\\r)?\\n|\r?\n|\r)`;

/**
 * `s` with the file of each `data:…;base64,` URL in it redacted (`inlineUrl`). A URL's parameters may
 * hold blanks (`; charset=utf-8`) and a colon before a slash or backslash (`name=C:\\x.env`,
 * `src=s3://b/.env`), but not a `data:`'s, so each try ends at the next `data:` (`data:/srv` too); its
 * base64 may be percent-encoded (`%2B`) and wrapped (LF, CRLF, CR, or those escaped in JSON text, then
 * indentation). Lines are followed one regex call at a time (one regex over every line overflowed its
 * stack on millions of short lines).
 */
function inlineUrls(s: string, file: (t: string) => string): string {
  const head = /data:(?:[^,:]|(?<!data):(?=[\\/])){0,4096};base64,/gi;
  const run = /[\w+/=%-]*/y;
  const wrap = new RegExp(LINE_BREAK + String.raw`[ \t]*(?!data:)(?=[\w+/=%-])`, 'iy'); // not the next URL
  let out = '';
  let last = 0;
  for (let found = head.exec(s); found; found = head.exec(s)) {
    let end = head.lastIndex;
    for (;;) {
      run.lastIndex = end;
      run.exec(s);
      wrap.lastIndex = end = run.lastIndex;
      if (!wrap.exec(s)) break;
      end = wrap.lastIndex;
    }
    const whole = !found.index && !s.slice(end).trim();
    // A URL that is the whole string, its base64 in groups with blanks between (decoders skip them):
    // three or more, all of one width (a multiple of 4) but a shorter last one, so a word after it stays.
    if (
      !found.index &&
      !whole &&
      /^[\w+/=%\s-]*$/.test(s.slice(end)) &&
      spacedGroups(s.slice(head.lastIndex))
    ) {
      const spaced = inlineUrl(s, true, file);
      if (spaced !== s) return spaced;
    }
    out += s.slice(last, found.index) + inlineUrl(s.slice(found.index, end), whole, file);
    last = head.lastIndex = end;
  }
  return out + s.slice(last);
}

/**
 * A data: URL found in text (`m`: its parameters, then base64 lines) with its file redacted
 * (`inlineText`), and what follows it in `m` as it was. Wrapped base64 (a `base64` tool's 76 characters
 * a line, PEM's 64, `base64 -w 16`) takes the next line only after a line of the first one's width (16
 * to 120 characters, a multiple of 4), and only a line of that width or a shorter one that ends whole (a
 * multiple of 4), its last, so a word on the line after the URL stays text; a URL that is the whole
 * string (`whole`) takes every line. When that reading does not decode as text (UTF-8 or UTF-16), the
 * URL without its last line is tried, and a Latin-1 reading only when neither is UTF-8. (Until review
 * s62r the first line had to be 60 wide: a file wrapped narrower after other text had that line read alone.)
 */
function inlineUrl(m: string, whole: boolean, file: (t: string) => string): string {
  const start = m.indexOf(',') + 1;
  const breaks = new RegExp(LINE_BREAK + String.raw`[ \t]*`, 'g');
  breaks.lastIndex = start;
  let cut = breaks.exec(m);
  let end = cut ? cut.index : m.length; // where the lines taken end
  let before = -1; // where they ended before the last one was taken
  const width = end - start;
  if (whole || (width >= 16 && width <= 120 && width % 4 === 0))
    for (let size = width; cut && (whole || size === width);) {
      const from = breaks.lastIndex;
      const next = breaks.exec(m);
      const to = next ? next.index : m.length;
      size = to - from;
      if (!whole && size !== width && size % 4) break;
      [before, end, cut] = [end, to, next];
    }
  const decode = (to: number, strict: boolean) => {
    const b64 = m.slice(start, to).replace(breaks, '');
    const plain = b64.replace(/%2b/gi, '+').replace(/%2f/gi, '/').replace(/%3d/gi, '=');
    return inlineText(m.slice(0, start) + plain, file, strict);
  };
  let out = decode(end, before >= 0);
  if (out == null && before >= 0) {
    // Not UTF-8 with the last line, or nothing to redact: a word after the URL may have made it so.
    const latin = out === null;
    if ((out = decode(before, true)) != null) end = before;
    else if (latin && out === null) out = decode(end, false); // not UTF-8 either way: Latin-1
  }
  return (out ?? m.slice(0, end)) + m.slice(end);
}

/** The full pipeline: redaction, taint flags, sticky fields and the size cap. */
export function createSavePipeline(options: PipelineOptions): SavePipeline {
  return {
    // As a message's text is redacted, with the files inside its `data:` URLs (a continue's repeat finds
    // its stored message by this form).
    redactText: (text, known) =>
      redactingText(
        known?.length ? options.redactor.withKnownValues(known) : options.redactor,
        () => {},
      )(text),
    apply: (input) => applyPipeline(options, input),
    maxSessionBytes: options.maxSessionBytes,
  };
}

/** One pass of the full pipeline over a write. */
function applyPipeline(options: PipelineOptions, input: SaveInput): SaveOutput {
  const { next, previous, previousBytes, knownValues, newMessages = 0, held = 0, reserve } = input;
  const { maxSessionBytes, rulesVersion } = options;
  const redactor = knownValues?.length
    ? options.redactor.withKnownValues(knownValues)
    : options.redactor;
  // A prefix scanned with the rules plus this request's known values is clean under the rules alone, so
  // the scan record names the rules only: the next write trusts it instead of scanning everything again.
  const version = rulesVersion;
  let redactions = 0;
  const text = redactingText(redactor, (n) => (redactions += n));
  const hit = () => void redactions++;

  // 1. What is already proven scanned: a prefix identical to the stored one, under the same rules.
  let { trusted, digest } = trustedPrefix(
    next,
    previous,
    rulesVersion,
    !!knownValues?.length,
    held,
  );
  // A partial copy is written only as an append on a prefix proven scanned (and taint-tracked).
  if (held > 0 && (trusted !== previous?.messages.length || !previous.episode_taint_tracked))
    throw new NeedsWholeSession('scan');

  // 2. Taint, on what was sent (a redacted `curl` command or a longer label would hide it): only new
  // messages once the session is tracked; its whole history the first time. Labels are redacted.
  const tracked = previous?.episode_taint_tracked === true && trusted > 0;
  const taint = scanTaint(next.messages.slice(tracked ? trusted : 0));
  const sources = [...new Set(taint.sources.map((s) => text(s, true)))];

  // 3. Redact the rest, on copies.
  const byMessage: number[] = [];
  let seen = redactions;
  const messages = redactSession(next, previous, trusted, text, hit, (i) => {
    byMessage[i] = redactions - seen;
    seen = redactions;
  });
  next.untrusted_ingested = next.untrusted_ingested || taint.untrustedIngested;
  next.episode_untrusted = next.episode_untrusted || taint.episodeUntrusted;
  next.episode_taint_tracked = true;
  applyCoreRules(next, previous, held);

  // 4. The size cap, measured only when an append could have crossed it.
  const cap = applySizeCap(next, previous, messages, {
    trusted,
    previousBytes,
    newMessages,
    version,
    maxSessionBytes,
    held,
    reserve: reserve?.({ session: next, sources, redactions, maxBytes: maxSessionBytes }) ?? 0,
    replaced: input.replaced === true,
  });
  if (cap.moved) {
    // The prefix moved: the digest is recomputed over what is stored.
    trusted = 0;
    digest = '';
  }

  // 5. Remember what is now proven scanned.
  const scan: ScanRecord = {
    v: version,
    n: next.messages.length,
    d: chain(digest, next.messages.slice(trusted)),
  };
  next.satchel = { ...(next.satchel ?? { writes: [] }), scan };
  return {
    session: next,
    redactions,
    dropped_groups: cap.dropped,
    head_dropped: cap.headDropped,
    sources,
    scanned: messages.length - trusted,
    byMessage,
  };
}

/** The prefix of `next` proven scanned by the stored scan record: its length and chained digest. */
function trustedPrefix(
  next: StoredSession,
  previous: StoredSession | null,
  rulesVersion: string,
  requestSecrets: boolean,
  held: number,
): { trusted: number; digest: string } {
  const prior = previous?.satchel?.scan as ScanRecord | undefined;
  let trusted = 0;
  let digest = '';
  if (previous && prior && prior.v === rulesVersion && prior.n <= previous.messages.length) {
    const n = Math.min(prior.n, next.messages.length);
    let same = true;
    for (let i = held; i < n && same; i++) same = next.messages[i] === previous.messages[i];
    // On a partial copy only the same objects prove anything (the absent messages are unchanged).
    if (held > 0)
      return same && n === prior.n ? { trusted: n, digest: prior.d } : { trusted, digest };
    // Equal copies resent with request secrets are part of the request: scanned for its values.
    const proven = same || (!requestSecrets && chain('', next.messages.slice(0, n)) === prior.d);
    if (n === prior.n && proven) {
      trusted = n;
      digest = prior.d;
    } else if (n < prior.n && same && !requestSecrets) {
      // A pop: what is left was scanned, the same objects. Its digest is that of the shorter prefix,
      // trusted when the rest of the stored prefix chains on to the stored digest. A pop that registers
      // request secrets scans everything again, so that they leave the history too.
      const shorter = chain('', next.messages.slice(0, n));
      if (chain(shorter, previous.messages.slice(n, prior.n)) === prior.d) {
        trusted = n;
        digest = shorter;
      }
    }
  }
  return { trusted, digest };
}

/** Redacts the messages after the trusted prefix and the free-text fields, on copies. */
function redactSession(
  next: StoredSession,
  previous: StoredSession | null,
  trusted: number,
  text: (s: string) => string,
  hit: () => void,
  /** Told after each message is redacted. */
  done: (i: number) => void,
): Message[] {
  const messages = next.messages.slice();
  for (let i = trusted; i < messages.length; i++) {
    messages[i] = redactMessage(messages[i]!, text, hit);
    done(i);
  }
  next.messages = messages;
  next.task = text(next.task);
  next.model = text(next.model);
  next.provider = text(next.provider);
  next.external_refs = redactRefs(next.external_refs, text, previous?.external_refs ?? []);
  const sent = next.metadata;
  if (sent) next.metadata = redactJson(sent, text, hit) as Record<string, string>;
  // Metadata the write leaves as stored is not checked: new rules may have grown it past its limits, but
  // that is no caller's doing, and what GET answered can be PUT back. Other metadata must be within them
  // as sent (a PUT's body schema lets the stored metadata through), and as stored: a secret's placeholder
  // can be longer than it (`"token": "x"`), and a GET-then-PUT of the session must not be refused.
  const json = JSON.stringify(sent);
  if (sent && json !== JSON.stringify(previous?.metadata)) {
    const own = metadataSchema.safeParse(sent);
    if (!own.success) {
      const message = own.error.issues[0]!.message;
      throw badRequest(`the body is not valid: metadata: ${message}`, [
        { path: 'metadata', message },
      ]);
    }
    if (json !== JSON.stringify(next.metadata) && !metadataSchema.safeParse(next.metadata).success)
      throw badRequest(`metadata is over its limits with its secrets replaced by ${PLACEHOLDER}`);
  }
  return messages;
}

/**
 * The size cap, measured only when an append could have crossed it; `moved` when messages were
 * dropped (the trusted prefix no longer holds).
 */
function applySizeCap(
  next: StoredSession,
  previous: StoredSession | null,
  messages: Message[],
  o: {
    trusted: number;
    previousBytes: number | undefined;
    newMessages: number;
    version: string;
    maxSessionBytes: number;
    held: number;
    reserve: number;
    /** A PUT or an import: what it changed may lie before messages it sent as stored. */
    replaced: boolean;
  },
): { dropped: number; headDropped: boolean; moved: boolean } {
  const { trusted, previousBytes, newMessages, version, maxSessionBytes, reserve } = o;
  const pureAppend =
    previous !== null && trusted === previous.messages.length && previousBytes !== undefined;
  // New messages, and the growth of every other field but the bookkeeping (refs, task, metadata, …).
  const outside = (s: StoredSession) => jsonBytes({ ...s, messages: 0, satchel: 0 });
  const newBytes = pureAppend
    ? messages
        .slice(trusted)
        .reduce((n, m) => n + jsonBytes(m) + 1, outside(next) - outside(previous))
    : 0;
  let dropped = 0;
  let headDropped = false;
  let moved = false;
  if (!pureAppend || previousBytes! + newBytes + FAST_PATH_SLACK + reserve > maxSessionBytes) {
    if (o.held > 0) throw new NeedsWholeSession('cap');
    // The scan record (step 5) at its largest count: as many digits as the messages before the cap.
    const scan = { v: version, n: next.messages.length, d: '0'.repeat(16) };
    const fixed = jsonBytes({ ...next, messages: [], satchel: { ...next.satchel, scan } });
    const capped = capMessages(next.messages, fixed + reserve, maxSessionBytes);
    if (!capped.fits) throw refuseHead(next, fixed, reserve, maxSessionBytes);
    // Refused when nothing the write brings survives: an append's newest message, or every message a PUT
    // changed or added (an edit in the middle is new content too; until 2026-12-05 only the last message
    // counted, so a PUT whose one edit the cap dropped answered 200 with it gone). Messages sent as
    // stored are not new.
    if (newMessages > 0 && capped.messages !== next.messages) {
      const fresh = o.replaced ? changed(messages, previous, newMessages) : messages.slice(-1);
      const kept = new Set(capped.messages);
      if (fresh.length > 0 && !fresh.some((m) => kept.has(m)))
        throw refuseNew(
          o.replaced ? fresh : messages.slice(-newMessages),
          maxSessionBytes,
          fixed + reserve,
          (next.satchel?.writes ?? []).some((w) => w.k.startsWith('k:')),
        );
    }
    headDropped = capped.headCut;
    if (capped.messages !== next.messages) {
      next.messages = capped.messages;
      dropped = capped.dropped;
      applyCoreRules(next, null);
      moved = true;
    }
  }
  return { dropped, headDropped, moved };
}

/**
 * What a PUT changed or added among its last `n` messages (those after the prefix it shares with the
 * stored session by identity): not the ones it starts or ends with as they are stored (the same JSON at
 * the same place from the start, or from the end).
 */
function changed(messages: Message[], previous: StoredSession | null, n: number): Message[] {
  const stored = previous?.messages ?? [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  let end = messages.length;
  let from = end - n;
  while (end > from && stored.length - (messages.length - end) > 0) {
    if (!same(messages[end - 1], stored[stored.length - (messages.length - end) - 1])) break;
    end--;
  }
  while (from < end && from < stored.length && same(messages[from], stored[from])) from++;
  return messages.slice(from, end);
}

/** The core pipeline alone (no redaction, no cap): for unit tests of the store. */
export const corePipeline: SavePipeline = {
  redactText: (text) => text,
  apply({ next, previous, held }) {
    return {
      session: applyCoreRules(next, previous, held),
      redactions: 0,
      dropped_groups: 0,
      head_dropped: false,
      sources: [],
      scanned: next.messages.length,
      byMessage: [],
    };
  },
};

/**
 * Names whose values are secrets whatever they look like, by how the name ends (any case): the words of
 * the text rules (`password`, `passwd`, `passphrase`, `secret`, `token`, `credentials`, `auth`,
 * `authorization`) and names of keys (`secret_key`, `signingKey`, `API_KEY`, `apikey`, Rails'
 * `secret_key_base`); not `key` or `keys` alone (a lookup), nor keys that name no secret (`public_key`,
 * `sortKey`). Names ending in `pass`, `pwd` or `pw` (`DB_PW`: review s63f) as a word are PASS_NAME's.
 */
const SENSITIVE_KEY = new RegExp(
  String.raw`(?:password|passwd|passphrase|secret|token|credentials?|authorization|auth|apikey|` +
    String.raw`secret_key_base|(?:api|access|private|secret|signing|master|encryption|client|account)[_-]?key)$`,
  'i',
);

/** Whether a value under the name `key` is a secret whatever it looks like (SENSITIVE_KEY). */
const sensitiveKey = (key: string) => SENSITIVE_KEY.test(key);

/**
 * Names ending in the word `pass` or `pwd` (`pass`, `DB_PASS`, `smtp_pass`, `userPass`, `MYSQL_PWD`,
 * `dbPwd`; not `bypass`, nor `pwd` alone, a shell's directory): a pass count too (`first_pass: 2`), so their
 * string values go whole where the text rules find a secret in `name="value"` (`generic-pass`, which
 * redacts the same pair in a tool's output). Until 2026-12-06 tool-call arguments and metadata kept them
 * (review s57d), and camelCase `…Pwd` names until review s57f. Names ending in `mnemonic` too, whose values
 * are a wallet's seed phrase by that rule's shape (not an instruction's `mov`; review s68a).
 */
const PASS_NAME =
  /(?:(?:^|[_-])(?:pass|PASS|Pass)|[a-z0-9]Pass|[_-](?:pwd?|PWD?)|[a-z0-9]Pwd|[Mm]nemonic|MNEMONIC)$/;

/** Whether `value` under the name `key` (PASS_NAME's) is a secret by the text rules; counted when it is. */
function passValue(key: string, value: string, text: TextFn, hit: () => void): boolean {
  if (!PASS_NAME.test(key) || key.length > 256 || value.length > 4096) return false;
  const pair = `${key}=${JSON.stringify(value)}`;
  if (text(pair, true) === pair) return false;
  hit();
  return true;
}

/** Redacts `s`; `quiet`: its secrets are counted elsewhere. */
type TextFn = (s: string, quiet?: boolean) => string;

/**
 * A redacted copy of one message: content, reasoning, tool calls, and every other field, its name
 * included (a field the model does not know is still stored and returned). A `data:` URL whose base64
 * runs on across text parts is read as streamed (`streamedUrls`); the parts stay as sent when their text
 * holds nothing to redact.
 */
function redactMessage(m: Message, text: TextFn, hit: () => void): Message {
  const budget = { left: MAX_SPLIT_WINDOWS }; // shared: the URLs' parts are run together first
  const streamed = streamedUrls(m, text, budget);
  if (!streamed) return redactFields(m, text, hit, budget);
  const out = redactFields(streamed, text, hit, budget) as Record<string, unknown>;
  const parts = out[PARTS_FIELD] as ContentPart[];
  const texts = (p: unknown) => JSON.stringify(textsOfParts(p as ContentPart[]));
  // Nothing in their text redacted: the parts keep the layout they were sent in.
  if (out.content === streamed.content && texts(parts) === texts(streamed[PARTS_FIELD])) {
    out[PARTS_FIELD] = withTexts(
      parts,
      textsOfParts((m as Record<string, unknown>)[PARTS_FIELD] as ContentPart[]),
    );
    out.content = m.content;
  }
  return out as Message;
}

/**
 * `m` with each run of text parts that a `data:` URL's base64 goes on across read as one: the first holds
 * their text run together (`runTogether`: a line break where a glued word ends the URL), the others are
 * left empty; null when no URL goes on across parts (or the content is an older form, not their text).
 * Its file is read whole, as streamed: until review s62r a part alone read a fragment of it (redacted and
 * glued to the rest, a key's tail was stored) and the content, its parts one a line, read it only when
 * the first part was 60 to 120 characters; the parts then gave way to the content, and its line breaks
 * split a key streamed in pieces after the URL.
 */
function streamedUrls(m: Message, text: TextFn, budget: Budget): Message | null {
  const sent = (m as Record<string, unknown>)[PARTS_FIELD] as ContentPart[] | undefined;
  if (!Array.isArray(sent)) return null;
  const texts = textsOfParts(sent);
  const flat = texts.join('');
  if (texts.length < 2 || !/;base64,/i.test(flat) || texts.join('\n') !== m.content) return null;
  const urls = urlsAt(texts, flat);
  const joined = urls.map((url) => url >= 0); // a part read run on with the next
  const ends: number[] = []; // where each part ends in `flat`
  for (let k = 0, at = 0; k < texts.length; k++) ends.push((at += texts[k]!.length));
  // Back to the part that holds the URL's `data:` too: its `;base64,` may have come parts later.
  urls.forEach((url, k) => {
    for (let j = k; url >= 0 && j > 0 && !joined[j - 1] && ends[j - 1]! > url; j--)
      joined[j - 1] = true;
  });
  if (!joined.includes(true)) return null;
  const out = texts.slice();
  for (let k = 0; k < joined.length; k++) {
    if (!joined[k]) continue;
    let end = k; // the last part read run on with part k
    while (joined[end]) end++;
    out[k] = runTogether(texts.slice(k, end + 1), text, budget);
    out.fill('', k + 1, end + 1);
    k = end;
  }
  return { ...m, content: out.join('\n'), [PARTS_FIELD]: withTexts(sent, out) } as Message;
}

/** A redacted copy of one message, its parts and content as sent (`redactMessage`). */
function redactFields(m: Message, text: TextFn, hit: () => void, budget: Budget): Message {
  const out: Record<string, unknown> = {};
  // Parts whose text is the content: a secret in a part's text counts once, with the content (a reasoning
  // part's text is not the content, but was in a form stored before 2026-12-05).
  const sent = (m as Record<string, unknown>)[PARTS_FIELD] as ContentPart[] | undefined;
  const older = Array.isArray(sent) && textOfParts(sent) !== m.content;
  const own = new Set<unknown>(
    Array.isArray(sent) && (!older || textOfParts(sent, true) === m.content)
      ? textsOfParts(sent, older)
      : [],
  );
  for (const [key, value] of Object.entries(m)) {
    if (key === 'role') out[key] = value;
    else if (key === 'tool_calls' && Array.isArray(value)) {
      out[key] = value.map((call: ToolCall) => redactToolCall(call, text, hit));
    } else {
      const walk: TextFn = key === PARTS_FIELD ? (s) => text(s, own.has(s)) : text;
      // Two names that redact alike (two tokens) keep both values: `[REDACTED] 2` (review s52f).
      putOwn(out, text(key), redactJson(value, walk, hit, sensitiveKey(key)));
    }
  }
  // The parts are redacted one by one, and their text is the content, unless a secret was split across
  // them (a key in three pieces): only their joined text shows it. Then, and only then, the parts carry the
  // redacted content. (Content redacted whole can also take more than a part's own match, such as a
  // truncated key running into the next part's text: there the parts' text, clean, is the content.)
  // A key streamed in pieces runs on from one part into the next without a line break, which the joined
  // content puts between them: the parts' text run together is scanned too, and when only that shows a
  // secret, the parts carry it redacted (their line breaks go with their layout).
  const parts = out[PARTS_FIELD] as ContentPart[] | undefined;
  if (Array.isArray(parts) && typeof out.content === 'string') {
    const texts = textsOfParts(parts);
    const joined = texts.join('\n');
    if (joined !== out.content) {
      // A data: URL may run on from one part into the next: only the content shows its file whole.
      const inUrl = texts.some((t, i) => i < texts.length - 1 && URL_TO_END.test(t));
      if (text(joined, true) === joined && !inUrl) out.content = joined;
      else out[PARTS_FIELD] = withText(parts, out.content);
    }
    const own = textsOfParts(out[PARTS_FIELD] as ContentPart[]);
    const kept = Array.isArray(sent) ? keysRunOn(textsOfParts(sent), own, text) : own;
    if (kept !== own) {
      out[PARTS_FIELD] = withTexts(out[PARTS_FIELD] as ContentPart[], kept);
      out.content = kept.join('\n');
    }
    const flat = runTogether(kept, text, budget);
    const redacted = text(flat);
    if (redacted !== flat) {
      out.content = redacted;
      out[PARTS_FIELD] = withText(parts, redacted);
    }
    out[PARTS_FIELD] = thoughtsRunTogether(out[PARTS_FIELD] as ContentPart[], text);
  }
  return out as Message;
}

/**
 * A key streamed in pieces across reasoning parts (not the content, so not scanned with it): their text run
 * together is scanned too, and when only that shows a secret, the first of them holds it redacted and the
 * others go, as `withText` does for the content's parts.
 */
function thoughtsRunTogether(parts: ContentPart[], text: TextFn): ContentPart[] {
  const thoughts = parts.flatMap((p) => {
    const t = thoughtOf(p);
    return t ? [p[t] as string] : [];
  });
  if (thoughts.length < 2) return parts;
  const flat = runTogether(thoughts, text);
  const redacted = text(flat);
  return redacted === flat ? parts : withText(parts, redacted, thoughtOf);
}

/** A reasoning part's text field (what `textFieldOf` leaves out), or null. */
const thoughtOf = (p: ContentPart): 'text' | null =>
  textFieldOf(p) === null && typeof p['text'] === 'string' ? 'text' : null;

/** A character of a URL's base64: base64url's too, `%2B`'s, and the line breaks that wrap it. */
const B64_CHAR = String.raw`[\w+/=%\r\n\t-]`;

/** A part that ends inside a `data:` URL's base64 (its lines may go on in the next part). */
const URL_TO_END = new RegExp(`;base64,${B64_CHAR}*$`, 'i');
/** A character a key or base64 may hold. */
const WORD = /[\w+/=-]/;

/** The words either side of a boundary (up to 8 characters each), as one. */
const across = (left: string, right: string) =>
  /[\w+/=-]{0,8}$/.exec(left)![0] + /^[\w+/=-]{0,8}/.exec(right)![0];

/** A part that may continue a URL's base64. */
const BASE64_RUN = new RegExp(`^${B64_CHAR}*$`);

/**
 * Whether a URL's base64 that part `j` of `texts` (not empty) goes on with ends with it: the next part (an
 * empty one skipped) is none, or cannot go on with it, run on.
 */
function endsRun(texts: string[], j: number): boolean {
  let n = j + 1;
  while (n < texts.length && texts[n] === '') n++;
  return (
    texts[j] !== '' &&
    (n >= texts.length || !BASE64_RUN.test(texts[n]!) || !WORD.test(texts[n]![0]!))
  );
}

/**
 * For each boundary between `texts` (run together as `flat`), the `data:` of the URL whose base64 the text
 * ends inside there (it may go on in the next part), or -1. Padding before a glued word ends a URL.
 */
function urlsAt(texts: string[], flat: string): number[] {
  const urls: number[] = [];
  let url = -1;
  for (let k = 0, at = 0; k < texts.length - 1; k++) {
    const part = texts[k]!;
    const seen = flat.slice(Math.max(0, at - 7), (at += part.length)); // `;base64,` split across parts too
    if (/;base64,/i.test(seen)) {
      const found = URL_TO_END.exec(seen);
      const head = at - seen.length + (found?.index ?? 0);
      const before = flat
        .slice(Math.max(0, head - 4200), head)
        .toLowerCase()
        .lastIndexOf('data:');
      url = found && before >= 0 ? Math.max(0, head - 4200) + before : -1;
    } else if (!BASE64_RUN.test(part)) url = -1;
    urls.push(url);
    if (flat[at - 1] === '=' && WORD.test(flat[at] ?? '')) url = -1;
  }
  return urls;
}

/** Characters `runTogether` redacts around part boundaries, at most, in one message (about 2 s of work). */
const MAX_SPLIT_WINDOWS = 1 << 25;

/** What is left of `MAX_SPLIT_WINDOWS` for a message. */
type Budget = { left: number };

/**
 * The parts' text run together, as a key streamed in pieces reads, with a line break where a secret
 * starts or ends at a boundary inside a word (`ghp_…` + `thanks`, `see` + `ghp_…`: the run-on text matches
 * no rule): the 256 characters on either side of such a boundary are redacted alone, and it is kept where
 * a secret reaches it that the text run on across it does not show (a key's first piece may look like a
 * shorter key), and where a URL's base64 ends (not inside a key streamed after it). Boundaries are looked
 * at from the last back, so the text after one has the line breaks kept after it, until
 * `MAX_SPLIT_WINDOWS` characters were redacted (about 65,000 boundaries) in the message (`budget`: what its
 * URLs' parts run together left).
 */
function runTogether(
  texts: string[],
  text: TextFn,
  budget: Budget = { left: MAX_SPLIT_WINDOWS },
): string {
  const flat = texts.join('');
  const ends: number[] = [];
  const urlEnds = new Map<number, number>(); // a boundary where a URL may end: where its `data:` is
  const urls = urlsAt(texts, flat);
  for (let k = 0, at = 0; k < texts.length - 1; k++) {
    const part = texts[k]!;
    at += part.length;
    if (!WORD.test(flat[at - 1] ?? '') || !WORD.test(flat[at] ?? '')) continue;
    // A URL's base64 streamed in parts ends where padding ends it, at the first part that cannot go on
    // with it (`then more`), or before the last part that can (`thanks`, then ` a lot` or nothing): run
    // on, that part's word would be read as more base64.
    if (
      urls[k]! >= 0 &&
      (flat[at - 1] === '=' || !BASE64_RUN.test(texts[k + 1]!) || endsRun(texts, k + 1))
    )
      urlEnds.set(at, urls[k]!);
    // A secret within one part was found in that part's own text: only a boundary with a short part on
    // either side, neither the first nor the last part, can split one.
    const short =
      (k > 0 && part.length < 256) || (k < texts.length - 2 && texts[k + 1]!.length < 256);
    if (short || urlEnds.has(at)) ends.push(at);
  }
  const tail: string[] = [];
  let after = ''; // the first 256 characters after `to`, line breaks kept included
  let to = flat.length;
  boundaries: for (let i = ends.length - 1; i >= 0; i--) {
    const at = ends[i]!;
    const left = flat.slice(Math.max(0, at - 256), at);
    const right = (flat.slice(at, Math.min(to, at + 256)) + after).slice(0, 256);
    const start = urlEnds.get(at);
    if (start !== undefined) {
      // Not where the next part's first word goes on with the base64 (`AAAA thanks`): the URL with it, a
      // last line, decodes and its file is redacted; a word that makes it no text (`ok`) is left out.
      const run = /^[\w+/=%-]*/.exec(right)![0];
      const url = flat.slice(start, at) + '\n' + run;
      const read = flat[at - 1] === '=' || /^[\w+/=%-]*:/.test(right) ? url : text(url, true);
      if (read !== url && !read.endsWith('\n' + run)) continue;
      // Nor inside a key streamed in pieces after the URL (`ghp_…` in parts, glued or on a line of its own:
      // run on, it reads as more base64): read from its word's start or a boundary before, a secret there
      // takes text on both sides (review s62h).
      for (
        let j = i, from = at - /[\w+/=-]*$/.exec(left)![0].length;
        from > Math.max(start, at - 256) && (budget.left -= 512) > 0;
        from = ends[--j]!
      ) {
        const own = flat.slice(from, at);
        const got = text(own + right, true);
        if (!got.startsWith(own) && !got.endsWith(right)) continue boundaries;
      }
    } else {
      if (budget.left <= 0) continue;
      budget.left -= 512;
      if (!text(left, true).endsWith(PLACEHOLDER) && !text(right, true).startsWith(PLACEHOLDER))
        continue;
      // The words either side of the boundary, still there when the text is run on across it.
      if (!text(left + right, true).includes(across(left, right))) continue;
    }
    tail.push(flat.slice(at, to), '\n');
    after = ('\n' + right).slice(0, 256);
    to = at;
  }
  return flat.slice(0, to) + tail.reverse().join('');
}

/** Characters `keysRunOn` redacts at part boundaries, at most, in one message (8,192 boundaries). */
const MAX_RUN_ON_WINDOWS = 1 << 22;

/**
 * `own` (the parts' texts, each redacted alone) without what a secret took from the parts after the one
 * it started in: where a part's own redaction reached its end inside a word (`password=hun`, a Stripe key
 * whose first 30 characters are a key alone), the key may go on in the next parts (`ter2`). There the sent
 * text either side of the boundary is redacted as one, and the characters it takes from the next parts
 * (their text as sent) are removed from them: the part's placeholder stands for the whole key, at any
 * boundary but one before a long, first or last part's word of prose (`Please `, `Done.`, `README.md`). `own`
 * itself when nothing was taken.
 */
function keysRunOn(sent: string[], own: string[], text: TextFn): string[] {
  if (sent.length !== own.length) return own; // the parts were joined into one
  let out = own;
  let budget = MAX_RUN_ON_WINDOWS;
  for (let k = 0; k < sent.length - 1 && budget > 0; k++) {
    const part = sent[k]!;
    const next = sent[k + 1]!;
    if (own[k] === part || !own[k]!.endsWith(PLACEHOLDER)) continue;
    if (!WORD.test(part.at(-1) ?? '') || !WORD.test(next[0] ?? '')) continue;
    // Next to a long, first or last part too, unless the next part starts with a word of prose (`Please
    // review`, after a truncated key): until review s65f a key's tail in such a part was stored. A free-form
    // value cannot tell cut from complete: a word of letters ending a sentence or a label, a file's name or
    // a name's `=` is the user's (review s65i: `Done.`, `Next:`, `README.md`, `exit_code=0` went).
    const short = (k > 0 && part.length < 256) || (k < sent.length - 2 && next.length < 256);
    if (!short && /^(?:[A-Za-z]+(?:[ \t]|[.:](?!\S)|\.\w+\s)|[A-Za-z_]+=\w)/.test(next)) continue;
    let right = '';
    for (let j = k + 1; j < sent.length && right.length < 256; j++) right += sent[j];
    right = right.slice(0, 256);
    budget -= 512;
    const alone = text(right, true);
    const together = text(part.slice(-256) + right, true);
    let same = 0; // the characters at the end that the key did not reach
    while (same < alone.length && alone.at(-1 - same) === together.at(-1 - same)) same++;
    let taken = alone.length - same;
    if (taken <= 0 || alone.slice(0, taken).includes(PLACEHOLDER)) continue;
    if (out === own) out = own.slice();
    // A part's own redaction after the key's piece stays (a long part holds other secrets).
    for (let j = k + 1; j < sent.length && taken > 0; j++) {
      const cut = Math.min(taken, sent[j]!.length);
      if (!out[j]!.startsWith(sent[j]!.slice(0, cut))) break;
      out[j] = out[j]!.slice(cut);
      taken -= cut;
    }
  }
  return out;
}

/** `parts` with the text of each text-bearing part from `texts`, in order. */
function withTexts(parts: ContentPart[], texts: string[]): ContentPart[] {
  let i = 0;
  return parts.map((p) => {
    const field = textFieldOf(p);
    return field && typeof p[field] === 'string' ? { ...p, [field]: texts[i++] } : p;
  });
}

/**
 * `parts` with their text as one: the first text-bearing part holds `text`, the others go (with their
 * other fields). Rare, and safe first: a secret split across parts is worth more than their layout.
 */
function withText(
  parts: ContentPart[],
  text: string,
  fieldOf: (p: ContentPart) => 'text' | 'refusal' | null = textFieldOf,
): ContentPart[] {
  let first = true;
  return parts.flatMap((p) => {
    const field = fieldOf(p);
    if (!field || typeof p[field] !== 'string') return [p];
    if (!first) return [];
    first = false;
    return [{ ...p, [field]: text }];
  });
}

type ToolCall = NonNullable<Message['tool_calls']>[number];

/** A redacted copy of one tool call: arguments as JSON, and every other field (`type`, extras). */
function redactToolCall(call: ToolCall, text: TextFn, hit: () => void): ToolCall {
  const { id, function: fn, ...rest } = call;
  const { name, arguments: args, ...fnRest } = fn;
  return {
    id: text(id),
    ...(redactJson(rest, text, hit) as object),
    function: {
      ...(redactJson(fnRest, text, hit) as object),
      name: text(name),
      arguments: redactArguments(args, text, hit),
    },
  } as ToolCall;
}

/** Tool-call arguments nested deeper than this are not read (s59e's arguments 20,000 deep are). */
const MAX_ARGUMENTS_DEPTH = 65_536;

/**
 * Tool-call arguments: valid JSON stays valid JSON (every string key and value redacted, and any value
 * under a secret-sounding key removed, then re-serialised); other text is redacted as text and becomes
 * `{"redacted":true}` if the result is not valid JSON (`loose`: stays text, as a Responses part's that was
 * not JSON as sent); arguments with nothing to redact stay as they are.
 * A key repeated in an object (`{"a":"ghp_…","a":"x"}`) keeps every value: each is walked under its key
 * and re-serialised where it was (`markShadowed`). Until review s61d JSON.parse kept the last value only,
 * the walk found nothing in it, and the arguments were kept as sent, the earlier value's secret with them.
 */
export function redactArguments(
  args: string,
  text: TextFn,
  hit: () => void = () => undefined,
  loose = false,
): string {
  let changed = false;
  // Past any tool's arguments: JSON.parse builds every level first (4 Mi levels in one call's arguments
  // took 41 s and a heap of gigabytes, review s68c); read as text, they could keep a secret the JSON rules
  // find (review s59e). They go whole, counted.
  if (textNestedPast(args, MAX_ARGUMENTS_DEPTH)) {
    hit();
    return '{"redacted":true}';
  }
  try {
    const exact = exactNumbers(args);
    let parsed: unknown = JSON.parse(exact.json);
    const marked = markShadowed(exact.json);
    if (marked) parsed = JSON.parse(marked.json);
    const walked = redactJson(
      parsed,
      (s, quiet) => {
        const r = text(s, quiet);
        if (r !== s) changed = true;
        return r;
      },
      () => {
        changed = true;
        hit();
      },
      false,
      undefined,
      marked?.marker,
    );
    if (!changed) return args;
    const out = jsonText(walked);
    return exact.restore(marked ? marked.unmark(out) : out);
  } catch {
    // Not JSON: redacted as text.
    const redacted = text(args);
    if (loose || redacted === args) return redacted;
    try {
      JSON.parse(redacted);
      return redacted;
    } catch {
      return '{"redacted":true}';
    }
  }
}

/**
 * JSON text (that JSON.parse took) with a marker (`marker`, a number, a NUL) put at the start of each key
 * JSON.parse would leave out (one repeated later in its object), so that a parse keeps every value;
 * `unmark` takes the markers out of the JSON serialised after the walk. Null when no key repeats.
 */
function markShadowed(
  json: string,
): { json: string; marker: string; unmark: (text: string) => string } | null {
  const shadowed = shadowedKeys(json);
  if (shadowed.length === 0) return null;
  const tag = Math.random().toString(36).slice(2, 10); // not in the text: no key is taken for a marked one
  const marker = `\0${tag}:`;
  const pieces: string[] = [];
  let from = 0;
  shadowed.forEach((at, n) => {
    pieces.push(json.slice(from, at + 1), `\\u0000${tag}:${n}\\u0000`);
    from = at + 1;
  });
  pieces.push(json.slice(from));
  const serialised = new RegExp(`\\\\u0000${tag}:\\d+\\\\u0000`, 'g');
  return { json: pieces.join(''), marker, unmark: (text) => text.replace(serialised, '') };
}

/**
 * Where JSON text repeats a key in one object, the start (its opening quote) of each occurrence but the
 * last, in order: JSON.parse keeps only the last one's value. Keys compare as parsed (`"\u0061"` is `"a"`).
 * A scan, at any depth (as `jsonNumbers`), of text JSON.parse took.
 */
function shadowedKeys(json: string): number[] {
  const found: number[] = [];
  const objects: (Map<string, number> | null)[] = []; // an object's keys (where each was last), or an array
  const indexLike = new Set<Map<string, number>>(); // objects with a repeated integer-like key
  let wantKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34 /* " */) {
      let j = i + 1;
      while (j < json.length && json.charCodeAt(j) !== 34) j += json.charCodeAt(j) === 92 ? 2 : 1;
      const keys = objects[objects.length - 1];
      if (wantKey && keys) {
        const raw = json.slice(i + 1, j);
        const key = raw.includes('\\') ? (JSON.parse(json.slice(i, j + 1)) as string) : raw;
        const before = keys.get(key);
        if (before !== undefined) found.push(before);
        if (before !== undefined && INDEX_LIKE.test(key)) indexLike.add(keys);
        keys.set(key, i);
      }
      wantKey = false;
      i = j;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      objects.push(c === 123 ? new Map() : null);
      wantKey = c === 123;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      // In an object that repeats an integer-like key, each such key's last occurrence is marked too (none
      // is in `found` yet): left bare, it would go first when the copy is serialised (JavaScript orders
      // integer-like keys first), before its marked repeats, and change which value is last (review s61g).
      const keys = objects.pop();
      if (keys && indexLike.delete(keys))
        for (const [key, at] of keys) if (INDEX_LIKE.test(key)) found.push(at);
    } else if (c === 44 /* , */) wantKey = !!objects[objects.length - 1];
  }
  return found.sort((a, b) => a - b);
}

/** A key JavaScript orders before the others in an object (an array index). */
const INDEX_LIKE = /^(?:0|[1-9][0-9]{0,8})$/;

/** A redacted copy of a parsed JSON value (a webhook payload), by the rules of tool arguments. */
export function redactJsonValue(
  value: unknown,
  text: TextFn,
  hit: () => void = () => undefined,
): unknown {
  return redactJson(value, text, hit);
}

/**
 * Redacts every string key and value of a JSON value; every string under a secret-sounding key goes
 * whole, however deep (`{"password": ["x"]}`, `{"token": {"value": "y"}}`). Iterative, with a stack of its
 * own: until 2026-12-06 it recursed and gave up past 128 levels, and tool-call arguments (or a webhook's
 * JSON) nesting deeper inside their string were redacted as plain text, where this rule does not hold
 * (review s59e).
 */
function redactJson(
  value: unknown,
  text: TextFn,
  hit: () => void,
  secret = false,
  field?: string,
  marker?: string,
): unknown {
  if (value === null || typeof value !== 'object')
    return redactLeaf(value, text, secret, hit, field);
  const walk: JsonWalk = { text, hit, stack: [], marker };
  let done = open(walk, value, secret, field);
  while (walk.stack.length > 0) {
    const top = walk.stack[walk.stack.length - 1]!;
    // A value just walked (not a container just opened) is its container's next entry.
    if (done !== OPENED) settle(walk, top, done);
    done = advance(walk, top);
  }
  return done;
}

/** A string or number under a secret-sounding key goes whole; other strings by their rules. */
function redactLeaf(
  value: unknown,
  text: TextFn,
  secret: boolean,
  hit: () => void,
  field: string | undefined,
): unknown {
  const str = typeof value === 'string';
  // Under a secret-sounding key a string goes whole (whatever the rules found in it: counted once), and so
  // does a number (`{"password": 73910264}`).
  if (secret && (str ? !isStandIn(value) : typeof value === 'number')) {
    if (!str || text(value) === value) hit();
    return PLACEHOLDER;
  }
  // Bare base64 by its field's name; a `data:` URL, in any string, is `text`'s. An OpenAI reasoning item's
  // encrypted content (a Fernet token: `gAAAAA` and base64url) goes back to the API as it came: a key's shape
  // turned up in about 1 of 2,000 of 6 KB by chance, and a changed one no longer decrypts (review s64e). Only
  // under those names (review s64j: `unencrypted_content` too): a Keystone token is a Fernet token too, and
  // elsewhere a request's own secrets are redacted in one as in any text (review s64i).
  if (str)
    return (
      // The name first: a string made of every value would copy each of them, on every save.
      (/^(encrypted_content|reasoningEncryptedContent)$/.test(field!) &&
        /^gAAAAA[\w-]{90,}=*$/.test(value) &&
        value) ||
      (field && BASE64_FIELDS.has(field) && !/^data:/i.test(value) && inlineText(value, text)) ||
      // A Responses `function_call` part's arguments: JSON, as a tool call's (text until review s65f).
      (field === 'arguments' &&
        /^\s*[[{]/.test(value) &&
        redactArguments(value, text, hit, true)) ||
      text(value)
    );
  return value;
}

/** `redactJson`'s state: its rules, and the arrays and objects it is inside, outermost first. */
interface JsonWalk {
  text: TextFn;
  hit: () => void;
  stack: JsonLevel[];
  /** How the keys of a repeated key's earlier values start (`markShadowed`), if any: read without it. */
  marker: string | undefined;
}

/** A name/value pair's names (more than one where a repeated key held others; JSON.parse's last). */
interface Pair {
  names: string[];
  field: string;
}

/** An array or object being walked: its entries, how many are done, and its redacted copy so far. */
interface JsonLevel {
  /** An array's items, or an object's entries. */
  items: unknown[];
  array: boolean;
  at: number;
  out: unknown[] | Record<string, unknown>;
  /** Under a secret-sounding key; the key it is under (an array: its own). */
  secret: boolean;
  field: string | undefined;
  /** Headers held as an object (`{"headers": {"x-functions-key": …}}`): each value is read as its line; an
   * array in an array under a `…headers` field (`[["X-Api-Key", …]]`, fetch's pairs): its name and value. */
  inHeaders: boolean;
  pair: Pair | undefined;
  /** The entry whose value is being walked (an object's): its key, as read (without a marker), the names
   * it is read under, and whether one is secret-sounding. */
  key: string;
  bare: string;
  names: string[];
  under: boolean;
  /** A `function_call` or `mcp_call` part (its `arguments` are JSON), once an `arguments` entry asked. */
  call?: boolean;
}

/** An object's entry `type: function_call` or `type: mcp_call` (a Responses part whose arguments are JSON). */
const isCallType = (e: unknown) => {
  const [n, t] = e as unknown[];
  return n === 'type' && (t === 'function_call' || t === 'mcp_call');
};

/** Returned by `open` and `advance` when a level was opened: no value is done yet. */
const OPENED = Symbol('opened');

/** Starts walking `value`: its redacted copy when it is a leaf, else OPENED (a level on the stack). */
function open(walk: JsonWalk, value: unknown, secret: boolean, field: string | undefined): unknown {
  if (value === null || typeof value !== 'object')
    return redactLeaf(value, walk.text, secret, walk.hit, field);
  const array = Array.isArray(value);
  const parent = walk.stack[walk.stack.length - 1];
  const headers = field !== undefined && /headers$/i.test(field);
  walk.stack.push({
    items: array ? value : Object.entries(value),
    array,
    at: 0,
    out: array ? [] : {},
    secret,
    field,
    inHeaders: headers && (!array || parent?.array === true),
    pair: array ? undefined : pairOf(value as Record<string, unknown>, walk),
    key: '',
    bare: '',
    names: [],
    under: false,
  });
  return OPENED;
}

/**
 * Walks `level`'s entries from where it is: OPENED when one is an array or object (a level above it now),
 * else `level` is done, taken off the stack, and its copy is returned.
 */
function advance(walk: JsonWalk, level: JsonLevel): unknown {
  const { text, hit } = walk;
  while (level.at < level.items.length) {
    const item = level.items[level.at++];
    if (level.array) {
      const red = open(walk, item, level.secret, level.field);
      if (red === OPENED) return OPENED;
      (level.out as unknown[]).push(red);
      continue;
    }
    const [k, v] = item as [string, unknown];
    const bare = unmarked(walk, k);
    // A pair's value is read under the pair's name (`{"name": "DB_PASSWORD", "value": …}`).
    const names = level.pair?.field === bare ? level.pair.names : [bare];
    const under = level.secret || sensitiveKey(bare) || names.some((n) => sensitiveKey(n));
    if (!under && typeof v === 'string' && passValue(bare, v, text, hit)) {
      putOwn(level.out as Record<string, unknown>, outKey(k, bare, text), PLACEHOLDER);
      continue;
    }
    level.key = k;
    level.bare = bare;
    level.names = names;
    level.under = under;
    // Only a Responses `function_call` or `mcp_call` part's `arguments` are JSON: elsewhere (metadata, a
    // text part's extra field) a string by that name is text (review s65i: it was replaced whole).
    // Looked for once per object: an object may repeat the name (review s61d).
    if (bare === 'arguments') level.call ??= level.items.some(isCallType);
    const red = open(walk, v, under, bare !== 'arguments' || level.call ? bare : '');
    if (red === OPENED) return OPENED;
    settle(walk, level, red);
  }
  walk.stack.pop();
  if (level.array && !level.secret)
    readTogether(level.items, level.out as unknown[], walk, level.inHeaders);
  return level.out;
}

/**
 * An array of strings read as what it may be, where each string alone was redacted: a header pair
 * (`["X-Api-Key", …]` in a `…headers` array) as its line `name: value`; any other as a command line (an
 * argv: `["mysql", "-u", "root", "-p…"]`, `["deploy", "--token", …]`), each string after the ones before it.
 * Until 2026-12-06 a flag and its value, or a header's name and value, never met a rule (review s59l).
 * `out` (the strings redacted alone) changes only where the reading together finds more.
 */
function readTogether(items: unknown[], out: unknown[], walk: JsonWalk, header: boolean): void {
  const n = items.length;
  if (n < 2 || !items.every((s) => typeof s === 'string')) return;
  const argv = items as string[];
  if (header) {
    if (n === 2 && out[1] === argv[1]) out[1] = withName(argv[0]!, argv[1]!, walk.text, walk.hit);
    return;
  }
  const line = argv.join(' ');
  // Read as one line, the strings show nothing their own readings did not: the usual case, one more scan.
  if (walk.text(line, true) === (out as string[]).join(' ')) return;
  for (let i = 1; i < n; i++) {
    const value = argv[i]!;
    if (out[i] !== value || value.length > 4096) continue;
    const head = argvHead(argv, i);
    const read = walk.text(head + value, true);
    if (read === head + value || (!read.startsWith(head) && read.endsWith(value))) continue;
    walk.hit();
    // Found inside the value (`-p[REDACTED]`): that part; found across the strings before it too: all of it.
    out[i] = read.startsWith(head) ? read.slice(head.length) : PLACEHOLDER;
  }
}

/**
 * What comes before `argv[i]` on its command line, as the rules need it: the program (`mysql`, `sqlcmd`,
 * `redis-cli`) and the strings just before, up to about 256 characters, then a blank.
 */
function argvHead(argv: string[], i: number): string {
  let before = argv[i - 1]!.slice(-256);
  for (let j = i - 2; j >= 1 && before.length < 256; j--)
    before = argv[j]!.slice(-256) + ' ' + before;
  return (i > 1 ? argv[0]!.slice(0, 64) + ' ' : '') + before + ' ';
}

/** Puts `red`, the redacted value of `level`'s current entry, into its copy. */
function settle(walk: JsonWalk, level: JsonLevel, red: unknown): void {
  if (level.array) {
    (level.out as unknown[]).push(red);
    return;
  }
  const { key, bare, names, under } = level;
  const name = names[names.length - 1]!;
  // Any of a repeated name's values (review s61g: `{"name":"Cookie","value":…,"name":"x"}` kept its value).
  const header = level.inHeaders || names.some((n) => /^(set-)?cookie$/i.test(n));
  // A member of a `cookies` object, or a `{name, value}` pair's value in one (Playwright's storage state),
  // is read as its `Cookie:` line (review s68a: they were kept); not a string with a blank, which no
  // cookie's value holds (a consent banner's `description` lost its first word; review s68e).
  const jar =
    /cookies?$/i.test(level.field!) && (!level.pair || name !== bare) && !/\s/.test(red as string);
  let value = red;
  if (!under && typeof red === 'string' && (header || jar || name !== bare))
    for (const n of names)
      value = withName(
        jar ? 'Cookie: ' + n : n,
        value as string,
        walk.text,
        walk.hit,
        header && !jar ? ': ' : '=',
      );
  putOwn(level.out as Record<string, unknown>, outKey(key, bare, walk.text), value);
}

/** A key of the walk as read: without the marker of a repeated key's earlier value (`markShadowed`). */
function unmarked(walk: JsonWalk, key: string): string {
  return walk.marker && key.startsWith(walk.marker)
    ? key.slice(key.indexOf('\0', walk.marker.length) + 1)
    : key;
}

/** The redacted copy's key for `key` (read as `bare`): redacted, its marker kept for `unmark`. */
function outKey(key: string, bare: string, text: TextFn): string {
  return key.slice(0, key.length - bare.length) + text(bare);
}

/**
 * `value` as JSON text, as JSON.stringify writes it, at any depth: JSON.stringify recurses, and throws past
 * a few thousand levels (V8's stack), which redacted tool-call arguments and webhook payloads may hold.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  let out = '';
  const stack: { value: Record<string, unknown>; keys: string[] | null; at: number }[] = [];
  let next: unknown = value;
  let pending = true;
  for (;;) {
    if (pending && next !== null && typeof next === 'object') {
      const o = next as Record<string, unknown>;
      // As JSON.stringify: an object's keys whose values JSON has no form for are left out.
      const keys = Array.isArray(o) ? null : Object.keys(o).filter((k) => jsonable(o[k]));
      out += keys ? '{' : '[';
      stack.push({ value: o, keys, at: 0 });
    } else if (pending) out += jsonable(next) ? JSON.stringify(next) : 'null';
    pending = false;
    const top = stack[stack.length - 1];
    if (!top) return out;
    const n = top.keys ? top.keys.length : (top.value as unknown as unknown[]).length;
    if (top.at === n) {
      out += top.keys ? '}' : ']';
      stack.pop();
      continue;
    }
    if (top.at > 0) out += ',';
    const k = top.keys ? top.keys[top.at]! : top.at;
    if (top.keys) out += JSON.stringify(k) + ':';
    next = top.value[k];
    top.at++;
    pending = true;
  }
}

/** Whether JSON has a form for `v` (not undefined, a function or a symbol). */
function jsonable(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
}

/** Fields naming a pair's name, and its value's (Kubernetes and ECS `env`, HAR, CloudFormation, SSM). */
const PAIR_NAME = ['name', 'Name', 'key', 'Key', 'ParameterKey'];
const PAIR_VALUE = ['value', 'Value', 'ParameterValue'];

/**
 * A name/value pair, as Kubernetes (`env: [{name, value}]`), ECS task definitions, HAR (`headers: [{name,
 * value}]`) and CloudFormation write a variable or a header: its name, and the field holding its value.
 * Until 2026-12-06 the value was read alone, without the name that says it is a secret (review s57d).
 */
function pairOf(o: Record<string, unknown>, walk: JsonWalk): Pair | undefined {
  if (walk.marker === undefined) {
    const name = PAIR_NAME.find((k) => typeof o[k] === 'string');
    const field = name && PAIR_VALUE.find((k) => Object.hasOwn(o, k));
    return field ? { names: [o[name!] as string], field } : undefined;
  }
  // Repeated keys (marked): every string a name field held, in order (the last is JSON.parse's).
  const seen = new Map<string, unknown[]>();
  for (const [k, v] of Object.entries(o)) {
    const bare = unmarked(walk, k);
    if (!PAIR_NAME.includes(bare) && !PAIR_VALUE.includes(bare)) continue;
    const values = seen.get(bare);
    if (values) values.push(v);
    else seen.set(bare, [v]);
  }
  const strings = (k: string) =>
    (seen.get(k) ?? []).filter((v): v is string => typeof v === 'string');
  const name = PAIR_NAME.find((k) => strings(k).length > 0);
  const field = name && PAIR_VALUE.find((k) => seen.has(k));
  return field ? { names: strings(name!), field } : undefined;
}

/**
 * A header's value (in an object under a `…headers` field, or named `Cookie`) redacted again as `name:
 * value`, as its line: rules that know a secret by its header name (`Cookie:`, `Ocp-Apim-Subscription-Key:`,
 * `x-functions-key:`) see both, where until 2026-12-06 such values were kept (review s52f). Not every field:
 * `{"object-key": "uploads/report.pdf"}` is data (review s52h). A name/value pair's value (`pairOf`) is
 * read as `NAME=value`, the variable it sets (`GITHUB_PAT=…`). Short values only.
 */
function withName(
  name: string,
  value: string,
  text: TextFn,
  hit: () => void,
  separator = ': ',
): string {
  if (value.length > 4096 || name.length > 256) return value;
  const head = name + separator;
  const pair = text(head + value, true);
  if (pair === head + value || !pair.startsWith(head)) return value;
  hit();
  return pair.slice(head.length);
}

/**
 * An inline file (a `data:…;base64,` URL, or bare base64 in a field such as `file_data`) whose bytes are
 * text, whatever media type it names, redacted as that text and encoded again as it came: UTF-8 (with
 * its byte order mark, if any), UTF-16 (by its mark, or by the zero bytes of ASCII in it), or else
 * Latin-1 / Windows-1252; base64 or base64url. Undefined when it is no such file or nothing in it
 * changed (then the string is redacted as it stands, as binary media are). Its first 12 bytes tell
 * binary media (a PNG, JPEG, GIF, WebP, MP3 or MP4 header holds control bytes) before anything more is
 * decoded; valid UTF-8 after such a start is text (a terminal log's BEL included), and a UTF-16 or
 * Latin-1 reading, which any bytes give, is text only without control characters. Null instead of that
 * reading when `strict`.
 */
function inlineText(
  value: string,
  text: (s: string) => string,
  strict = false,
): string | undefined | null {
  const url = /^data:[^,]*;base64,/i.exec(value);
  const head = url ? url[0] : '';
  const body = value.slice(head.length);
  const std = (b64: string) => atob(b64.replace(/-/g, '+').replace(/_/g, '/')); // base64url too
  let decoded = '';
  let kind = 0; // 0 UTF-8, 1 UTF-16LE, 2 UTF-16BE, 3 Latin-1
  let odd = ''; // a UTF-16 file's last byte when it has an odd number: stored as sent
  try {
    const start = std(body.slice(0, 64).replace(/\s/g, '').slice(0, 16));
    kind = /^(\xff\xfe|([^\0]\0){4})/.test(start)
      ? 1
      : /^(\xfe\xff|(\0[^\0]){4})/.test(start)
        ? 2
        : 0;
    if (!kind && CONTROL.test(start)) {
      // Binary media, or UTF-16 whose first characters are not ASCII (`、`): the zeros of its ASCII tell.
      const sample = body.slice(0, 8192).replace(/\s/g, '');
      kind = wideOrder(std(sample.slice(0, sample.length & ~3)));
      if (!kind) return undefined;
    }
    const bin = std(body);
    const text8 = kind ? null : utf8Of(bin);
    if (text8 !== null) decoded = (/^\xef\xbb\xbf/.test(bin) ? '\ufeff' : '') + text8;
    else if (!kind) {
      kind = wideOrder(bin); // UTF-16 that starts with no ASCII (`設定`)
      if (!kind && strict) return null;
      decoded = bin; // not UTF-8
      kind ||= 3;
    }
    if (kind === 1 || kind === 2) {
      odd = bin.slice(bin.length & ~1);
      decoded = fromUtf16(bin, kind > 1);
    }
  } catch {
    return undefined; // not base64
  }
  if (kind && CONTROL.test(decoded)) return undefined; // binary
  const redacted = text(decoded);
  if (redacted === decoded) return undefined;
  const out =
    kind === 3
      ? btoa(redacted)
      : toBase64(kind ? toUtf16(redacted, kind > 1, odd) : utf8(redacted));
  // base64url: by its alphabet, or unpadded without either alphabet's own characters
  const web = /[-_]/.test(body) || (body.replace(/\s/g, '').length % 4 > 0 && !/[+/=]/.test(body));
  return text(head) + (web ? out.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : out);
}

const CONTROL = /[\0-\x08\x0e-\x1a\x1c-\x1f]/;

/**
 * `bin` (a binary string) decoded as UTF-8, or null when it is not UTF-8: told without the exception of a
 * fatal decoder when it can be (about 6 µs each; a word read as a URL's last line is common).
 */
function utf8Of(bin: string): string | null {
  const bytes = bytesOf(bin);
  const read = lenientText(bytes);
  if (!read.includes('\ufffd')) return read;
  if (!bin.includes('\xef\xbf\xbd')) return null; // U+FFFD that was not sent: a malformed byte
  try {
    return strictText(bytes);
  } catch {
    return null;
  }
}

/**
 * 1 (UTF-16LE) or 2 (UTF-16BE) when the zero bytes among the first 8 KiB of `bin` (a binary string) fall
 * on one side of their pairs, as the ASCII in UTF-16 text puts them (one character in 16 at least), else 0.
 */
function wideOrder(bin: string): number {
  let even = 0;
  let odd = 0;
  const n = Math.min(bin.length, 8192) & ~1;
  for (let i = 0; i < n; i += 2) {
    if (bin.charCodeAt(i) === 0) even++;
    if (bin.charCodeAt(i + 1) === 0) odd++;
  }
  const enough = Math.max(2, n / 32);
  return odd >= enough && even * 8 <= odd ? 1 : even >= enough && odd * 8 <= even ? 2 : 0;
}

/** Redacts ref uris (and labels), then deduplicates again: two raw uris may redact to the same one. */
function redactRefs(
  refs: ExternalRef[],
  text: (s: string) => string,
  stored: readonly ExternalRef[],
): ExternalRef[] {
  const out: ExternalRef[] = [];
  const seen = new Set<string>(); // refKey of those in `out` (a scan of it per ref was quadratic: review s66m)
  const kept = new Set(stored.map((r) => JSON.stringify(r)));
  for (const ref of refs) {
    const r = {
      ...ref,
      uri: text(ref.uri),
      kind: text(ref.kind),
      created_by: text(ref.created_by),
    };
    // As metadata: a new ref must stay within the stored format with its secrets replaced (a kind that
    // is a secret, a uri at its limit), so that what GET answers can be PUT back (review s52f).
    // A stored ref a later write redacts (a request's Satchel-Secrets, new rules) cannot be refused: a kind
    // that became a placeholder is `redacted`, a kind of the stored format, so GET-then-PUT still works.
    if (kept.has(JSON.stringify(ref)) && r.kind !== ref.kind && !refKind.safeParse(r.kind).success)
      r.kind = 'redacted';
    else if (!kept.has(JSON.stringify(ref)) && (r.kind !== ref.kind || r.uri !== ref.uri)) {
      const bad = refKind.safeParse(r.kind).error ?? refUri.safeParse(r.uri).error;
      if (bad)
        throw badRequest(
          `an external ref is over its limits with its secrets replaced by ${PLACEHOLDER}: ` +
            bad.issues[0]!.message,
          [{ path: 'external_refs', message: bad.issues[0]!.message }],
        );
    }
    const key = refKey(r);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out;
}

/** Chained digest over messages' JSON (64-bit, two FNV-1a lanes): `d_n = H(d_{n-1} | json(m_n))`. */
export function chain(start: string, messages: Message[]): string {
  let d = start;
  for (const m of messages) d = hash64(d + '|' + JSON.stringify(m));
  return d;
}

function hash64(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}

/**
 * Sets `key` as an own property of `out`. Keys that redact to the same text (two secrets used as keys) are
 * told apart with a number (`[REDACTED] 2`), and `__proto__` (from JSON.parse, which makes it an own key)
 * stays a key, not the object's prototype: no value is dropped.
 */
function putOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  let k = key;
  for (let n = 2; Object.hasOwn(out, k); n++) k = `${key} ${n}`;
  if (k !== '__proto__') out[k] = value;
  else
    Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
}

/** 413 for a write none of whose new content fits under the cap: nothing is written, nothing lost silently. */
function refuseNew(
  added: Message[],
  maxSessionBytes: number,
  besides: number,
  keyed: boolean,
): Error {
  const bytes = added.reduce((n, m) => n + jsonBytes(m), 0);
  const what = added.length === 1 ? 'the new message' : `the ${added.length} new messages`;
  // Said when it is why (review s52f): under a small cap the session's other fields and the write records
  // it keeps for 24 h (idempotency keys) can take the room a small message would fit in.
  if (besides < maxSessionBytes / 4) return refuse(what, bytes, maxSessionBytes);
  return payloadTooLarge(
    `${what} (${bytes} bytes) cannot be stored in a session of at most ${maxSessionBytes} bytes ` +
      `(SATCHEL_MAX_SESSION_BYTES) beside its head, its other fields (task, metadata, refs) and the write ` +
      `records it keeps (${besides} bytes without the head` +
      `${keyed ? '; Idempotency-Key records among them' : ''}): nothing was written`,
  );
}

/**
 * 413 for a session whose system prompt and task, with its other fields and write records (this write's
 * own, which keeps a continue's reply for retries, and the keyed ones of the last 24 h), are over the cap.
 */
function refuseHead(next: StoredSession, fixed: number, reserve: number, max: number): Error {
  const system = next.messages[0]?.role === 'system' ? next.messages.slice(0, 1) : [];
  const what = "the system prompt and task, with the session's other fields and write records";
  return refuse(what, fixed + reserve + jsonBytes(system), max);
}

function refuse(what: string, bytes: number, maxSessionBytes: number): Error {
  return payloadTooLarge(
    `${what} (${bytes} bytes) cannot be stored in a session of at most ${maxSessionBytes} bytes ` +
      '(SATCHEL_MAX_SESSION_BYTES): nothing was written',
  );
}
