/**
 * Node's fast path for decoding stored and request bodies (imported for its effect by the Node transports
 * and the Node server): a body that is all ASCII (checked with simdutf through `node:buffer`'s isAscii, about
 * 0.5 ms for 10 MB) is the same string in latin1, which Node copies instead of decoding as UTF-8.
 */
import { Buffer, isAscii } from 'node:buffer';
import { useAsciiText } from './bytes.js';

useAsciiText((body) =>
  isAscii(body)
    ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1')
    : undefined,
);
