import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Hono } from 'hono';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as client from '../../lib/ui/client.js';
import { uiRoutes } from '../../lib/ui/index.js';

// The session browser's routes on their own (no server, no browser): what they serve and how big it is.

const ui = uiRoutes();
const get = (path: string) => ui.fetch(new Request(`http://satchel.test${path}`));

describe('ui routes', () => {
  it('GET / redirects to /ui, and can be left out', async () => {
    const res = await get('/');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/ui');
    const bare = uiRoutes({ redirectRoot: false });
    expect((await bare.fetch(new Request('http://satchel.test/'))).status).toBe(404);
    const app = new Hono().route('/', uiRoutes());
    expect((await app.fetch(new Request('http://satchel.test/ui'))).status).toBe(200);
  });

  it('the whole page (HTML, script, stylesheet, icon) is under 60 KB gzip', async () => {
    const html = await (await get('/ui')).text();
    const session = await (await get('/ui/sessions/abc')).text();
    // Named relative to the page (review s52c: Lambda behind a named stage serves /ui at /prod/ui).
    const assets = [...html.matchAll(/(?:src|href)="\.(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/ui\/app\.js\?v=[0-9a-f]{8}$/),
        expect.stringMatching(/^\/ui\/app\.css\?v=[0-9a-f]{8}$/),
        '/ui/app.svg',
      ]),
    );
    let gzip = gzipSync(html).byteLength + gzipSync(session).byteLength;
    for (const a of assets) {
      const res = await get(a);
      expect(res.status).toBe(200);
      gzip += gzipSync(Buffer.from(await res.arrayBuffer())).byteLength;
    }
    expect(gzip).toBeLessThan(60_000);
  });

  it('versioned assets are cached for good; the script is strict, self-contained and parses', async () => {
    const html = await (await get('/ui')).text();
    const src = /src="\.(\/ui\/app\.js\?v=[0-9a-f]+)"/.exec(html)![1]!;
    const res = await get(src);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await get('/ui/app.js?v=stale')).headers.get('cache-control')).toBe('no-cache');
    const script = await res.text();
    expect(script.startsWith('"use strict";')).toBe(true);
    expect(() => new Function(script)).not.toThrow();
    // Every function of lib/ui/client.ts is in it, once.
    for (const [name, fn] of Object.entries(client)) {
      expect(typeof fn, name).toBe('function');
      expect(script.split((fn as () => void).toString()).length - 1, name).toBe(1);
    }
    // The client builds the DOM from text: no innerHTML, outerHTML, insertAdjacentHTML, document.write or eval.
    expect(script).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
    );
  });

  it('lib/ui/client.ts holds only exported functions and types, and imports nothing', () => {
    // The served script is the functions' own text: an import or a module-level value would be missing
    // in the browser (lib/ui/index.ts, clientScript).
    const file = new URL('../../lib/ui/client.ts', import.meta.url);
    const source = ts.createSourceFile(
      'client.ts',
      readFileSync(file, 'utf8'),
      ts.ScriptTarget.Latest,
    );
    const stray = source.statements.filter((st) => {
      if (ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) return false;
      const exported =
        ts.isFunctionDeclaration(st) &&
        st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      return !exported;
    });
    expect(stray.map((st) => st.getText(source).slice(0, 80))).toEqual([]);
  });
});
