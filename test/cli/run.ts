import { main } from '../../lib/cli/main.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in this process, as `satchel <args>` would with this environment, capturing its output;
 * `fetch` sends its requests elsewhere (an in-process app's `fetch`).
 */
export async function satchel(
  args: string[],
  env: Record<string, string | undefined>,
  options: { tty?: boolean; columns?: number; fetch?: typeof fetch } = {},
): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: {
      write: (s: string) => void (stdout += s),
      isTTY: options.tty ?? false,
      columns: options.columns ?? 120,
    },
    stderr: { write: (s: string) => void (stderr += s), isTTY: options.tty ?? false },
    env,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return { code, stdout, stderr };
}
