import type { Logger } from "pino";
import type { SandboxEnvironment } from "../sandbox-runner.js";
import { type PoolMember, REFILL_AFTER_TAKE_MS, WarmPool } from "./warm-pool.js";

export interface EnvironmentPoolsOptions<T extends PoolMember> {
  /** Environments with a pool at once; a new one makes room by removing the least recently used. */
  readonly maxPools: number;
  /** Containers each environment's pool keeps waiting. */
  readonly size: number;
  /**
   * An idle container older than this is replaced, as in the plain pool; a pool whose environment
   * has had no run for this long is removed with its containers.
   */
  readonly idleMs: number;
  /** A started container with `environment` mounted, waiting for one job. */
  readonly create: (environment: SandboxEnvironment) => Promise<T>;
  /** Removes a container that will never run a job. */
  readonly discard: (member: T) => Promise<void>;
  /** As the plain pool's: no refill starts while it says so. */
  readonly paused?: () => boolean;
  readonly logger: Logger;
}

interface EnvironmentPool<T extends PoolMember> {
  readonly environment: SandboxEnvironment;
  readonly pool: WarmPool<T>;
  /** Removes the pool once its environment has had no run for the idle lifetime; refreshed by each take. */
  readonly unused: NodeJS.Timeout;
  /** Its first fill, if the owner has not resumed it sooner. */
  readonly firstFill: NodeJS.Timeout;
}

/**
 * Warm pools for runs that need an environment of packages (docs/packages.md#warm-containers-of-an-environment): one
 * {@link WarmPool} per environment, whose containers have that environment mounted and serve its
 * runs only. A pool is made when a run of its environment finds none (that run starts cold) and
 * fills once that run has answered; at most `maxPools` exist, the least recently used removed
 * first, and one whose environment goes unused for the idle lifetime is removed too, so an
 * environment that is no longer run holds no container.
 */
export class EnvironmentPools<T extends PoolMember> {
  /** In order of use: a take moves its pool to the end, so the first is the least recently used. */
  private readonly pools = new Map<string, EnvironmentPool<T>>();
  private readonly closing = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly options: EnvironmentPoolsOptions<T>) {
    if (options.maxPools < 1) throw new RangeError("environment pools need room for at least one pool");
  }

  /** Containers waiting in every environment's pool. */
  get idleCount(): number {
    let idle = 0;
    for (const { pool } of this.pools.values()) idle += pool.idleCount;
    return idle;
  }

  /** Environments that have a pool, least recently used first. */
  get environments(): string[] {
    return [...this.pools.keys()];
  }

  /** Containers waiting in one environment's pool. */
  idleCountOf(environmentId: string): number {
    return this.pools.get(environmentId)?.pool.idleCount ?? 0;
  }

  /**
   * A waiting container with `environment` mounted, now owned by the caller; undefined when none is
   * ready, and then the environment gets a pool if it had none (evicting the least recently used).
   */
  take(environment: SandboxEnvironment): T | undefined {
    if (this.closed) return undefined;
    const found = this.pools.get(environment.id);
    if (found && found.environment.hostPath !== environment.hostPath) {
      // Same id, another directory: the containers mount the other one, so none may serve this run.
      this.remove(environment.id, "its environment's directory moved");
    } else if (found) {
      this.pools.delete(environment.id);
      this.pools.set(environment.id, found);
      found.unused.refresh();
      return found.pool.take();
    }
    while (this.pools.size >= this.options.maxPools) {
      const leastRecentlyUsed = this.pools.keys().next().value as string;
      this.remove(leastRecentlyUsed, "least recently used environment pool, making room");
    }
    this.add(environment);
    return undefined;
  }

  /** Removes one environment's pool and its waiting containers (its directory changed, for instance). */
  remove(environmentId: string, why: string): void {
    const entry = this.pools.get(environmentId);
    if (!entry) return;
    this.pools.delete(environmentId);
    clearTimeout(entry.unused);
    clearTimeout(entry.firstFill);
    this.options.logger.debug({ environmentId, why, idle: entry.pool.idleCount }, "removing an environment's warm pool");
    const closing = entry.pool.close();
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }

  /** As {@link WarmPool.replaceIdle}, for every environment's pool. */
  replaceIdle(why: string): void {
    for (const { pool } of this.pools.values()) pool.replaceIdle(why);
  }

  /** As {@link WarmPool.resume}, for every environment's pool. */
  resume(): void {
    for (const { pool } of this.pools.values()) pool.resume();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const environmentId of [...this.pools.keys()]) this.remove(environmentId, "shutting down");
    await Promise.allSettled([...this.closing]);
  }

  private add(environment: SandboxEnvironment): void {
    const pool = new WarmPool<T>({
      size: this.options.size,
      idleMs: this.options.idleMs,
      create: () => this.options.create(environment),
      discard: this.options.discard,
      ...(this.options.paused ? { paused: this.options.paused } : {}),
      logger: this.options.logger.child({ environmentId: environment.id }),
    });
    const unused = setTimeout(() => this.remove(environment.id, "no run of its environment for the idle lifetime"), this.options.idleMs);
    unused.unref();
    // Not filled now: the run that found no pool is about to start a container of its own. Its owner
    // resumes every pool once that run has answered (docs/performance.md#after-the-reply), as after a take.
    const firstFill = setTimeout(() => pool.resume(), REFILL_AFTER_TAKE_MS);
    firstFill.unref();
    this.pools.set(environment.id, { environment, pool, unused, firstFill });
  }
}
