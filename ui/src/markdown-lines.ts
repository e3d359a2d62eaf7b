// The source lines a block parser reads, remembering how far it looked.
// A streamed block is finished when its parse read only complete lines and
// never asked whether the text goes on: then no later text can change it.

export class Lines {
  /** The highest line index read so far (-1 before any read). */
  furthest = -1;
  /** Whether the parser asked for a line past the end. */
  reachedEnd = false;
  private readonly lines: readonly string[];

  constructor(lines: readonly string[]) {
    this.lines = lines;
  }

  /** Whether line `i` exists; asking past the end makes the parse depend on where the text stops. */
  has(i: number): boolean {
    if (i < this.lines.length) return true;
    this.reachedEnd = true;
    return false;
  }

  at(i: number): string {
    if (i > this.furthest) this.furthest = i;
    return this.lines[i];
  }

  /** Starts a fresh record of what the next parse reads. */
  resetLook(): void {
    this.furthest = -1;
    this.reachedEnd = false;
  }
}
