import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build.js';

/**
 * Every shell example in README.md and docs/*.md, run as printed against a real server, so no example can
 * rot. A fenced ```sh or ```bash block is one example; it must exit 0 under `bash -e -o pipefail`.
 *
 * - A block whose last command ends in `npm start` starts a server: it runs in the background (the previous
 *   one is stopped first) and the next blocks talk to it once /v1/health answers. A file's first other
 *   block, with no server yet, gets a plain `npm start`.
 * - Blocks run in the checkout (as `npm start` and `npx satchel` need). Each file gets its own temporary
 *   folder as HOME (so `~/.odek` is a scratch folder) and as the default SATCHEL_DATA_DIR; blocks that
 *   would write into the checkout itself are marked not-run.
 * - The docs say http://localhost:8787; the test uses a free port and rewrites the address in each block,
 *   and sets PORT and SATCHEL_URL to match.
 * - A block right after a `<!-- not-run: why -->` line is not run (deploying, installing, the wrangler dev
 *   server); the reason is the line itself.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const BLOCK_TIMEOUT_MS = 90_000;
const SERVER_START_TIMEOUT_MS = 45_000;

interface Block {
  file: string;
  line: number;
  code: string;
  skip?: string;
  server: boolean;
}

/** The fenced sh/bash blocks of a markdown file, with the not-run marker of each. */
export function shellBlocks(file: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(sh|bash)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker =
      before >= 0 ? /^<!--\s*not-run:\s*(.+?)\s*-->$/.exec(lines[before]!.trim()) : null;
    const code = body.join('\n');
    const commands = code
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l && !l.startsWith('#'));
    blocks.push({
      file,
      line: start + 1,
      code,
      server: /(^|\s)npm start$/.test(commands.at(-1) ?? ''),
      ...(marker ? { skip: marker[1]! } : {}),
    });
  }
  return blocks;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBlock(script: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${BLOCK_TIMEOUT_MS} ms]`;
      killGroup(child);
    }, BLOCK_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Stops a block and everything it started (npm → tsx → node): it leads its own process group. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function groupAlive(child: ChildProcess): boolean {
  try {
    if (child.pid) process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
}

class DocServer {
  private output = '';
  private exited = false;
  readonly child: ChildProcess;

  constructor(script: string, env: NodeJS.ProcessEnv) {
    this.child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d) => (this.output += d));
    this.child.stderr!.on('data', (d) => (this.output += d));
    this.child.on('exit', () => (this.exited = true));
  }

  async ready(url: string): Promise<void> {
    const deadline = Date.now() + SERVER_START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`the server block exited before answering:\n${this.output}`);
      try {
        // Its own line too: a port another test's server took meanwhile (the free port is picked before
        // the server starts) answers the health check as well (seen once in a full run).
        const res = await fetch(`${url}/v1/health`);
        const port = new URL(url).port;
        if (res.ok && new RegExp(`listening on http://[^\\s:]+:${port}\\b`).test(this.output))
          return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(
      `the server did not answer within ${SERVER_START_TIMEOUT_MS} ms:\n${this.output}`,
    );
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    killGroup(this.child);
    const timer = setTimeout(() => killGroup(this.child, 'SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
    // The shell exits first; the server in its group finishes its answered writes' records, then exits.
    for (let i = 0; i < 60 && groupAlive(this.child); i++)
      await new Promise((r) => setTimeout(r, 250));
    killGroup(this.child, 'SIGKILL');
  }
}

/** Secrets the examples send to show that they are redacted (none is a documented example value). */
const DEMO_SECRETS = [
  'Xq8vR3kP9mLw2TzB7nYc4HdF6sJg1QaE5uVi0oKt',
  'sk-proj-Xk2vQ9mN4pL7wR1tY6uZ3aB8cD5eF0gH',
];

