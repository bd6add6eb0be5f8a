import type { SatchelClient } from '../client/client.js';
import type { Options, Parsed } from './args.js';
import type { CliIO } from './io.js';

/** One CLI command: its words (`session list`), its help, its options, and what it does. */
export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** `satchel <name> …` usage lines, then a description: what `--help` prints. */
  help: string;
  options: Options;
  run(ctx: CommandContext): Promise<number>;
}

export interface CommandContext {
  io: CliIO;
  args: Parsed;
  /** `--json`: machine-readable output on stdout. */
  json: boolean;
  /** The client for SATCHEL_URL / SATCHEL_TOKEN (made on first use: `--help` needs none). */
  client(): SatchelClient;
  /** The server's time, as its answers to `client()` tell it (this machine's until one does). */
  serverNow(): number;
  /** Terminal width for tables: the terminal's columns, or 100 when stdout is not a terminal. */
  width: number;
  print(text: string): void;
  printJson(value: unknown): void;
}
