/**
 * Serializes async work per key: work under one key runs one at a time, in the order it came;
 * different keys run side by side. The control plane keys by skill name (two registrations of one
 * name never take the same version number or interleave their file writes); learning by agent and
 * session key (a session recorded twice at once counts its patterns once).
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