/** Every file under `dir` (none when it does not exist). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

beforeAll(async () => {
  // `npx satchel` runs dist/cli.js: build it from the code under test.
  await buildCli();
});

for (const file of FILES) {
  const blocks = shellBlocks(file, readFileSync(join(ROOT, file), 'utf8'));
  if (blocks.length === 0) continue;

  describe(file, () => {
    let work: string;
    let port: number;
    let server: DocServer | undefined;
    let env: NodeJS.ProcessEnv;
    const url = () => `http://127.0.0.1:${port}`;
    const localize = (code: string) =>
      code.replace(/(https?:\/\/)?(localhost|127\.0\.0\.1):8787/g, url());

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), 'satchel-docs-'));
      mkdirSync(join(work, 'home'));
      port = await freePort();
      const {
        SATCHEL_TOKENS,
        SATCHEL_TOKEN,
        SATCHEL_HOOKS,
        SATCHEL_MODEL_URL,
        SATCHEL_MODEL,
        ...base
      } = process.env;
      void [SATCHEL_TOKENS, SATCHEL_TOKEN, SATCHEL_HOOKS, SATCHEL_MODEL_URL, SATCHEL_MODEL];
      env = {
        ...base,
        HOME: join(work, 'home'),
        PORT: String(port),
        SATCHEL_URL: url(),
        SATCHEL_DATA_DIR: join(work, 'data'),
        SATCHEL_LOG: 'off',
        // npm keeps its cache under HOME: keep using the real one (no downloads happen here).
        npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? work, '.npm'),
        npm_config_update_notifier: 'false',
      };
    });
    afterAll(async () => {
      await server?.stop();
      // The server may still be finishing answered writes' records after the npm wrapper has exited.
      rmSync(work, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
    });

    const startServer = async (code: string) => {
      await server?.stop();
      // A fresh folder, as `mktemp -d` would give, that the check for demo secrets below can read.
      const data = `SATCHEL_DATA_DIR=${JSON.stringify(join(work, 'data'))}`;
      // The free port is picked before a server takes it: another test's server may take it first (CI11: "port
      // … is in use", and every later block of the file failed). Then another port, for this block and the rest.
      for (let tries = 1; ; tries++) {
        server = new DocServer(
          localize(code).replace('SATCHEL_DATA_DIR="$(mktemp -d)"', data),
          env,
        );
        try {
          return await server.ready(url());
        } catch (err) {
          if (tries >= 3 || !/is in use/.test(String(err))) throw err;
          port = await freePort();
          Object.assign(env, { PORT: String(port), SATCHEL_URL: url() });
        }
      }
    };

    for (const block of blocks) {
      const title = `${file}:${block.line}${block.server ? ' (server)' : ''}`;
      if (block.skip) {
        it.skip(`${title}: not run: ${block.skip}`, () => undefined);
        continue;
      }
      it(
        title,
        async () => {
          if (block.server) return startServer(block.code);
          if (!server) await startServer('npm start');
          const ran = await runBlock(localize(block.code), env);
          if (ran.code !== 0) {
            throw new Error(
              `${title} exited ${ran.code}\n--- block ---\n${block.code}\n--- stdout ---\n${ran.stdout}\n--- stderr ---\n${ran.stderr}`,
            );
          }
          expect(ran.code).toBe(0);
          // SATCHEL_DOCS_SHOW=1 prints each block's output, to compare with what the docs show.
          if (process.env.SATCHEL_DOCS_SHOW)
            console.log(`--- ${title}\n${ran.stdout}${ran.stderr}`);
        },
        BLOCK_TIMEOUT_MS + SERVER_START_TIMEOUT_MS,
      );
    }

    // The keys the examples send to show redaction: once the blocks have run (and the server has
    // stopped, its records written), no stored file holds one.
    const sent = DEMO_SECRETS.filter((k) => blocks.some((b) => b.code.includes(k)));
    if (sent.length > 0) {
      it(`${file}: no secret an example sends is stored`, async () => {
        await server?.stop();
        server = undefined;
        const files = filesUnder(join(work, 'data'));
        expect(files.length).toBeGreaterThan(0);
        for (const path of files) {
          const bytes = readFileSync(path, 'latin1');
          for (const key of sent) expect(bytes.includes(key), `${key} in ${path}`).toBe(false);
        }
      });
    }
  });
}
