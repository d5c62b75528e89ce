/**
 * At most `size` pieces of work at once; the rest wait in the order they came. Used where work is
 * heavy on the host whoever asks for it (environment builds: docs/packages.md#limits).
 */
export class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots must be a positive integer, got ${size}`);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await work();
    } finally {
      // The slot passes to the next waiter directly, so a newcomer cannot overtake it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
