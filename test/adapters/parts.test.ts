import { describe, expect, it } from 'vitest';
import { toAgentsUserParts, toUIParts } from '../../lib/adapters/parts.js';

// Parts of every format Satchel keeps (chat completions, Responses / Agents SDK, AI SDK UI), as each
// adapter hands them to its framework.
const chat = [
  { type: 'text', text: 'look' },
  { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } },
  { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'mp3' } },
  { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
  { type: 'file', file: { file_id: 'file-123' } },
];
const agents = [
  { type: 'input_text', text: 'hi' },
  { type: 'input_image', image: 'data:image/png;base64,iVBORw0=' },
  { type: 'input_file', file: { url: 'https://x.test/b.pdf' }, filename: 'b.pdf' },
];
const ui = [
  { type: 'step-start' },
  { type: 'text', text: 'see' },
  { type: 'file', mediaType: 'image/jpeg', url: 'https://x.test/c.jpg' },
  { type: 'file', mediaType: 'text/csv', url: 'data:text/csv;base64,YSxi' },
];

describe('toAgentsUserParts', () => {
  it('gives the SDK its input parts for chat, Agents and AI SDK parts', () => {
    expect(toAgentsUserParts(chat)).toEqual([
      { type: 'input_text', text: 'look' },
      { type: 'input_image', image: 'https://x.test/a.png', detail: 'low' },
      { type: 'audio', audio: 'data:audio/mp3;base64,UklGRg==', format: 'mp3' },
      { type: 'input_file', file: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' },
      { type: 'input_file', file: { id: 'file-123' } },
    ]);
    expect(toAgentsUserParts(agents)).toEqual([
      { type: 'input_text', text: 'hi' },
      { type: 'input_image', image: 'data:image/png;base64,iVBORw0=' },
      { type: 'input_file', file: { url: 'https://x.test/b.pdf' }, filename: 'b.pdf' },
    ]);
    expect(toAgentsUserParts(ui)).toEqual([
      { type: 'input_text', text: 'see' },
      { type: 'input_image', image: 'https://x.test/c.jpg' },
      { type: 'input_file', file: 'data:text/csv;base64,YSxi' },
    ]);
  });
});

describe('toUIParts', () => {
  it('gives the AI SDK text and file parts, and keeps its own', () => {
    expect(toUIParts(chat)).toEqual([
      { type: 'text', text: 'look' },
      { type: 'file', mediaType: 'image/*', url: 'https://x.test/a.png' },
      { type: 'file', mediaType: 'audio/mp3', url: 'data:audio/mp3;base64,UklGRg==' },
      {
        type: 'file',
        mediaType: 'application/pdf',
        url: 'data:application/pdf;base64,JVBERi0=',
        filename: 'a.pdf',
      },
    ]);
    expect(toUIParts(agents)).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw0=' },
      {
        type: 'file',
        mediaType: 'application/octet-stream',
        url: 'https://x.test/b.pdf',
        filename: 'b.pdf',
      },
    ]);
    expect(toUIParts(ui)).toEqual(ui);
  });
});
