import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localVector } from '../../lib/search/embed.js';

/**
 * A small OpenAI-compatible embeddings server for tests: `POST /v1/embeddings` answers deterministic
 * vectors (the built-in hashing embedding, padded or cut to `dims`). It can be told to fail (HTTP 500)
 * or to hang, and it records every request it receives.
 */
export interface EmbeddingsServer {
  url: string;
  requests: { model: string; input: string[]; authorization: string | undefined }[];
  /** `repeat-index`: answers vectors that all claim index 0. */
  mode: 'ok' | 'fail' | 'hang' | 'repeat-index';
  dims: number;
  /** Milliseconds before each answer (a slow but healthy service). */
  delayMs: number;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(dims = 64): Promise<EmbeddingsServer> {
  const hanging = new Set<() => void>();
  const state: EmbeddingsServer = {
    url: '',
    requests: [],
    mode: 'ok',
    dims,
    delayMs: 0,
    close: async () => {
      for (const release of hanging) release();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (req, res) => {
    const body = JSON.parse((await read(req)) || '{}') as {
      model?: string;
      input?: string | string[];
    };
    const input = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    state.requests.push({
      model: body.model ?? '',
      input,
      authorization: req.headers.authorization,
    });
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      res.writeHead(404).end();
      return;
    }
    if (state.mode === 'fail') {
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end('{"error":{"message":"boom"}}');
      return;
    }
    if (state.mode === 'hang') {
      // Never answers; released when the server closes.
      await new Promise<void>((resolve) => hanging.add(resolve));
      res.destroy();
      return;
    }
    if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
    const data = input.map((text, i) => {
      const index = state.mode === 'repeat-index' ? 0 : i;
      const base = localVector(text);
      const embedding = Array.from(
        { length: state.dims },
        (_, k) => base[k % base.length]! * (k < base.length ? 1 : 0.5),
      );
      return { object: 'embedding', index, embedding };
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: 0, total_tokens: 0 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}

async function read(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
