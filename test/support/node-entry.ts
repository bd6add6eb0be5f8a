import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** The repository root, where `npm start` runs. */
export const root = join(import.meta.dirname, '..', '..');

/**
 * Starts functions/node.ts as `npm start` runs it, in its own process, over a clean environment: PATH,
 * HOME, PORT=0 (any free port), SATCHEL_LOG=json and SATCHEL_DATA_DIR a fresh temp folder, with `env` on
 * top (so a test can set its own SATCHEL_LOG or data folder). stdin is closed; stdout and stderr are pipes.
 */
export function spawnEntry(
  env: Record<string, string> = {},
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, ['--import', 'tsx', 'functions/node.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME!,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      SATCHEL_LOG: 'json',
      PORT: '0',
      ...(env.SATCHEL_DATA_DIR
        ? {}
        : { SATCHEL_DATA_DIR: mkdtempSync(join(tmpdir(), 'satchel-entry-')) }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The URL in a start banner, `listening on http://127.0.0.1:8787` or `http://[::1]:8787`. */
const LISTENING = /listening on (http:\/\/(?:\[[\da-fA-F:.%]+\]|[\w.-]+):\d+)/;

/**
 * Resolves with the URL the server's start banner names; rejects with everything it printed when it exits
 * (or fails to spawn) first, or when no banner comes within `timeoutMs`.
 */
export function listeningUrl(
  child: ChildProcess & { stdout: Readable; stderr: Readable },
  timeoutMs = 30_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const settle = (finish: () => void) => {
      clearTimeout(timer);
      child.stdout.off('data', onStdout);
      child.stderr.off('data', onStderr);
      child.off('exit', onExit);
      child.off('error', onError);
      finish();
    };
    const onStdout = (d: Buffer) => {
      stdout += d.toString();
      const m = LISTENING.exec(stdout);
      if (m) settle(() => resolve(m[1]!));
    };
    const onStderr = (d: Buffer) => void (stderr += d.toString());
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      settle(() => reject(new Error(`the server exited ${code ?? signal}: ${stdout}${stderr}`)));
    const onError = (err: Error) => settle(() => reject(err));
    const timer = setTimeout(
      () => settle(() => reject(new Error(`the server did not start: ${stdout}${stderr}`))),
      timeoutMs,
    );
    child.stdout.on('data', onStdout);
    child.stderr.on('data', onStderr);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}

/** How a run of the entry ended: its exit code and everything it printed. */
export interface EntryRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the entry with `env` (spawnEntry's clean base) until it exits, or until `whileUp` returns (SIGTERM). */
export function runEntry(
  env: Record<string, string>,
  whileUp?: (url: string) => Promise<void>,
): Promise<EntryRun> {
  return new Promise<EntryRun>((resolve, reject) => {
    const child = spawnEntry(env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => void (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
    if (whileUp)
      listeningUrl(child).then(
        (url) =>
          whileUp(url).then(
            () => child.kill('SIGTERM'),
            (err: unknown) => {
              child.kill('SIGKILL');
              reject(err);
            },
          ),
        () => undefined, // exited before it listened: the run says why
      );
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
