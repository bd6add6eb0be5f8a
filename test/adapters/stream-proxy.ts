import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Streaming in front of the scripted chat server (test/support/chat-server.ts answers whole JSON only): a
 * request with `stream: true` is forwarded without it, and the answer is sent back as chat completion
 * chunks over server-sent events, as OpenAI streams them. Other requests pass through unchanged.
 */
export async function startStreamProxy(
  upstream: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const stream = body.stream === true;
      const answer = await fetch(upstream + req.url, {
        method: req.method ?? 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, stream: false, stream_options: undefined }),
      });
      const text = await answer.text();
      if (!stream || !answer.ok) {
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
        return;
      }
      const completion = JSON.parse(text);
      const choice = completion.choices[0];
      const base = { id: completion.id, object: 'chat.completion.chunk', model: completion.model };
      const send = (delta: unknown, finish: string | null) =>
        res.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      send({ role: 'assistant', content: '' }, null);
      if (choice.message.content) {
        // Two pieces, so the client really assembles a stream.
        const content: string = choice.message.content;
        const half = Math.ceil(content.length / 2);
        send({ content: content.slice(0, half) }, null);
        send({ content: content.slice(half) }, null);
      }
      (choice.message.tool_calls ?? []).forEach((call: unknown, index: number) =>
        send({ tool_calls: [{ index, ...(call as object) }] }, null),
      );
      send({}, choice.finish_reason);
      res.end('data: [DONE]\n\n');
    })().catch((err) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
