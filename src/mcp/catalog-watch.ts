import { GetCatalogRequest } from "../gen/skillengine/v1/composition.js";
import { allSkills, type CallScope, type EngineClient, wholeCatalog } from "./engine-client.js";
import { resourcesFingerprint, toolsFingerprint } from "./skill-tools.js";

/** What a session compares to decide on list_changed (skill-tools.ts). */
export interface CatalogFingerprints {
  readonly tools: string;
  readonly resources: string;
}

/** What a change poll reads of the service. */
export interface CatalogReader {
  /** GetCatalog's etag for the caller; "" from a service that keeps none (every poll then reads the lists). */
  etag(scope: CallScope): Promise<string>;
  /** The fingerprints of the caller's lists, read whole. */
  fingerprints(scope: CallScope): Promise<CatalogFingerprints>;
}

/**
 * Through the engine client: the etag from a one-entry page of GetCatalog; the fingerprints from every page
 * of GetCatalog and of ListSkills (which skills are switched off: tools/list leaves them out).
 */
export function catalogReader(engine: EngineClient): CatalogReader {
  return {
    etag: async (scope) => (await engine.call(engine.skills.getCatalog, GetCatalogRequest.fromPartial({ pageSize: 1 }), scope)).etag,
    fingerprints: async (scope) => {
      const [catalog, skills] = await Promise.all([wholeCatalog(engine, scope), allSkills(engine, scope)]);
      const disabled = new Set(skills.filter((s) => s.disabled).map((s) => s.name));
      return { tools: toolsFingerprint(catalog, disabled), resources: resourcesFingerprint(catalog) };
    },
  };
}

export interface CatalogWatchOptions {
  /** How often each caller's catalog is looked at; 0: never. */
  readonly pollMs: number;
  /** Where failed polls are told (they are tried again at the next interval). */
  readonly onError?: (error: unknown) => void;
}

type Listener = (fingerprints: CatalogFingerprints) => void;

/**
 * The change polls of MCP sessions (docs/mcp.md#change-notifications), one per caller's credentials
 * however many sessions that caller has open: every `pollMs` it asks for the catalog's etag (one entry),
 * and reads the caller's lists whole only when the etag moved. Each subscriber is told the fingerprints of every
 * catalog read and compares them with the ones it saw last.
 */
export class CatalogWatch {
  private readonly scopes = new Map<string, ScopeWatch>();

  constructor(
    private readonly reader: CatalogReader,
    private readonly options: CatalogWatchOptions,
  ) {}

  /**
   * Watches the catalog of the caller `authorization` names. `listener` gets the fingerprints of the
   * last read at once, when there was one, then those of each new read. Returns what ends the watch.
   */
  subscribe(authorization: string | undefined, listener: Listener): () => void {
    if (this.options.pollMs <= 0) return () => undefined;
    // Without tokens every caller is the local agent: one key for all of them.
    const key = authorization ?? "";
    let scope = this.scopes.get(key);
    if (!scope) {
      scope = new ScopeWatch(this.reader, { authorization }, this.options);
      this.scopes.set(key, scope);
    }
    scope.add(listener);
    const watched = scope;
    return () => {
      if (watched.remove(listener) && this.scopes.get(key) === watched) this.scopes.delete(key);
    };
  }

  /** Callers watched now (for tests and the log). */
  get size(): number {
    return this.scopes.size;
  }

  /** Stops every poll. */
  close(): void {
    for (const scope of this.scopes.values()) scope.stop();
    this.scopes.clear();
  }
}

/** One caller's poll and its subscribers. */
class ScopeWatch {
  private readonly listeners = new Set<Listener>();
  private timer: NodeJS.Timeout | undefined;
  private last: { readonly etag: string; readonly fingerprints: CatalogFingerprints } | undefined;
  private busy = false;

  constructor(
    private readonly reader: CatalogReader,
    private readonly scope: CallScope,
    private readonly options: CatalogWatchOptions,
  ) {}

  add(listener: Listener): void {
    this.listeners.add(listener);
    if (this.last) listener(this.last.fingerprints);
    if (this.timer) return;
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.options.pollMs);
    this.timer.unref();
  }

  /** Whether that was the last listener (the poll has then stopped). */
  remove(listener: Listener): boolean {
    this.listeners.delete(listener);
    if (this.listeners.size > 0) return false;
    this.stop();
    return true;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      // The etag is read before the lists: a change during the read moves the next etag, so they are read again.
      const etag = await this.reader.etag(this.scope);
      if (this.last !== undefined && etag !== "" && etag === this.last.etag) return;
      const fingerprints = await this.reader.fingerprints(this.scope);
      this.last = { etag, fingerprints };
      if (!this.timer) return;
      for (const listener of [...this.listeners]) listener(fingerprints);
    } catch (error) {
      this.options.onError?.(error);
    } finally {
      this.busy = false;
    }
  }
}
