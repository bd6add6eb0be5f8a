import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localVector } from '../../lib/search/embed.js';

/**
 * An OpenAI-compatible `POST /v1/embeddings` server that also refuses inputs as OpenAI's API does: a batch
 * holding an empty string answers 400 `'$.input' is invalid` (the API reference: input "cannot be an
 * empty string"), and so does one holding an input `refuse` names (too long for the model, say). It can
 * fail (500), answer what is not JSON, or hang, and records every request. Vectors are the built-in
 * hashing embedding, repeated to `dims`.
 */
export interface OpenAiStub {
  url: string;
  requests: { input: string[] }[];
  mode: 'ok' | 'fail' | 'malformed' | 'hang';
  /** Inputs refused with 400 besides the empty string. */
  refuse: (text: string) => boolean;
  dims: number;
  /** Milliseconds before each answer (a slow but healthy service). */
  delayMs: number;
  /** Requests received whose answer is not sent yet. */
  inFlight: number;
  close(): Promise<void>;
}

export async function startOpenAiStub(dims = 64): Promise<OpenAiStub> {
  const hanging = new Set<() => void>();
  const state: OpenAiStub = {
    url: '',
    requests: [],
    mode: 'ok',
    refuse: () => false,
    dims,
    delayMs: 0,
    inFlight: 0,
    close: async () => {
      for (const release of hanging) release();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (req, res) => {
    const body = JSON.parse((await read(req)) || '{}') as { input?: string | string[] };
    const input = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    state.requests.push({ input });
    state.inFlight++;
    try {
      if (state.mode === 'hang') {
        await new Promise<void>((resolve) => hanging.add(resolve));
        res.destroy();
        return;
      }
      if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
      if (state.mode === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"boom"}}');
        return;
      }
      if (state.mode === 'malformed') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data": [ oops');
        return;
      }
      if (input.some((t) => t === '' || state.refuse(t))) {
        const error = { message: "'$.input' is invalid.", type: 'invalid_request_error' };
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
        return;
      }
      const data = input.map((text, index) => {
        const base = localVector(text);
        const embedding = Array.from({ length: state.dims }, (_, k) => base[k % base.length]!);
        return { object: 'embedding', index, embedding };
      });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: 'm' }));
    } finally {
      state.inFlight--;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}

/** A URL nothing listens on (connection refused). */
export async function refusedUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

async function read(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
