import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../lib/http/app.js';
import { createNodeServer } from '../../lib/http/node-server.js';
import { loadConfig, type Env } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { captureLogs } from '../support/logs.js';

/** A real app on a local folder, on a chosen port (0: any), with open mode allowed or not (Node vs Workers). */
export async function serve(
  opts: { env?: Env; port?: number; dir?: string; allowOpen?: boolean } = {},
) {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'satchel-review-ui-'));
  const config = await loadConfig({ ...opts.env }, 'local');
  const { app, background } = createApp({
    config,
    objects: new LocalStore(dir),
    allowOpen: opts.allowOpen ?? true,
    log: captureLogs(),
  });
  const server = createNodeServer(app.fetch, '127.0.0.1');
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    close: async (keepDir = false) => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await background.drain();
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
