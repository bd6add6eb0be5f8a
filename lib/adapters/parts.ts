// Content parts of messages other writers stored (the HTTP API, odek, the CLI, the other adapter), in the
// forms each framework reads. Satchel keeps parts as sent: OpenAI chat parts (`text`, `image_url`,
// `input_audio`, `file`), Responses / Agents SDK parts (`input_text`, `output_text`, `input_image`,
// `input_file`) and AI SDK UI parts (`text`, `file`, `reasoning`, tools…) may all meet in one session.

type Part = Record<string, unknown> & { type?: unknown };

/** An Agents SDK user content part (`input_text`, `input_image`, `input_file`, `audio`). */
export type AgentsUserPart = Record<string, unknown> & { type: string };

/** The text a part carries, if it is a text part of any of the formats. */
export function partText(part: Part): string | undefined {
  if (part.type === 'text' || part.type === 'input_text' || part.type === 'output_text')
    return typeof part.text === 'string' ? part.text : undefined;
  if (part.type === 'refusal') return typeof part.refusal === 'string' ? part.refusal : undefined;
  return undefined;
}

/**
 * A user message's parts as the Agents SDK's input content: text, images and files of any format; audio
 * of chat parts. Parts of no equivalent (AI SDK steps, tools, data) are left out.
 */
export function toAgentsUserParts(parts: readonly Part[]): AgentsUserPart[] {
  const out: AgentsUserPart[] = [];
  for (const part of parts) {
    const text = partText(part);
    if (text !== undefined) {
      out.push({ type: 'input_text', text });
      continue;
    }
    const media = mediaOf(part);
    if (media?.kind === 'image')
      out.push({
        type: 'input_image',
        image: media.url,
        ...(media.detail ? { detail: media.detail } : {}),
      });
    else if (media?.kind === 'file')
      out.push({
        type: 'input_file',
        file: media.url.startsWith('data:') ? media.url : { url: media.url },
        ...(media.filename ? { filename: media.filename } : {}),
      });
    else if (media?.kind === 'file-id')
      out.push({
        type: 'input_file',
        file: { id: media.url },
        ...(media.filename ? { filename: media.filename } : {}),
      });
    else if (media?.kind === 'audio')
      out.push({
        type: 'audio',
        audio: media.url,
        ...(media.format ? { format: media.format } : {}),
      });
    else if (part.type === 'input_image' || part.type === 'input_file' || part.type === 'audio')
      out.push(part as AgentsUserPart); // already the SDK's own
  }
  return out;
}

/**
 * Parts as AI SDK UI parts: text of any format as `text`, images and files as `file` parts with a media
 * type (`image/*` when the URL does not say), chat audio as an audio `file`; UI parts pass as they are.
 * Parts the UI cannot show and the model converter would not read (a file known only by its id) are left
 * out.
 */
export function toUIParts(parts: readonly Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    if (part.type === 'text') {
      out.push(part);
      continue;
    }
    const text = partText(part);
    if (text !== undefined) {
      out.push({ type: 'text', text });
      continue;
    }
    if (part.type === 'file' && typeof part.mediaType === 'string') {
      out.push(part); // the AI SDK's own file part
      continue;
    }
    const media = mediaOf(part);
    if (media && media.kind !== 'file-id') {
      const mediaType =
        dataMediaType(media.url) ??
        (media.kind === 'image'
          ? 'image/*'
          : media.kind === 'audio'
            ? `audio/${media.format ?? 'wav'}`
            : 'application/octet-stream');
      out.push({
        type: 'file',
        mediaType,
        url: media.url,
        ...(media.filename ? { filename: media.filename } : {}),
      });
    } else if (media === undefined && !KNOWN_FOREIGN.has(String(part.type))) out.push(part);
  }
  return out;
}

/** Part types of the other formats that have no UI part (kept out of UI messages). */
const KNOWN_FOREIGN = new Set([
  'image_url',
  'input_image',
  'input_file',
  'input_audio',
  'audio',
  'file',
]);

interface Media {
  kind: 'image' | 'file' | 'file-id' | 'audio';
  url: string;
  detail?: string;
  filename?: string;
  format?: string;
}

/** The image, file or audio a part of the chat or Responses formats refers to. */
function mediaOf(part: Part): Media | undefined {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const obj = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
  switch (part.type) {
    case 'image_url': {
      const image =
        typeof part.image_url === 'string' ? { url: part.image_url } : obj(part.image_url);
      const url = str(image.url);
      return url ? { kind: 'image', url, ...opt('detail', str(image.detail)) } : undefined;
    }
    case 'input_image': {
      const url = str(part.image) ?? str(part.image_url);
      return url ? { kind: 'image', url, ...opt('detail', str(part.detail)) } : undefined;
    }
    case 'input_audio': {
      const audio = obj(part.input_audio);
      const data = str(audio.data);
      const format = str(audio.format);
      return data
        ? {
            kind: 'audio',
            url: `data:audio/${format ?? 'wav'};base64,${data}`,
            ...opt('format', format),
          }
        : undefined;
    }
    case 'input_file': {
      const filename = str(part.filename);
      const file = part.file;
      if (typeof file === 'string' && file.startsWith('data:'))
        return { kind: 'file', url: file, ...opt('filename', filename) };
      const url = str(obj(file).url);
      if (url) return { kind: 'file', url, ...opt('filename', filename) };
      const id = str(file) ?? str(obj(file).id);
      return id ? { kind: 'file-id', url: id, ...opt('filename', filename) } : undefined;
    }
    case 'file': {
      if (typeof part.mediaType === 'string') {
        // The AI SDK's own: {mediaType, url, filename?}
        const url = str(part.url);
        if (!url) return undefined;
        const kind = part.mediaType.startsWith('image/') ? 'image' : 'file';
        return { kind, url, ...opt('filename', str(part.filename)) };
      }
      const file = obj(part.file);
      const filename = str(file.filename);
      const data = str(file.file_data);
      if (data) return { kind: 'file', url: data, ...opt('filename', filename) };
      const id = str(file.file_id);
      return id ? { kind: 'file-id', url: id, ...opt('filename', filename) } : undefined;
    }
    default:
      return undefined;
  }
}

function opt<K extends string>(key: K, value: string | undefined): { [k in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: string };
}

function dataMediaType(url: string): string | undefined {
  return /^data:([\w.+-]+\/[\w.+*-]+)[;,]/.exec(url)?.[1];
}
