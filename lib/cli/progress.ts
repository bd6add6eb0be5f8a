import type { Out } from './io.js';

/**
 * Progress of an import or export on stderr: a bar redrawn in place when stderr is a terminal (from two
 * items), else a plain count line at every tenth of the way (from eleven items: below that the summary
 * says it all), so logs and CI stay readable.
 */
export class Progress {
  private done = 0;
  private lastDraw = 0;
  private nextLine: number;
  private readonly step: number;
  private readonly tty: boolean;

  constructor(
    private readonly out: Out,
    private readonly total: number,
    private readonly label: string,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.tty = out.isTTY === true;
    this.step = Math.max(1, Math.ceil(total / 10));
    this.nextLine = this.step;
  }

  /** One more item finished; `counts` is the tally so far (`created 3 · unchanged 1`). */
  tick(counts: string): void {
    this.done++;
    if (this.total < 2) return;
    if (this.tty) {
      // At most ~10 redraws a second, and always the last one.
      if (this.done < this.total && this.now() - this.lastDraw < 100) return;
      this.lastDraw = this.now();
      this.out.write(
        `\r${bar(this.done / this.total, 24)} ${this.done}/${this.total} ${this.label}` +
          `${counts ? ` · ${counts}` : ''}\x1b[K`,
      );
      if (this.done === this.total) this.out.write('\n');
    } else if (this.total > 10 && (this.done >= this.nextLine || this.done === this.total)) {
      this.nextLine = (Math.floor(this.done / this.step) + 1) * this.step;
      this.out.write(`${this.label}: ${this.done}/${this.total}${counts ? ` (${counts})` : ''}\n`);
    }
  }

  /** Ends a bar cut short (an error) on its own line. */
  abort(): void {
    if (this.tty && this.total >= 2 && this.done > 0 && this.done < this.total)
      this.out.write('\n');
  }
}

/** `[#########---------------]` for a fraction. */
export function bar(fraction: number, width: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}
