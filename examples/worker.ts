// A Cloudflare Worker that keeps a visitor's notes in Satchel through the client (fetch only, ~2.5 KB
// gzip). Vars: SATCHEL_URL; secret: SATCHEL_TOKEN.
//   POST /notes/<id>  body: text     appends the text as a user message (the session is made on first use)
//   GET  /notes/<id>                 the notes, as JSON
import { SatchelApiError, SatchelClient } from 'satchel';

export interface Env {
  SATCHEL_URL: string;
  SATCHEL_TOKEN?: string;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const client = new SatchelClient({ url: env.SATCHEL_URL, token: env.SATCHEL_TOKEN });
    const id = new URL(request.url).pathname.match(/^\/notes\/([A-Za-z0-9._-]{1,128})$/)?.[1];
    if (!id) return new Response('not found', { status: 404 });
    if (request.method === 'POST') {
      const message = { role: 'user' as const, content: await request.text() };
      try {
        const receipt = await client.append(id, { messages: [message] });
        return Response.json(receipt);
      } catch (err) {
        if (!(SatchelApiError.is(err) && err.status === 404)) throw err;
        const { session } = await client.create({ id, task: 'Notes', messages: [message] });
        return Response.json({ id: session.id, revision: session.revision }, { status: 201 });
      }
    }
    try {
      const { session } = await client.get(id);
      return Response.json(session.messages.map((m) => m.content));
    } catch (err) {
      if (SatchelApiError.is(err)) return new Response(err.detail, { status: err.status });
      throw err;
    }
  },
};
