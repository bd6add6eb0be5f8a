import { createNodeServer } from '../../lib/http/node-server.js';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Env } from '../../lib/server/config.js';
import { createApp } from '../../lib/http/app.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { captureLogs, type CapturedLogs } from './logs.js';

export interface RunningServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  dir: string;
  /** The server's log lines (printed only when a test fails). */
  logs: CapturedLogs;
  /** Stops the server; with `keepDir`, its folder stays for a server started again on it. */
  close(keepDir?: boolean): Promise<void>;
  /** Waits for the server's background work (log, audit and index records) to finish. */
  drain(): Promise<void>;
}

/**
 * A real Satchel server on a loopback port (the app of functions/node.ts, on a temporary local folder
 * unless `objects` is given), for tests that talk HTTP to it: the CLI, the client, the browser. `port`
 * and `dir` start it again where one was stopped with `close(true)` (a restart, new tokens).
 */
export async function startSatchelServer(
  options: {
    env?: Env;
    objects?: ObjectStore;
    port?: number;
    dir?: string;
    /** ServiceOptions.cleanupBatch, as a Worker sets it. */
    cleanupBatch?: number;
  } = {},
): Promise<RunningServer> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'satchel-server-'));
  const config = await loadConfig({ ...options.env }, 'local');
  const objects = options.objects ?? new LocalStore(dir);
  const logs = captureLogs();
  const { app, background } = createApp({
    config,
    objects,
    allowOpen: true,
    log: logs,
    ...(options.cleanupBatch ? { cleanupBatch: options.cleanupBatch } : {}),
  });
  const server = createNodeServer(app.fetch, '127.0.0.1');
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    logs,
    drain: () => background.drain(),
    close: async (keepDir = false) => {
      await new Promise<void>((resolve) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      });
      await background.drain();
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
