import { utf8 } from './bytes.js';
import * as z from 'zod';
import { payloadTooLarge } from './errors.js';

/**
 * Content parts (OpenAI chat and Responses formats, AI SDK): a message's `content` may be an array of
 * parts. odek reads `content` as a string, so what is stored keeps `content` the text of the parts and
 * the parts themselves, verbatim, in the extra message field `content_parts`; the API shows the array
 * again. Unknown part types are kept as they are.
 */

/** The extra message field that holds a message's parts as sent. */
export const PARTS_FIELD = 'content_parts';

/** One content part: `{type, ...}` (text, image_url, input_audio, file, input_text, input_image, …). */
export const contentPartSchema = z.looseObject({ type: z.string().min(1).max(64) });
export type ContentPart = z.output<typeof contentPartSchema>;

/** Inline media (a `data:` URL or base64 field) larger than this is refused with 413: send a URL or file id. */
export const MAX_INLINE_MEDIA_BYTES = 1024 * 1024;

/**
 * The text of a list of parts, as odek's string `content`: the text of each text-bearing part, by lines.
 * `reasoning`: a reasoning part's too, as content was until 2026-12-05 (a stored form written then).
 */
export function textOfParts(parts: readonly ContentPart[], reasoning = false): string {
  return textsOfParts(parts, reasoning).join('\n');
}

/** The text of each text-bearing part, in order. */
export function textsOfParts(parts: readonly ContentPart[], reasoning = false): string[] {
  const texts: string[] = [];
  for (const p of parts) {
    const field = textFieldOf(p) ?? (reasoning ? 'text' : null);
    const value = field && p[field];
    if (typeof value === 'string') texts.push(value);
  }
  return texts;
}

/**
 * The field of a part whose text is the message's content: a refusal's `refusal`, another part's `text`.
 * None for a reasoning part (the AI SDK's `{type: "reasoning", text}`): the model's thinking is not its
 * reply, and odek reads `content` as the reply (and keeps thinking in `reasoning_content`).
 */
export function textFieldOf(p: ContentPart): 'text' | 'refusal' | null {
  return p.type === 'refusal' ? 'refusal' : p.type === 'reasoning' ? null : 'text';
}

/** A message as sent, in stored form: array content becomes its text, the parts kept beside it. */
export function toStoredContent<M extends { content?: unknown }>(
  message: M,
): M & { content: string } {
  const content = message.content;
  if (Array.isArray(content)) {
    return { ...message, content: textOfParts(content as ContentPart[]), [PARTS_FIELD]: content };
  }
  return { ...message, content: typeof content === 'string' ? content : '' };
}

/** A stored message as the API shows it: the parts back in `content` when it was sent as parts. */
export function toPublicContent<M extends Record<string, unknown>>(message: M): M {
  if (!Array.isArray(message[PARTS_FIELD])) return message;
  const { [PARTS_FIELD]: parts, ...rest } = message;
  return { ...rest, content: parts } as unknown as M;
}

/**
 * Fields whose string is base64 by their name (OpenAI's `file_data`, Anthropic's `source.data`, an MCP
 * resource's `blob`, Bedrock's `bytes`, …).
 */
export const BASE64_FIELDS = new Set([
  'data',
  'file_data',
  'image_data',
  'b64_json',
  'blob',
  'bytes',
]);

/** Refuses (413) a message list that carries inline media over MAX_INLINE_MEDIA_BYTES in any part. */
export function assertInlineMedia(messages: readonly Record<string, unknown>[]): void {
  messages.forEach((m, i) => {
    const parts = m[PARTS_FIELD];
    if (!Array.isArray(parts)) return;
    parts.forEach((part, j) => {
      const found = largestInline(part, undefined);
      if (found > MAX_INLINE_MEDIA_BYTES) {
        throw payloadTooLarge(
          `messages[${i}].content[${j}] carries ${found} bytes of inline media; the limit is ` +
            `${MAX_INLINE_MEDIA_BYTES} bytes per part: send a URL or a file id instead`,
        );
      }
    });
  });
}

/** The longest inline-media string in a part: `data:` URLs anywhere, and base64 fields by name. */
function largestInline(value: unknown, key: string | undefined): number {
  if (typeof value === 'string') {
    return /^data:/i.test(value) || (key !== undefined && BASE64_FIELDS.has(key))
      ? value.length
      : 0;
  }
  if (Array.isArray(value)) return Math.max(0, ...value.map((v) => largestInline(v, key)));
  if (value && typeof value === 'object') {
    return Math.max(0, ...Object.entries(value).map(([k, v]) => largestInline(v, k)));
  }
  return 0;
}

// ---- session metadata ----

const METADATA_MAX_KEYS = 64;
const METADATA_MAX_BYTES = 8 * 1024;

/**
 * The UTF-8 bytes of metadata's keys and values, as the contract's "8 KiB in all" counts them (until
 * 2026-12-05 its JSON text was counted: quotes, colons and escapes too).
 */
function metadataBytes(m: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(m)) n += utf8(k).byteLength + utf8(v).byteLength;
  return n;
}

/** A session's own metadata: string keys (not empty) to string values, at most 64 keys and 8 KiB in all. */
export const metadataSchema = z
  .record(z.string().min(1), z.string())
  .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, `at most ${METADATA_MAX_KEYS} keys`)
  .refine(
    (m) => metadataBytes(m) <= METADATA_MAX_BYTES,
    `at most ${METADATA_MAX_BYTES} bytes of keys and values in all`,
  );
export type Metadata = z.output<typeof metadataSchema>;

/**
 * Metadata a PUT may send back: what GET answered can be over the limits (rules added since redacted more
 * of it: a placeholder longer than its secret), so the limits are the write pipeline's to hold, for
 * metadata that is not the stored one. At most twice the limits here: a body cannot grow the store.
 */
export const storedMetadataSchema = z
  .record(z.string().min(1), z.string())
  .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, `at most ${METADATA_MAX_KEYS} keys`)
  .refine(
    (m) => metadataBytes(m) <= 2 * METADATA_MAX_BYTES,
    `at most ${METADATA_MAX_BYTES} bytes of keys and values in all`,
  );
