import type { Logger } from "pino";
import type { CanonicalStore, MirrorEntry } from "./canonical-store.js";
import type { SkillRecord, SkillRegistry } from "./skill-registry.js";

/**
 * Keeps `skills_registry.json` in step with the registry. Registrations flush at once; the
 * counter updates of every invocation are coalesced, so the hot path pays no fsync for them.
 */
export class MirrorWriter {
  private pending: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: SkillRegistry,
    private readonly store: CanonicalStore,
    private readonly logger: Logger,
    private readonly coalesceMs = 1_000,
  ) {}

  /** Rewrites the mirror now (after any write already in progress). */
  async flush(): Promise<void> {
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = undefined;
    }
    const next = this.writing.then(() => this.store.writeMirror(this.registry.list().map(toMirrorEntry)));
    this.writing = next.catch((error: unknown) => {
      this.logger.error({ err: error }, "could not rewrite skills_registry.json");
    });
    await next;
  }

  /** Rewrites the mirror soon; many calls within the window cost one write. */
  schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.flush().catch(() => undefined);
    }, this.coalesceMs);
    this.pending.unref();
  }

  async close(): Promise<void> {
    if (this.pending) await this.flush().catch(() => undefined);
    await this.writing;
  }
}

export function toMirrorEntry(record: SkillRecord): MirrorEntry {
  let schema: unknown = record.parametersSchema;
  try {
    schema = JSON.parse(record.parametersSchema);
  } catch {
    // Kept as text: the registry accepted it, so this only happens with a hand-edited database.
  }
  return {
    name: record.name,
    description: record.description,
    parameters_schema: schema,
    status: record.status,
    version: record.version,
    content_hash: record.contentHash,
    usage_count: record.usageCount,
    failure_count: record.failureCount,
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
    last_invoked_at: record.lastInvokedAt?.toISOString() ?? null,
  };
}
