import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { SatchelClient } from '../../lib/client/index.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { openTestS3 } from '../support/s3.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

const root = resolve(__dirname, '..', '..');
const exec = promisify(execFile);

/** A Satchel server on the run's radosgw (a fresh prefix), a scripted chat model, and a counting client. */
export interface Stack {
  server: RunningServer;
  objects: ObjectStore;
  chat: ChatServer;
  client: SatchelClient;
  /** Satchel requests the client made, as `METHOD /path`. */
  requests: string[];
  close(): Promise<void>;
}

export async function startStack(label: string): Promise<Stack> {
  const objects = openTestS3(label);
  const server = await startSatchelServer({ objects });
  const chat = await startChatServer();
  const requests: string[] = [];
  const client = new SatchelClient({
    url: server.url,
    fetch: (input, init) => {
      requests.push(`${init?.method ?? 'GET'} ${String(input).slice(server.url.length)}`);
      return fetch(input, init);
    },
  });
  return {
    server,
    objects,
    chat,
    client,
    requests,
    close: async () => {
      await chat.close();
      await server.close();
    },
  };
}

/** Every stored object under the store's prefix, as text (sessions, manifest, indexes, audit). */
export async function storedText(objects: ObjectStore): Promise<string> {
  const texts: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await objects.list('', cursor ? { cursor } : {});
    for (const { key } of page.objects) {
      const object = await objects.get(key);
      if (object) texts.push(`${key}\n${new TextDecoder().decode(object.body)}`);
    }
    cursor = page.cursor;
  } while (cursor);
  return texts.join('\n');
}

/** Runs test/adapters/child.ts in a fresh Node process and parses what it prints. */
export async function inChild<T = unknown>(...args: string[]): Promise<T> {
  const { stdout } = await exec(
    process.execPath,
    ['--import', 'tsx', resolve(__dirname, 'child.ts'), ...args],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as T;
}
