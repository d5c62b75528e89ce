/**
 * Serializes async work per key (here: per skill name), so two registrations of one name can
 * never take the same version number or interleave their file writes.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(work, work);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      // Forget the key once nothing else queued behind us, so the map does not grow forever.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
